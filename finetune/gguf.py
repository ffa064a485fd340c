"""export-gguf: merged HF folder -> GGUF (llama.cpp's own converter, offline) -> quantised GGUFs, plus the LoRA
adapter alone as a GGUF that the llama.cpp backend applies at load time (``lora_path``)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .config import FinetuneError, JobConfig
from .converter import Converter, require_converter

__all__ = ["ExportResult", "export_gguf", "quantize", "convert_hf", "convert_lora"]


@dataclass
class ExportResult:
    base_gguf: str
    quantized: dict[str, str] = field(default_factory=dict)
    lora_gguf: str | None = None
    converter_version: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _run(cmd: list[str], conv: Converter, what: str) -> None:
    proc = subprocess.run(cmd, env=conv.env(), capture_output=True, text=True, cwd=str(conv.root))
    if proc.returncode != 0:
        tail = "\n    ".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise FinetuneError(f"{what} failed (exit {proc.returncode}):\n    {tail}")


def convert_hf(conv: Converter, model_dir: Path, out: Path, outtype: str, name: str) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, str(conv.hf_script), str(model_dir), "--outfile", str(out), "--outtype", outtype,
          "--model-name", name], conv, f"convert_hf_to_gguf.py on {model_dir}")
    if not out.is_file():
        raise FinetuneError(f"the converter reported success but wrote no {out}")
    return out


def convert_lora(conv: Converter, adapter_dir: Path, base_dir: Path, out: Path, outtype: str) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, str(conv.lora_script), str(adapter_dir), "--base", str(base_dir), "--outfile", str(out),
          "--outtype", outtype], conv, f"convert_lora_to_gguf.py on {adapter_dir}")
    return out


def quantize(src: Path, dst: Path, qtype: str, threads: int = 0) -> Path:
    import llama_cpp

    ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{qtype.upper()}", None)
    if ftype is None:
        raise FinetuneError(f"this llama-cpp-python has no quantisation type {qtype!r}")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = threads or (os.cpu_count() or 1)
    with captured_native_output() as log:
        rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if rc != 0 or not dst.is_file():
        tail = "\n    ".join(log.content.strip().splitlines()[-10:])
        raise FinetuneError(f"llama_model_quantize {src.name} -> {qtype} failed (code {rc}):\n    {tail}")
    return dst


class NativeLog:
    content: str = ""


@contextlib.contextmanager
def captured_native_output() -> Iterator[NativeLog]:
    """Send what C code writes to fds 1 and 2 (llama.cpp's logs) to a temp file; kept for error messages."""
    log = NativeLog()
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile("w+b") as fh:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(fh.fileno(), 1)
            os.dup2(fh.fileno(), 2)
            yield log
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            fh.seek(0)
            log.content = fh.read().decode(errors="replace")


def export_gguf(cfg: JobConfig, *, console: Any = None) -> ExportResult:
    from .jobdir import check_inputs, job_lock, writable_dir

    conv = require_converter(cfg.export.converter_dir)
    if not (cfg.merged_dir / "config.json").is_file():
        raise FinetuneError(f"no merged model at {cfg.merged_dir}: run `oncotui finetune merge --config ...` first")
    with job_lock(cfg, "export-gguf"):
        check_inputs(cfg, "export-gguf")
        writable_dir(cfg.gguf_dir, "the GGUF folder")
        return _export(cfg, conv, console)


def _export(cfg: JobConfig, conv: Converter, console: Any) -> ExportResult:
    from rich.console import Console

    console = console or Console(stderr=True, highlight=False)
    name, outtype = cfg.job.name, cfg.export.outtype
    lora_type = outtype if outtype in ("f32", "f16", "bf16", "q8_0") else "f16"
    # a GGUF this export does not write (a quantisation since dropped from export.quantize) would otherwise be
    # verified and shipped beside the new ones as if it were current
    keep = {f"{name}-{outtype}.gguf", *(f"{name}-{q}.gguf" for q in cfg.export.quantize)}
    if cfg.export.lora_gguf:
        keep.add(f"{name}-lora-{lora_type}.gguf")
    old = sorted(p.name for p in cfg.gguf_dir.glob("*.gguf") if p.name not in keep)
    for n in old:
        (cfg.gguf_dir / n).unlink()
    if old:
        console.print(f"removed {', '.join(old)} (an earlier export; not made by this config)")
    base = cfg.gguf_dir / f"{name}-{outtype}.gguf"
    from .tokenizer import keep_sentencepiece_files

    keep_sentencepiece_files(cfg.job.base_model, cfg.merged_dir)  # merged folders written before merge did this
    console.print(f"converting {cfg.merged_dir} -> {base.name} (llama.cpp converter {conv.version})")
    convert_hf(conv, cfg.merged_dir, base, outtype, name)
    result = ExportResult(base_gguf=str(base), converter_version=conv.version)
    for q in cfg.export.quantize:
        dst = cfg.gguf_dir / f"{name}-{q}.gguf"
        console.print(f"quantising -> {dst.name}")
        quantize(base, dst, q, cfg.export.threads)
        result.quantized[q] = str(dst)
    if cfg.export.lora_gguf and (cfg.adapter_dir / "adapter_config.json").is_file():
        dst = cfg.gguf_dir / f"{name}-lora-{lora_type}.gguf"
        console.print(f"converting the adapter alone -> {dst.name}")
        convert_lora(conv, cfg.adapter_dir, cfg.job.base_model, dst, lora_type)
        result.lora_gguf = str(dst)
    for p in [result.base_gguf, *result.quantized.values(), *([result.lora_gguf] if result.lora_gguf else [])]:
        console.print(f"  {Path(p).stat().st_size / 1e6:8.1f} MB  {p}")
    return result
