"""Loading an ONNX encoder (bi-encoder or cross-encoder) with its tokenizer on onnxruntime's CPU provider."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kb.errors import KBError


def cpu_threads() -> int:
    """Cores this process may use (affinity-aware)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def load_onnx_encoder(path: Path, key: str, name: str, max_tokens: int,
                      truncation: str = "longest_first") -> tuple[Any, Any, set[str]]:
    """(session, tokenizer without padding, input names); errors name the config key that chose the model."""
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as e:  # pragma: no cover - broken install
        raise KBError(f"onnxruntime/tokenizers are not importable ({e}); run `make setup`") from e
    try:
        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        tok.enable_truncation(max_length=max_tokens, strategy=truncation)
        tok.no_padding()  # callers pad each length-sorted batch themselves
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.intra_op_num_threads = cpu_threads()
        opts.inter_op_num_threads = 1
        # Idle worker threads sleep instead of spin-waiting: on a small shared machine the spinning threads steal
        # the cores the other worker needs (2 threads ran ~3x slower than with this off under load; kb/EVAL.md).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(path / "model.onnx"), sess_options=opts,
                                       providers=["CPUExecutionProvider"])
    except Exception as e:
        raise KBError(f"`{key}` = {name!r}: could not load {path} ({type(e).__name__}: {e})") from e
    names = {i.name for i in session.get_inputs()}
    if not {"input_ids", "attention_mask"} <= names:
        raise KBError(f"`{key}` = {name!r}: {path / 'model.onnx'} takes inputs {sorted(names)}, "
                      "expected input_ids and attention_mask")
    return session, tok, names
