"""Fine-tuning for oncotui tiers: prepare -> train -> merge -> export-gguf -> verify, on one TOML config per job.

    from finetune import load_config, prepare, train, merge, export_gguf, verify
    cfg = load_config("finetune/configs/tier1.toml")
    prepare(cfg); train(cfg); merge(cfg); export_gguf(cfg); verify(cfg)

Importing this package is cheap: torch, transformers, peft, trl and llama_cpp load only inside the stage that
needs them. It never imports textual or oncotui; from engine it uses only the PHI redactor (engine.phi).
See finetune/README.md.
"""

from __future__ import annotations

from typing import Any

from . import offline  # noqa: F401  first: the Hugging Face and Unsloth offline switches

__all__ = ["ConfigError", "FinetuneError", "JobConfig", "load_config", "prepare", "PrepareReport", "train",
           "TrainResult", "merge", "export_gguf", "ExportResult", "quantize", "verify", "VerifyResult",
           "write_manifest", "setup_converter", "find_converter"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'finetune' has no attribute {name!r}")
