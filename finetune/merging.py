"""merge: fold the LoRA adapter into the base weights, saved as a 16-bit Hugging Face folder.

A 4-bit base (a bitsandbytes/GPTQ/AWQ checkpoint, e.g. ``*-bnb-4bit``) is refused unless ``export.dequantize``
is set: merging a LoRA delta onto 4-bit weights either fails or silently rounds the delta away, and the GGUF
converter cannot read packed 4-bit tensors anyway. Train on the 4-bit view if you like; merge onto the 16-bit
original.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .config import FinetuneError, JobConfig

__all__ = ["merge", "base_quantization"]


def base_quantization(base: Path) -> str | None:
    """A short description of the base checkpoint's quantisation, or None for a plain 16/32-bit checkpoint."""
    cfg_file = base / "config.json"
    if not cfg_file.is_file():
        raise FinetuneError(f"{base} has no config.json: job.base_model must be a Hugging Face model folder")
    try:
        data = json.loads(cfg_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: JSON and UTF-8 decoding errors
        raise FinetuneError(f"job.base_model = {base}: its config.json is not valid JSON ({exc}); copy the model "
                            "folder again") from None
    qc = data.get("quantization_config") if isinstance(data, dict) else None
    if not qc:
        return None
    method = qc.get("quant_method", "unknown")
    bits = "4-bit" if qc.get("load_in_4bit") or qc.get("bits") == 4 else (
        "8-bit" if qc.get("load_in_8bit") or qc.get("bits") == 8 else f"{qc.get('bits', '?')}-bit")
    return f"{method} {bits}"


def _adapter_problem(cfg: JobConfig) -> str | None:
    """Why the adapter's weights cannot be merged (damaged, cut off), checked before the base model loads."""
    from .jobdir import adapter_weights, safetensors_problem

    weights = adapter_weights(cfg)
    if weights is None:
        return None  # PEFT names what is missing
    problem = safetensors_problem(weights) if weights.suffix == ".safetensors" else None
    return f"{weights} is damaged ({problem})" if problem else None


def merge(cfg: JobConfig, *, console: Any = None) -> Path:
    from .jobdir import check_inputs, job_lock, writable_dir

    adapter = cfg.adapter_dir
    if not (adapter / "adapter_config.json").is_file():
        raise FinetuneError(f"no LoRA adapter at {adapter}: run `oncotui finetune train --config ...` first")
    with job_lock(cfg, "merge"):
        problem = _adapter_problem(cfg)
        if problem:
            raise FinetuneError(f"the LoRA adapter cannot be merged: {problem}; run `oncotui finetune train "
                                "--config ...` again (with --restart if it says the job is complete)")
        check_inputs(cfg, "merge")
        writable_dir(cfg.merged_dir, "the merged-model folder")
        return _merge(cfg, console)


def _merge(cfg: JobConfig, console: Any) -> Path:
    from rich.console import Console

    console = console or Console(stderr=True, highlight=False)
    adapter = cfg.adapter_dir
    base = cfg.job.base_model
    quant = base_quantization(base)
    if quant and not cfg.export.dequantize:
        raise FinetuneError(
            f"refusing to merge onto a quantised base ({quant}: {base}). Merging a LoRA adapter onto quantised "
            "weights loses the adapter or breaks the model. Set job.base_model to the 16-bit original of this "
            "model for the merge, or set export.dequantize = true to dequantise the base first (needs the "
            "quantisation library, e.g. bitsandbytes on a GPU).")

    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .progress import quiet_hf
    from .tokenizer import keep_sentencepiece_files

    with quiet_hf():  # no HF "Loading weights" / "Writing model shards" bars beside our output
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[cfg.export.merge_dtype]
        try:
            model = AutoModelForCausalLM.from_pretrained(str(base), dtype=dtype, local_files_only=True,
                                                         trust_remote_code=cfg.model.trust_remote_code)
        except Exception as exc:  # noqa: BLE001 - transformers raises many types (missing weights: OSError)
            raise FinetuneError(f"job.base_model = {base}: cannot load the model: {exc}") from None
        if quant:
            if not hasattr(model, "dequantize"):
                raise FinetuneError(f"cannot dequantise {base} ({quant}) with this transformers version")
            console.print(f"dequantising the {quant} base to {cfg.export.merge_dtype} before merging")
            model = model.dequantize().to(dtype)
        if getattr(model, "is_loaded_in_4bit", False) or getattr(model, "is_loaded_in_8bit", False):
            raise FinetuneError("the base model is still quantised after loading; refusing to merge")
        try:
            model = PeftModel.from_pretrained(model, str(adapter), is_trainable=False)
        except Exception as exc:  # noqa: BLE001 - safetensors, JSON, shapes: a damaged or foreign adapter
            detail = " ".join(str(exc).split())[:300]
            raise FinetuneError(f"cannot load the LoRA adapter {adapter} onto {base} ({type(exc).__name__}: "
                                f"{detail}); run `oncotui finetune train --config ...` again (with --restart "
                                "if it says the job is complete)") from None
        merged = model.merge_and_unload()
        tok = AutoTokenizer.from_pretrained(str(adapter), local_files_only=True)
        eos_id = tok.eos_token_id
        if eos_id is not None:  # generation must stop at the end-of-turn token the adapter learnt
            gen = merged.generation_config
            ids = gen.eos_token_id if isinstance(gen.eos_token_id, list) else (
                [gen.eos_token_id] if gen.eos_token_id is not None else [])
            gen.eos_token_id = [eos_id, *[i for i in ids if i != eos_id]] if ids and ids != [eos_id] else eos_id
        out = cfg.merged_dir
        shutil.rmtree(out, ignore_errors=True)  # no weights or shards of an earlier merge left beside these
        out.mkdir(parents=True, exist_ok=True)
        merged.save_pretrained(str(out), safe_serialization=True)
        tok.save_pretrained(str(out))
    restored = keep_sentencepiece_files(base, out)
    if restored:
        console.print(f"  [dim]note: kept the base's SentencePiece vocabulary for the GGUF converter "
                      f"({', '.join(restored)})[/dim]")
    console.print(f"merged adapter into {base.name} ({cfg.export.merge_dtype}) -> {out}")
    return out
