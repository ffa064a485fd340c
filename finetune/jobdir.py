"""The job's output folder: writable, used by one stage at a time, and no stage working on a stale input.

* ``job_lock``: an OS lock (``fcntl.flock``) on ``<output_dir>/job.lock`` while a stage runs, so two runs on
  one job cannot interleave checkpoints and metrics. The kernel drops it when the process dies: no stale lock.
* ``writable_dir``: the folder exists (created) and a file can be written in it, else one line naming it.
* ``check_inputs``: each stage's input is no older than the one before it (data -> adapter -> merged -> gguf);
  otherwise the message names the stage to run again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .config import FinetuneError, JobConfig

__all__ = ["LOCK_NAME", "job_lock", "writable_dir", "data_sha256", "safetensors_problem", "check_inputs"]

LOCK_NAME = "job.lock"


def writable_dir(path: Path, what: str) -> Path:
    """Create ``path`` if needed and make sure a file can be written in it (read-only mounts, permissions,
    a file where the folder should be, an unreachable parent)."""
    if path.exists() and not path.is_dir():
        raise FinetuneError(f"{what} {path} is a file, not a folder: move it away (or change job.output_dir)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise FinetuneError(f"cannot write to {what} {path}: {exc.strerror or exc}; check job.output_dir "
                            "(a writable folder on a mounted disk)") from None
    return path


@contextmanager
def job_lock(cfg: JobConfig, stage: str) -> Iterator[None]:
    """Hold ``<output_dir>/job.lock`` while ``stage`` runs; a second stage on the same job is refused."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock (the workstations and training machines are Linux)
        yield
        return
    out = writable_dir(cfg.out, "job.output_dir")
    path = out / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise FinetuneError(f"cannot write to job.output_dir {out}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").split()
            who = f"pid {holder[0]}" if holder else "another process"
            what = f" (oncotui finetune {holder[1]})" if len(holder) > 1 else ""
            raise FinetuneError(f"job in use by {who}{what}: {out} is locked ({path}); wait for it to "
                                "finish or stop it. Two runs on one job would mix their checkpoints and "
                                "files") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {stage}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def data_sha256(cfg: JobConfig) -> str:
    """The prepared data the trainer reads (train.jsonl, eval.jsonl), as one hash."""
    h = hashlib.sha256()
    for name in ("train.jsonl", "eval.jsonl"):
        p = cfg.data_dir / name
        h.update(name.encode() + b"\0")
        if p.is_file():
            with p.open("rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def safetensors_problem(path: Path) -> str | None:
    """What is wrong with a .safetensors file (cut off, not safetensors), from its header; None: sound."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else -1
            if n < 2 or n > size - 8:
                return f"not a safetensors file, or cut off ({size} bytes)"
            header = json.loads(fh.read(n).decode("utf-8"))
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    except ValueError:  # JSON and UTF-8 errors
        return "its header is damaged"
    if not isinstance(header, dict):
        return "its header is damaged"
    ends = [v.get("data_offsets", [0, 0])[1] for k, v in header.items()
            if k != "__metadata__" and isinstance(v, dict)]
    need = 8 + n + max(ends, default=0)
    if need > size:
        return f"cut off ({size} bytes of {need})"
    return None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def adapter_weights(cfg: JobConfig) -> Path | None:
    for name in ("adapter_model.safetensors", "adapter_model.bin"):
        if (cfg.adapter_dir / name).is_file():
            return cfg.adapter_dir / name
    return None


def _mtimes(folder: Path, pattern: str) -> list[float]:
    return [p.stat().st_mtime for p in folder.glob(pattern) if p.is_file()] if folder.is_dir() else []


def _adapter_vs_data(cfg: JobConfig) -> str | None:
    weights = adapter_weights(cfg)
    if weights is None or not (cfg.data_dir / "train.jsonl").is_file():
        return None
    # an adapter from before train recorded its data cannot be checked (file times would refuse a prepare that
    # wrote the same records again)
    trained_on = _read_json(cfg.out / "train_summary.json").get("data_sha256")
    if not trained_on or trained_on == data_sha256(cfg):
        return None
    return (f"the prepared data in {cfg.data_dir} is not the data the adapter in {cfg.adapter_dir} was "
            "trained on (prepare ran again since): run `oncotui finetune train --config ... --restart` first")


def _merged_vs_adapter(cfg: JobConfig) -> str | None:
    weights, merged = adapter_weights(cfg), _mtimes(cfg.merged_dir, "*.safetensors")
    if weights is None or not merged or min(merged) >= weights.stat().st_mtime:
        return None
    return (f"{cfg.merged_dir} is older than the adapter in {cfg.adapter_dir} (train ran after the last "
            "merge): run `oncotui finetune merge --config ...` first")


def _gguf_vs_inputs(cfg: JobConfig) -> str | None:
    merged, weights = _mtimes(cfg.merged_dir, "*.safetensors"), adapter_weights(cfg)
    for gguf in sorted(cfg.gguf_dir.glob("*.gguf")) if cfg.gguf_dir.is_dir() else []:
        lora = "-lora-" in gguf.name
        source = ([weights.stat().st_mtime] if weights else []) if lora else merged
        if source and gguf.stat().st_mtime < max(source):
            what = cfg.adapter_dir if lora else cfg.merged_dir
            return (f"{gguf} is older than {what} (it was exported from an earlier one): run "
                    "`oncotui finetune export-gguf --config ...` first")
    return None


def check_inputs(cfg: JobConfig, stage: str) -> None:
    """Refuse to run ``stage`` on an input older than the input before it; the message names what to run."""
    checks = {"merge": [_adapter_vs_data], "export-gguf": [_adapter_vs_data, _merged_vs_adapter],
              "verify": [_adapter_vs_data, _merged_vs_adapter, _gguf_vs_inputs]}[stage]
    for check in checks:
        problem = check(cfg)
        if problem:
            raise FinetuneError(f"{stage}: {problem}")
