"""Layering and start-up: headless packages never import Textual; --help imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ["torch", "transformers", "llama_cpp", "chromadb", "sentence_transformers", "onnxruntime", "textual"]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_headless_packages_never_import_textual_or_oncotui():
    mods = _modules_after("import engine.graph, engine.checkpoint, engine.safety, kb.store, kb.chunking, finetune")
    assert not {m for m in mods if m.split(".")[0] in ("textual", "oncotui")}


def test_kb_does_not_import_engine():
    mods = _modules_after("import kb.store, kb.chunking")
    assert not {m for m in mods if m.split(".")[0] == "engine"}


def test_help_imports_nothing_heavy():
    mods = _modules_after("from oncotui.cli import build_parser; build_parser().format_help()")
    assert not {m for m in mods if m.split(".")[0] in HEAVY}


def test_help_explains_the_commands():
    out = subprocess.run([sys.executable, "-m", "oncotui", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0
    for word in ("ask", "route", "patients", "hitl", "resume", "kb", "models", "clinically useless"):
        assert word in out.stdout
