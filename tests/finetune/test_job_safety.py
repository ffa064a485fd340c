"""A job's output folder kept honest: one stage at a time (an OS lock), folders that cannot be written
named in one line, checkpoints that do not match the config or data refused, half-written checkpoints
skipped, and no stage run on an input older than the one before it. No training run: checkpoints and
adapters are written by hand."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from finetune.cli import run
from finetune.config import FinetuneError
from finetune.dataprep import prepare

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

ROW = {"prompt": [{"role": "user", "content": "Stage IV NSCLC, EGFR exon 19 deletion. Next?"}],
       "completion": [{"role": "assistant", "content": "Osimertinib is described."}]}


def _console() -> Console:
    return Console(file=None, stderr=False, width=400)


def _args(stage: str, config: Path, **kw) -> argparse.Namespace:
    return argparse.Namespace(finetune_command=stage, job_config=str(config), json=False, no_progress=True,
                              restart=False, **kw)


def _prepared(cfg, rows: int = 3) -> None:
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    (cfg.data_dir / "train.jsonl").write_text((json.dumps(ROW) + "\n") * rows, encoding="utf-8")
    (cfg.data_dir / "eval.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")


def _checkpoint(cfg, step: int, *, r: int = 8, state: bool = True) -> Path:
    d = cfg.checkpoints_dir / f"checkpoint-{step}"
    d.mkdir(parents=True)
    (d / "adapter_config.json").write_text(json.dumps({"r": r, "lora_alpha": 16, "lora_dropout": 0.05}))
    if state:
        (d / "trainer_state.json").write_text(json.dumps({"global_step": step, "epoch": 1.0}))
    return d


def _adapter(cfg) -> Path:
    from safetensors.torch import save_file

    cfg.adapter_dir.mkdir(parents=True, exist_ok=True)
    (cfg.adapter_dir / "adapter_config.json").write_text("{}")
    save_file({"w": torch.zeros(2)}, str(cfg.adapter_dir / "adapter_model.safetensors"))
    return cfg.adapter_dir / "adapter_model.safetensors"


def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


# -- prepare: records and files that are not what they should be ---------------------------------------------

def test_a_lone_surrogate_escape_is_a_rejected_record(tmp_path, make_job):
    cases = tmp_path / "c.jsonl"
    good = {"input": "Stage II colorectal cancer after resection, MSI-high. Adjuvant?",
            "target": "Observation."}
    lone = '{"input": "\\ud800 A 60-year-old with stage IV NSCLC?", "target": "ok"}'  # the escape, as text
    cases.write_text(json.dumps(good) + "\n" + lone + "\n", encoding="utf-8")
    rep = prepare(make_job(cases=cases), quiet=True)
    assert rep.records_read == 2 and rep.accepted == 1
    assert [r["line"] for r in rep.rejected] == [2]
    assert "\\ud800" in rep.rejected[0]["reason"] and "'input'" in rep.rejected[0]["reason"]


@pytest.mark.parametrize("kind", ["array", "array-one-line", "utf16", "utf16-no-bom"])
def test_a_json_array_or_utf16_file_is_named_once_before_the_tokenizer_loads(tmp_path, make_job, monkeypatch,
                                                                             kind):
    import finetune.tokenizer as tokenizer

    recs = [{"input": f"Stage {s} NSCLC, EGFR exon 19 deletion. Next?", "target": "Osimertinib."}
            for s in "ABC"]
    cases = tmp_path / "cases.jsonl"
    if kind == "array":
        cases.write_text(json.dumps(recs, indent=2), encoding="utf-8")
    elif kind == "array-one-line":
        cases.write_text(json.dumps(recs) + "\n", encoding="utf-8")
    else:
        text = "".join(json.dumps(r) + "\n" for r in recs)
        cases.write_bytes(text.encode("utf-16" if kind == "utf16" else "utf-16-le"))
    monkeypatch.setattr(tokenizer, "load_tokenizer", lambda *a, **k: pytest.fail("the tokenizer was loaded"))
    with pytest.raises(FinetuneError) as exc:
        prepare(make_job(cases=cases), quiet=True)
    want = ("looks like a JSON array, not JSON Lines" if kind.startswith("array")
            else "UTF-16 encoded; save it as UTF-8")
    assert want in str(exc.value) and str(cases) in str(exc.value)


# -- folders that cannot be written --------------------------------------------------------------------------

def test_an_unreachable_output_dir_is_one_line_and_exit_2(tmp_path, make_job, capsys):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    cfg = make_job(n_cases=10, job={"output_dir": str(blocker / "out")})
    assert run(_args("prepare", cfg.source)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert str(blocker / "out") in err and "cannot write to job.output_dir" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_dir_is_one_line_and_exit_2(tmp_path, make_job, capsys):
    cfg = make_job(n_cases=10)
    cfg.out.mkdir()
    cfg.out.chmod(0o555)
    try:
        assert run(_args("prepare", cfg.source)) == 2
    finally:
        cfg.out.chmod(0o755)
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(cfg.out) in err


def test_a_gguf_folder_that_is_a_file_is_one_line_and_exit_2(make_job, monkeypatch, capsys):
    import finetune.gguf as gguf

    cfg = make_job(n_cases=10)
    cfg.merged_dir.mkdir(parents=True)
    (cfg.merged_dir / "config.json").write_text("{}")
    cfg.gguf_dir.write_text("not a folder")
    monkeypatch.setattr(gguf, "require_converter", lambda *a: object())
    assert run(_args("export-gguf", cfg.source)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"the GGUF folder {cfg.gguf_dir} is a file, not a folder" in err


def test_an_os_error_mid_stage_is_one_line_and_exit_2(make_job, monkeypatch, capsys):
    import finetune.api as api

    cfg = make_job(n_cases=10)

    def full(cfg):
        raise OSError(28, "No space left on device", str(cfg.merged_dir / "model.safetensors"))

    monkeypatch.setattr(api, "merge", full)
    assert run(_args("merge", cfg.source)) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"oncotui finetune: cannot use {cfg.merged_dir / 'model.safetensors'}: "
                           "No space left on device")


# -- one stage at a time -------------------------------------------------------------------------------------

def test_a_second_run_on_the_same_job_is_refused_and_a_killed_one_leaves_no_lock(make_job, capsys):
    from finetune.jobdir import job_lock

    cfg = make_job(n_cases=10)
    _prepared(cfg)
    cfg.out.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(  # what a running `finetune train` does
        [sys.executable, "-c", "import sys; sys.path.insert(0, '.')\n"
         "from finetune.config import load_config\n"
         "from finetune.jobdir import job_lock\nimport time\n"
         f"with job_lock(load_config({str(cfg.source)!r}), 'train'):\n    print('locked', flush=True)\n"
         "    time.sleep(120)"], cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert run(_args("train", cfg.source)) == 2
        err = capsys.readouterr().err
        assert f"job in use by pid {holder.pid} (oncotui finetune train)" in err and str(cfg.out) in err
        assert not cfg.checkpoints_dir.exists() and not cfg.metrics_file.exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with job_lock(cfg, "train"):  # the kernel released the dead process's lock
        pass


def test_every_writing_stage_takes_the_lock(make_job, monkeypatch):
    import finetune.gguf as gguf
    from finetune import export_gguf, merge, train, verify
    from finetune.jobdir import job_lock

    cfg = make_job(n_cases=10)
    _prepared(cfg)
    _adapter(cfg)
    cfg.merged_dir.mkdir(parents=True)
    (cfg.merged_dir / "config.json").write_text("{}")
    cfg.gguf_dir.mkdir()
    (cfg.gguf_dir / "tiny-f16.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(gguf, "require_converter", lambda *a: object())
    with job_lock(cfg, "train"):
        for stage in (lambda: prepare(cfg, quiet=True), lambda: train(cfg), lambda: merge(cfg),
                      lambda: export_gguf(cfg), lambda: verify(cfg)):
            with pytest.raises(FinetuneError, match=f"job in use by pid {os.getpid()}"):
                stage()


# -- resuming: only from a checkpoint made with this config and this data ------------------------------------

def _write_run(cfg) -> None:
    from finetune.training import RUN_FILE, _setup

    cfg.checkpoints_dir.mkdir(parents=True, exist_ok=True)
    (cfg.checkpoints_dir / RUN_FILE).write_text(json.dumps(_setup(cfg)))


@pytest.mark.parametrize("recorded", [True, False], ids=["run.json", "older-checkpoints"])
def test_resume_with_another_lora_r_is_refused(make_job, recorded):
    from finetune.training import train

    cfg = make_job(n_cases=10)
    _prepared(cfg)
    _checkpoint(cfg, 4, r=8)
    _adapter(cfg)
    if recorded:
        _write_run(cfg)
    cfg.lora.r = 16
    with pytest.raises(FinetuneError) as exc:
        train(cfg, console=_console(), show_progress=False)
    msg = str(exc.value)
    assert "were made with another LoRA config" in msg and "lora.r 8 -> 16" in msg and "--restart" in msg
    assert (cfg.checkpoints_dir / "checkpoint-4").is_dir()  # refused, nothing removed


def test_new_prepared_data_is_not_already_complete(make_job):
    from finetune.training import train

    cfg = make_job(n_cases=10)  # max_steps 4: checkpoint-4 finishes the job
    _prepared(cfg)
    _checkpoint(cfg, 4)
    _adapter(cfg)
    _write_run(cfg)
    _prepared(cfg, rows=5)  # prepare ran again on other records
    with pytest.raises(FinetuneError) as exc:
        train(cfg, console=_console(), show_progress=False)
    assert "other prepared data" in str(exc.value) and "--restart" in str(exc.value)


def test_changes_that_do_not_alter_a_checkpoint_may_resume(make_job):
    from finetune.training import _setup_changes

    cfg = make_job(n_cases=10)
    _prepared(cfg)
    last = _checkpoint(cfg, 4)
    _write_run(cfg)
    cfg.train.max_steps, cfg.train.logging_steps = 40, 5  # train longer, log less often
    cfg.train.per_device_batch_size, cfg.train.gradient_accumulation_steps = 2, 2  # the same 4 per step
    assert _setup_changes(cfg, str(last)) == []
    cfg.train.learning_rate = 5e-4
    assert _setup_changes(cfg, str(last)) == ["train.learning_rate 0.001 -> 0.0005"]


def test_a_half_written_newest_checkpoint_is_skipped(make_job):
    from finetune.training import train

    cfg = make_job(n_cases=10, train={"max_steps": 8})
    _prepared(cfg)
    _checkpoint(cfg, 8)
    _checkpoint(cfg, 9, state=False)  # a kill while saving: no trainer_state.json yet
    _adapter(cfg)
    _write_run(cfg)
    console = _console()
    with console.capture() as cap:
        res = train(cfg, console=console, show_progress=False)
    out = cap.get()
    assert res.already_complete and "step 8 of train.max_steps = 8" in out
    assert "skipped the incomplete checkpoint checkpoint-9" in out and "using checkpoint-8" in out
    assert not (cfg.checkpoints_dir / "checkpoint-9").exists()


def test_restart_removes_the_previous_outputs_before_training(make_job, monkeypatch):
    import finetune.training as training

    cfg = make_job(n_cases=10)
    _prepared(cfg)
    _checkpoint(cfg, 4)
    _adapter(cfg)
    for d in (cfg.merged_dir, cfg.gguf_dir):
        d.mkdir(parents=True)
        (d / "x").write_text("old")
    cfg.manifest_file.write_text("{}")

    def interrupted(*args, **kwargs):  # Ctrl-C while the model loads
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "load_model", interrupted)
    console = _console()
    with console.capture() as cap, pytest.raises(KeyboardInterrupt):
        training.train(cfg, console=console, show_progress=False, restart=True)
    out = cap.get()
    assert f"--restart: starting over (removed {cfg.checkpoints_dir})" in out and "train.resume" not in out
    assert "removed the previous run's adapter/, merged/, gguf/, manifest.json" in out
    assert not any(p.exists() for p in (cfg.adapter_dir, cfg.merged_dir, cfg.gguf_dir, cfg.manifest_file))
    assert (cfg.checkpoints_dir / training.RUN_FILE).is_file()


# -- no stage on a stale input -------------------------------------------------------------------------------

def test_merge_names_a_damaged_adapter_and_says_to_train_again(make_job, capsys):
    cfg = make_job(n_cases=10)
    weights = _adapter(cfg)
    weights.write_bytes(os.urandom(1000))
    assert run(_args("merge", cfg.source)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(weights) in err and "is damaged" in err
    assert "oncotui finetune train" in err


def test_a_damaged_adapter_of_a_complete_job_says_restart(make_job):
    from finetune.training import train

    cfg = make_job(n_cases=10)
    _prepared(cfg)
    _checkpoint(cfg, 4)
    _write_run(cfg)
    _adapter(cfg).write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{")  # cut off
    with pytest.raises(FinetuneError, match=r"adapter .* is damaged .*--restart"):
        train(cfg, console=_console(), show_progress=False)


def test_no_stage_runs_on_an_input_older_than_the_one_before_it(make_job, monkeypatch):
    import finetune.gguf as gguf
    from finetune import export_gguf, merge, verify
    from finetune.jobdir import data_sha256

    cfg = make_job(n_cases=10)
    _prepared(cfg)
    weights = _adapter(cfg)
    summary = {"global_step": 4, "data_sha256": data_sha256(cfg)}
    (cfg.out / "train_summary.json").write_text(json.dumps(summary))
    cfg.merged_dir.mkdir()
    (cfg.merged_dir / "config.json").write_text("{}")
    merged = cfg.merged_dir / "model.safetensors"
    merged.write_bytes(b"weights")
    cfg.gguf_dir.mkdir()
    f16, lora = cfg.gguf_dir / "tiny-f16.gguf", cfg.gguf_dir / "tiny-lora-f16.gguf"
    f16.write_bytes(b"GGUF")
    lora.write_bytes(b"GGUF")
    for p, age in ((weights, 300), (merged, 200), (f16, 100), (lora, 100)):
        _age(p, age)
    monkeypatch.setattr(gguf, "require_converter", lambda *a: object())
    from finetune.jobdir import check_inputs

    check_inputs(cfg, "verify")  # data -> adapter -> merged -> gguf: in order

    _age(merged, 400)  # train ran again after the merge
    for stage in (lambda: export_gguf(cfg), lambda: verify(cfg)):
        with pytest.raises(FinetuneError, match=r"merged is older than the adapter .*finetune merge"):
            stage()
    _age(merged, 200)
    _age(f16, 250)  # merge ran again after the export
    with pytest.raises(FinetuneError, match=r"tiny-f16.gguf is older than .*merged .*finetune export-gguf"):
        verify(cfg)
    _age(f16, 100)
    _age(lora, 350)  # the adapter GGUF of an earlier adapter
    with pytest.raises(FinetuneError, match=r"tiny-lora-f16.gguf is older than .*adapter .*export-gguf"):
        verify(cfg)
    _age(lora, 100)
    _prepared(cfg, rows=7)  # prepare ran on other records; the adapter was trained on the old ones
    for stage in (lambda: merge(cfg), lambda: export_gguf(cfg), lambda: verify(cfg)):
        with pytest.raises(FinetuneError, match=r"not the data the adapter .* was trained on .*--restart"):
            stage()


def test_export_removes_ggufs_this_config_does_not_make(make_job, monkeypatch):
    import finetune.gguf as gguf

    cfg = make_job(n_cases=10, export={"quantize": ["Q4_K_M"]})
    cfg.merged_dir.mkdir(parents=True)
    (cfg.merged_dir / "config.json").write_text("{}")
    cfg.gguf_dir.mkdir()
    (cfg.gguf_dir / "tiny-Q8_0.gguf").write_bytes(b"GGUF")  # from when export.quantize had Q8_0

    def stop(*args, **kwargs):
        raise FinetuneError("converter stopped here")

    monkeypatch.setattr(gguf, "require_converter", lambda *a: argparse.Namespace(version="test"))
    monkeypatch.setattr(gguf, "convert_hf", stop)
    with pytest.raises(FinetuneError, match="converter stopped here"):
        gguf.export_gguf(cfg, console=_console())
    assert not (cfg.gguf_dir / "tiny-Q8_0.gguf").exists()
