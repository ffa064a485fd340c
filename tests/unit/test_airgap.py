"""Nothing phones home: onnxruntime's Linux telemetry stays off once ``kb`` is imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import kb.pdf  # PyMuPDF imports onnxruntime itself: the switches must already be set
from kb.rerank import CrossEncoderReranker
print(CrossEncoderReranker("embedded:ms-marco-minilm-l12-int8").score("stage IV", ["stage IV pancreatic cancer"]))
"""


def test_onnxruntime_writes_no_device_id_and_needs_no_telemetry(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORT_", "HF_", "TRANSFORMERS_"))}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / ".cache"))
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    # with telemetry on, onnxruntime writes ~/.cache/Microsoft/DeveloperTools/.onnxruntime/deviceid at session start
    assert not (tmp_path / ".cache" / "Microsoft").exists(), sorted(str(p) for p in tmp_path.rglob("*"))
