"""The knowledge-base benchmarks run anywhere: without the shared corpus / dev set they say so and exit 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("script", "args"), [
    ("bench/kb_ingest.py", ["--corpus"]),
    ("bench/kb_retrieval.py", ["--set"]),
])
def test_kb_bench_skips_cleanly_without_shared_data(tmp_path, script, args):
    missing = tmp_path / "no-such-shared-data"
    proc = subprocess.run([sys.executable, str(REPO / script), *args, str(missing)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("skipped:") and str(missing) in proc.stdout
