"""``oncotui finetune ...``: the parser lives in oncotui/cli.py (kept light); this runs a parsed command."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .config import FinetuneError

__all__ = ["run", "STAGES"]

STAGES = ("prepare", "train", "merge", "export-gguf", "verify", "setup-converter")


def run(args: argparse.Namespace) -> int:
    """Run one stage. Errors meant for a person print one line (no traceback) and return 2."""
    try:
        return _run(args)
    except FinetuneError as exc:
        print(f"oncotui finetune: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a folder gone or read-only mid-run: the file and why, no traceback
        where = f" {exc.filename}" if exc.filename else ""
        print(f"oncotui finetune: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from . import api

    stage = args.finetune_command
    path = getattr(args, "job_config", None)
    if stage == "setup-converter":
        cfg = api.load_config(path) if path else None
        conv = api.setup_converter(cfg.export.converter_dir if cfg else None,
                                   sdist=Path(args.sdist) if args.sdist else None, force=args.force)
        print(f"llama.cpp converter {conv.version} ready at {conv.root}")
        return 0
    cfg = api.load_config(path)
    if stage == "prepare":
        report = api.prepare(cfg)
        if args.json:
            print(json.dumps(report.to_json()))
        return 0
    if stage == "train":
        # --restart: the same as train.resume = false for this run (train names the flag in what it prints)
        result = api.train(cfg, show_progress=not args.no_progress, restart=args.restart)
        if args.json:
            print(json.dumps(result.to_json()))
        return 0
    if stage == "merge":
        print(api.merge(cfg))
        return 0
    if stage == "export-gguf":
        exported = api.export_gguf(cfg)
        print(json.dumps(exported.to_json()) if args.json else exported.base_gguf)
        return 0
    if stage == "verify":
        result = api.verify(cfg)
        if args.json:
            print(json.dumps(result.to_json()))
        return 0 if result.ok else 1
    raise FinetuneError(f"unknown stage {stage!r}; one of {', '.join(STAGES)}")
