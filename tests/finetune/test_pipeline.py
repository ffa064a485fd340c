"""The whole path on a tiny random-weight model, no download: prepare -> train (CPU) -> merge -> export f16 ->
quantize -> load with llama.cpp -> verify. About a minute on two cores."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_MISSING = [m for m in ("peft", "trl", "datasets", "sentencepiece") if importlib.util.find_spec(m) is None]
if _MISSING and os.environ.get("CI", "").lower() == "true":
    raise RuntimeError(f"CI: the 'finetune' extra is not installed (missing {_MISSING})")
needs_extra = pytest.mark.skipif(bool(_MISSING), reason=f"pip install -e '.[finetune]' (missing {_MISSING})")


@needs_extra
def test_prepare_train_merge_export_verify(make_job, converter, capfd, monkeypatch):
    from finetune import export_gguf, merge, prepare, train, verify

    cfg = make_job(n_cases=120)
    rep = prepare(cfg, quiet=True)
    assert rep.accepted == 120 and rep.records_with_phi == 12

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = train(cfg, show_progress=False)
    # only our output: no HF tqdm bars, no deprecation warning from PEFT/TRL internals
    assert not [w for w in caught if "is_gradient_checkpointing" in str(w.message)]
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "Tokenizing train dataset" not in err and "adapter saved to" in err
    assert res.backend == "hf" and res.device == "cpu" and res.global_step == 4 and not res.quantized_4bit
    assert (cfg.adapter_dir / "adapter_config.json").is_file()
    metrics = [json.loads(x) for x in cfg.metrics_file.read_text().splitlines()]
    assert any("loss" in m for m in metrics) and any("eval_loss" in m for m in metrics)
    assert all(m["tokens_per_s"] >= 0 for m in metrics)
    assert res.loss_png and Path(res.loss_png).stat().st_size > 1000
    adapter_cfg = json.loads((cfg.adapter_dir / "adapter_config.json").read_text())
    assert set(adapter_cfg["target_modules"]) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                  "down_proj"}

    # resumable: more steps continue from the last checkpoint instead of starting over
    cfg.train.max_steps = 6
    res2 = train(cfg, show_progress=False)
    assert res2.resumed_from and res2.resumed_from.endswith("checkpoint-4") and res2.global_step == 6

    # a rerun of the finished job trains nothing (it used to resume and train a step past max_steps)
    metrics_before = cfg.metrics_file.read_text()
    capfd.readouterr()
    res3 = train(cfg, show_progress=False)
    assert res3.already_complete and res3.global_step == 6 and cfg.metrics_file.read_text() == metrics_before
    assert not (cfg.checkpoints_dir / "checkpoint-7").exists()
    assert "training is already complete" in capfd.readouterr().err

    merge(cfg)
    assert "Loading weights" not in capfd.readouterr().err
    assert (cfg.merged_dir / "model.safetensors").is_file()
    assert (cfg.merged_dir / "tokenizer.model").is_file()  # the converter needs the SentencePiece model
    exported = export_gguf(cfg)
    assert Path(exported.base_gguf).name == "tiny-f16.gguf"
    assert set(exported.quantized) == {"Q4_K_M", "Q8_0"} and exported.lora_gguf
    q4 = Path(exported.quantized["Q4_K_M"])
    assert q4.stat().st_size < Path(exported.base_gguf).stat().st_size

    result = verify(cfg)
    assert result.ok, result
    f16 = next(c for c in result.checks if c.file.endswith("tiny-f16.gguf"))
    assert f16.top1_agreement >= 0.9
    # llama.cpp splits the chat-templated prompts exactly as the tokenizer the model was trained with
    assert all(c.tokenization_match == 2 and not c.tokenizer_diff for c in result.checks), result
    manifest = json.loads(cfg.manifest_file.read_text())
    names = {f["path"] for f in manifest["files"]["gguf"]}
    assert {"gguf/tiny-f16.gguf", "gguf/tiny-Q4_K_M.gguf", "gguf/tiny-lora-f16.gguf"} <= names
    assert all(len(f["sha256"]) == 64 for f in manifest["files"]["gguf"])
    assert manifest["base_model"]["path"] == str(cfg.job.base_model)
    assert manifest["training"]["global_step"] == 6 and manifest["config"]["lora"]["r"] == 8

    # a GGUF that tokenises differently from training (here: llama.cpp drops the token after <|im_start|>) fails
    # verify and says where
    from llama_cpp import Llama

    real_tokenize = Llama.tokenize
    monkeypatch.setattr(Llama, "tokenize", lambda self, *a, **k: (lambda ids: ids[:1] + ids[2:])(
        real_tokenize(self, *a, **k)))
    capfd.readouterr()
    bad = verify(cfg, write=False)
    monkeypatch.undo()
    assert not bad.ok and all(c.tokenization_match == 0 and not c.ok for c in bad.checks)
    assert all(c.tokenizer_diff.startswith("prompt 1: from token 1: HF [") for c in bad.checks), bad
    assert "llama.cpp tokenises 2/2 prompts differently" in capfd.readouterr().err

    # the adapter GGUF applies at load time onto a GGUF of the base (what the llama_cpp backend's lora_path does)
    from finetune.converter import find_converter
    from finetune.gguf import captured_native_output, convert_hf

    base_gguf = convert_hf(find_converter(), cfg.job.base_model, cfg.out / "base-f16.gguf", "f16", "base")
    from llama_cpp import Llama

    with captured_native_output():
        llm = Llama(model_path=str(base_gguf), lora_path=exported.lora_gguf, n_ctx=128, verbose=False)
    assert llm.n_vocab() > 0
    llm.close()

    # what an engineer hands to the workstations: a profile in config.toml that the app's model manager loads
    select_exported_gguf_as_tier1(cfg.out, q4, base_gguf, Path(exported.lora_gguf))


def select_exported_gguf_as_tier1(out: Path, quantized: Path, base_gguf: Path, lora_gguf: Path) -> None:
    from engine.config import load_settings
    from engine.models.base import GenerationParams
    from engine.models.manager import ModelManager

    config = out / "config.toml"
    config.write_text(
        "[paths]\n"
        f"data_dir = {json.dumps(str(out / 'data'))}\n"
        "[models]\n"
        'tier1 = "finetuned"\n'
        'tier2 = "finetuned-lora"\n'
        'fallback_chain = []\n'
        "[models.profiles.finetuned]\n"
        'backend = "llama_cpp"\n'
        f"path = {json.dumps(str(quantized))}\n"
        "n_ctx = 512\n"
        'label = "tiny fine-tune (test)"\n'
        "[models.profiles.finetuned-lora]\n"
        'backend = "llama_cpp"\n'
        f"path = {json.dumps(str(base_gguf))}\n"
        f"lora_path = {json.dumps(str(lora_gguf))}\n"
        "n_ctx = 512\n", encoding="utf-8")
    listed = subprocess.run([sys.executable, "-m", "oncotui", "--config", str(config), "models", "list"],
                            capture_output=True, text=True, cwd=REPO, timeout=120)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.split()[:2] == ["ok", "finetuned"])
    assert "tier1" in row and "tier2" not in row and str(quantized) in row and "tiny fine-tune (test)" in row

    manager = ModelManager(load_settings(config, environ={}))
    try:
        loaded = manager.get(1)
        assert loaded.profile == "finetuned" and not loaded.notices
        params = GenerationParams(max_tokens=8, temperature=0.0)
        text = loaded.model.generate([{"role": "user", "content": "Stage IV NSCLC, EGFR exon 19. What next?"}],
                                     params)
        assert isinstance(text, str)  # random weights: any text, but the chat path runs end to end
        lora = manager.get(2)  # Tier 2: the base GGUF with the adapter GGUF applied at load time
        assert lora.profile == "finetuned-lora"
        assert isinstance(lora.model.generate([{"role": "user", "content": "Melanoma?"}], params), str)
    finally:
        manager.close()


@needs_extra
def test_merge_refuses_a_4bit_base(make_job, tmp_path, tiny_model):
    import shutil

    from finetune import merge
    from finetune.config import FinetuneError

    base = tmp_path / "base4"
    shutil.copytree(tiny_model, base)
    cfgj = json.loads((base / "config.json").read_text())
    cfgj["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    (base / "config.json").write_text(json.dumps(cfgj))
    cfg = make_job(n_cases=10, job={"base_model": str(base)})
    cfg.adapter_dir.mkdir(parents=True)
    (cfg.adapter_dir / "adapter_config.json").write_text("{}")
    with pytest.raises(FinetuneError, match=r"refusing to merge onto a quantised base \(bitsandbytes 4-bit"):
        merge(cfg)


def test_export_without_converter_says_how_to_set_it_up(make_job, tmp_path):
    from finetune import export_gguf
    from finetune.config import FinetuneError

    cfg = make_job(n_cases=10, export={"converter_dir": str(tmp_path / "none")})
    with pytest.raises(FinetuneError, match="oncotui finetune setup-converter"):
        export_gguf(cfg)


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=REPO, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@needs_extra
def test_the_trainer_leaves_checkpointing_to_load_model(tmp_path):
    # TRL's SFTConfig turns checkpointing on by default: `train.gradient_checkpointing = false` must stay off
    from trl import SFTConfig

    from finetune.training import trainer_checkpointing_off

    args = SFTConfig(output_dir=str(tmp_path), report_to="none", use_cpu=True, **trainer_checkpointing_off(SFTConfig))
    assert args.gradient_checkpointing is False
    assert getattr(args, "activation_checkpointing", False) is False


def test_finetune_stands_alone_and_imports_lazily():
    mods = _modules_after("import finetune, finetune.api, finetune.cli; from finetune import prepare, verify")
    assert not {m for m in mods if m.split(".")[0] in {"textual", "oncotui"}}
    assert not {m for m in mods if m.startswith("engine") and m not in {"engine", "engine.phi"}}
    assert not mods & {"torch", "transformers", "peft", "trl", "datasets", "llama_cpp", "matplotlib"}


def test_cli_parses_finetune_without_heavy_imports():
    mods = _modules_after("from oncotui.cli import build_parser\n"
                          "a = build_parser().parse_args(['finetune', 'train', '--config', 'x.toml'])\n"
                          "assert a.command == 'finetune' and a.finetune_command == 'train' and a.job_config == 'x.toml'")
    assert not mods & {"torch", "transformers", "peft", "trl", "finetune", "llama_cpp"}


def test_cli_reports_config_errors_without_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[job]\nbase_model = "/m"\noutput_dir = "/o"\n[data]\ntrain_file = "x"\n[train]\nbackend = "x"\n')
    proc = subprocess.run([sys.executable, "-m", "oncotui", "finetune", "prepare", "--config", str(bad)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert "[train] backend = 'x': not allowed" in proc.stderr and "Traceback" not in proc.stderr
