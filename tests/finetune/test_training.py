"""train's decisions that need no training run: LoRA targets, and when a job is already complete."""

from __future__ import annotations

import json

import pytest

from finetune.config import FinetuneError

torch = pytest.importorskip("torch")
pytest.importorskip("peft")


def test_a_target_module_that_matches_nothing_fails_before_training(make_job):
    from finetune.training import load_model

    cfg = make_job(n_cases=10, lora={"target_modules": ["q_proj", "bogus_proj"]})
    with pytest.raises(FinetuneError) as exc:
        load_model(cfg, "hf", torch.float32, False, [])
    assert "'bogus_proj' matches no module in this model" in str(exc.value)
    assert "q_proj" in str(exc.value) and "down_proj" in str(exc.value)  # lists what the model has


def test_standard_projections_the_model_lacks_are_skipped_with_a_note():
    from finetune.config import LORA_TARGETS
    from finetune.training import _lora_targets

    class Attn(torch.nn.Module):  # an architecture with only some of the standard projections
        def __init__(self) -> None:
            super().__init__()
            self.q_proj, self.v_proj = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)

    notes: list[str] = []
    assert _lora_targets(Attn(), list(LORA_TARGETS), notes) == ["q_proj", "v_proj"]
    assert notes == ["LoRA targets not in this model, skipped: k_proj, o_proj, gate_proj, up_proj, down_proj"]
    with pytest.raises(FinetuneError, match="'gate_up_proj' matches no module"):  # not a standard name: a typo?
        _lora_targets(Attn(), ["q_proj", "gate_up_proj"], [])


def _checkpoint(cfg, step: int, epoch: float) -> None:
    d = cfg.checkpoints_dir / f"checkpoint-{step}"
    d.mkdir(parents=True)
    (d / "trainer_state.json").write_text(json.dumps({"global_step": step, "epoch": epoch}))


def _adapter(cfg) -> None:
    from safetensors.torch import save_file

    cfg.adapter_dir.mkdir(parents=True, exist_ok=True)
    (cfg.adapter_dir / "adapter_config.json").write_text("{}")
    save_file({"w": torch.zeros(2)}, str(cfg.adapter_dir / "adapter_model.safetensors"))


def test_rerun_after_max_steps_trains_nothing(make_job, capsys):
    from rich.console import Console

    from finetune.training import train

    cfg = make_job(n_cases=10)
    (cfg.data_dir).mkdir(parents=True)
    (cfg.data_dir / "train.jsonl").write_text("{}\n")
    _checkpoint(cfg, 4, 1.0)
    _adapter(cfg)
    (cfg.out / "train_summary.json").write_text(json.dumps({"global_step": 4, "train_loss": 6.5, "max_steps": 4,
                                                            "num_epochs": 3.0, "notes": []}))
    res = train(cfg, console=Console(file=None, stderr=False, width=200), show_progress=False)
    out = capsys.readouterr().out
    assert res.already_complete and res.global_step == 4 and res.train_loss == 6.5
    assert f"training is already complete in {cfg.out} (step 4 of train.max_steps = 4)" in out
    flat = " ".join(out.split())  # rich wraps long lines
    assert "--restart" in flat and "train.resume = false" in flat and "resuming" not in flat
    assert sorted(p.name for p in cfg.checkpoints_dir.iterdir()) == ["checkpoint-4"]


def test_restart_flag_trains_from_step_0(make_job, monkeypatch):
    import finetune.api as api
    from finetune.cli import run
    from oncotui.cli import build_parser

    seen = {}

    def fake_train(cfg, show_progress=True, restart=False):  # the decision under test is what train is given
        seen["resume"] = cfg.train.resume and not restart
        raise SystemExit(0)

    cfg = make_job(n_cases=10)
    monkeypatch.setattr(api, "load_config", lambda path: cfg)
    monkeypatch.setattr(api, "train", fake_train)
    for argv, resume in ((["finetune", "train", "--config", "job.toml"], True),
                         (["finetune", "train", "--config", "job.toml", "--restart"], False)):
        with pytest.raises(SystemExit):
            run(build_parser().parse_args(argv))
        assert seen["resume"] is resume


@pytest.mark.parametrize("train_cfg, state, summary, done", [
    ({"max_steps": 4}, (4, 0.5), None, "step 4 of train.max_steps = 4"),
    ({"max_steps": 6}, (4, 0.5), None, None),  # raised: resume
    ({"max_steps": -1, "num_epochs": 2.0}, (20, 2.0), None, "all train.num_epochs = 2 done"),
    ({"max_steps": -1, "num_epochs": 3.0}, (20, 2.0), None, None),
    # early stopping at step 30 (after the last checkpoint at 20): complete while the target is unchanged
    ({"max_steps": 100}, (20, 1.0), {"global_step": 30, "max_steps": 100, "num_epochs": 3.0}, "stopped early"),
    ({"max_steps": 200}, (20, 1.0), {"global_step": 30, "max_steps": 100, "num_epochs": 3.0}, None),
    # a summary older than the newest checkpoint (an interrupted resume): resume
    ({"max_steps": 100}, (40, 2.0), {"global_step": 30, "max_steps": 100, "num_epochs": 3.0}, None),
])
def test_when_a_job_is_complete(make_job, train_cfg, state, summary, done):
    from finetune.training import _complete

    cfg = make_job(n_cases=10, train=train_cfg)
    if summary:
        cfg.out.mkdir(parents=True, exist_ok=True)
        (cfg.out / "train_summary.json").write_text(json.dumps(summary))
    reason = _complete(cfg, {"global_step": state[0], "epoch": state[1]})
    assert (reason is None) if done is None else (reason is not None and done in reason)


def test_a_resaved_tokenizer_keeps_what_the_gguf_converter_needs(tiny_model, tmp_path):
    # transformers 5 saves tokenizer.json only; merge restores the SentencePiece model and the special-token table
    from transformers import AutoTokenizer

    from finetune.tokenizer import keep_sentencepiece_files

    out = tmp_path / "merged"
    AutoTokenizer.from_pretrained(str(tiny_model)).save_pretrained(str(out))
    assert keep_sentencepiece_files(tiny_model, out) == ["tokenizer.model", "added_tokens_decoder"]
    assert (out / "tokenizer.model").read_bytes() == (tiny_model / "tokenizer.model").read_bytes()
    decoder = json.loads((out / "tokenizer_config.json").read_text())["added_tokens_decoder"]
    assert {"content": "<|im_start|>", "special": True}.items() <= decoder["3"].items()
    assert keep_sentencepiece_files(tiny_model, out) == []  # idempotent
    assert len(AutoTokenizer.from_pretrained(str(out))) == len(AutoTokenizer.from_pretrained(str(tiny_model)))


def test_checkpoints_saved_within_a_second_print_no_mtime_warning(tmp_path):
    # a short job saves checkpoints a second apart; the Trainer then warned "mtime may not be reliable on this
    # filesystem" between our progress lines
    import logging

    from transformers.trainer_utils import sort_checkpoints
    from transformers.utils import logging as hf_logging

    from finetune.progress import quiet_hf

    for step in (3, 6):
        (tmp_path / f"checkpoint-{step}").mkdir()
    shown: list[str] = []
    catch = logging.Handler()
    catch.emit = lambda record: shown.append(record.getMessage())  # type: ignore[method-assign]
    sorter = hf_logging.get_logger("transformers.trainer_utils")
    sorter.addHandler(catch)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_warning()  # whatever an earlier test or import set
    try:
        logging.Logger.warning_once.cache_clear()  # an earlier training run in this process may have said it once
        with quiet_hf():
            with quiet_hf():  # train holds it around load_model's own
                pass
            found = sort_checkpoints(str(tmp_path), use_mtime=True)
        logging.Logger.warning_once.cache_clear()
        sort_checkpoints(str(tmp_path), use_mtime=True)  # outside our call transformers speaks as before
    finally:
        sorter.removeHandler(catch)
        hf_logging.set_verbosity(verbosity)
    assert [p.rsplit("-", 1)[1] for p in found] == ["3", "6"]
    assert len(shown) == 1 and "mtime" in shown[0]


def test_unsloth_is_imported_first_and_offline(make_job, tmp_path):
    # Unsloth patches transformers, trl and peft as it is imported; `train` imported transformers (quiet_hf) and
    # datasets first, so on a GPU machine its patches would not all apply. And it reports usage statistics to the
    # Hub unless told not to: the stage ran with no offline switch set. A stand-in unsloth records both.
    import os
    import subprocess
    import sys
    from pathlib import Path

    from finetune import prepare

    cfg = make_job(n_cases=10, train={"backend": "unsloth"})
    prepare(cfg, quiet=True)
    fake = tmp_path / "site" / "unsloth"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "import os, sys\n"
        "BEFORE = sorted(m for m in ('transformers', 'trl', 'peft') if m in sys.modules)\n"
        "ENV = sorted(k for k in ('HF_HUB_OFFLINE', 'UNSLOTH_DISABLE_STATISTICS') if os.environ.get(k) == '1')\n"
        "class FastLanguageModel:\n"
        "    @staticmethod\n"
        "    def from_pretrained(**kw):\n"
        "        raise RuntimeError('stand-in unsloth: stop here')\n", encoding="utf-8")
    script = (f"import sys; sys.path.insert(0, {str(tmp_path / 'site')!r})\n"
              "import finetune.training as t\n"
              "t._has_gpu = lambda: True\n"  # the GPU machine this backend needs
              "from oncotui.cli import main\n"
              "try:\n"
              f"    main(['finetune', 'train', '--config', {str(cfg.source)!r}])\n"
              "except RuntimeError as exc:\n"
              "    print(exc)\n"
              "import unsloth\n"
              "print('BEFORE', unsloth.BEFORE, 'ENV', unsloth.ENV)\n")
    env = {k: v for k, v in os.environ.items() if "OFFLINE" not in k and "UNSLOTH" not in k}  # as a shell has it
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2], env=env)
    assert "stand-in unsloth: stop here" in proc.stdout, (proc.stdout, proc.stderr[-2000:])  # it got that far
    assert "BEFORE [] ENV ['HF_HUB_OFFLINE', 'UNSLOTH_DISABLE_STATISTICS']" in proc.stdout, proc.stdout
