from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .tiny import build_tiny_model, write_cases


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def job_toml(base: Path, out: Path, cases: Path, **sections: dict[str, Any]) -> str:
    data: dict[str, dict[str, Any]] = {
        "job": {"name": "tiny", "base_model": str(base), "output_dir": str(out)},
        "data": {"train_file": str(cases), "system_prompt": "You are an oncology assistant."},
        "model": {"max_seq_length": 256},
        "lora": {"r": 8, "alpha": 16},
        "train": {"per_device_batch_size": 4, "gradient_accumulation_steps": 1, "learning_rate": 1e-3,
                  "max_steps": 4, "logging_steps": 1, "eval_steps": 2, "save_steps": 2,
                  "gradient_checkpointing": False},
        "export": {"quantize": ["Q4_K_M", "Q8_0"]},
        "verify": {"prompts": ["Stage IV NSCLC, EGFR exon 19 deletion. What next?", "Melanoma, BRAF V600E?"],
                   "max_new_tokens": 8, "min_top1_agreement_quantized": 0.0},
    }
    for k, v in sections.items():
        data.setdefault(k, {}).update(v)
    lines = []
    for section, kv in data.items():
        lines.append(f"[{section}]")
        for k, v in kv.items():
            lines.append(f"{k} = {_toml(v)}")
    return "\n".join(lines) + "\n"


def _toml(v: Any) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))


@pytest.fixture
def make_job(tmp_path: Path, tiny_model: Path):
    from finetune.config import load_config

    def _make(n_cases: int = 120, cases: Path | None = None, **sections: dict[str, Any]):
        if cases is None:
            cases = write_cases(tmp_path / "cases.jsonl", n=n_cases)
        p = tmp_path / "job.toml"
        p.write_text(job_toml(tiny_model, tmp_path / "out", cases, **sections), encoding="utf-8")
        return load_config(p)

    return _make


@pytest.fixture(scope="session")
def converter() -> Any:
    """llama.cpp's converter: already set up, or fetched once; skipped (failed under CI=true) when impossible."""
    from finetune.config import FinetuneError
    from finetune.converter import find_converter, setup_converter

    conv = find_converter()
    if conv is not None:
        return conv
    try:
        return setup_converter(timeout_s=int(os.environ.get("ONCOTUI_CONVERTER_TIMEOUT", "600")))
    except FinetuneError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI: llama.cpp converter unavailable: {exc}")
        pytest.skip(f"llama.cpp converter unavailable (no llama-cpp-python sdist from pip's cache or network; "
                    f"run `make finetune-setup` once): {exc}")
