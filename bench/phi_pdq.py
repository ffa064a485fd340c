"""Benchmark: the PHI redactor over the PDQ corpus (../shared/corpus/pdq), guideline text with no patient in it.

What the redactor finds there is mostly real identifiers of another kind (citation authors, trial dates, cities of
cooperative groups) and partly false spans (a drug or a heading read as a name). A rule change should not add
spans here: ``--save FILE`` keeps this run's spans, ``--compare FILE`` prints the spans that are new or gone since
(file, type and text), so "no new span" is a measured claim. ``--case upper|lower`` redacts the text upper- or
lower-cased (notes typed in capitals or without them), where more medical words look like names.

Prints spans per type, characters per second and the compare result. Without ../shared it says so and exits 0.

Run: .venv/bin/python bench/phi_pdq.py [--save /tmp/pdq-spans.json] [--compare /tmp/pdq-spans.json]
     [--case upper] [--limit 20] [--jobs 2]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus" / "pdq"

Span = tuple[str, str]  # (type, text)


def redact_file(args: tuple[str, str]) -> tuple[str, list[Span], int]:
    from engine.phi import redact

    path, case = args
    text = Path(path).read_text(encoding="utf-8")
    text = text.upper() if case == "upper" else text.lower() if case == "lower" else text
    result = redact(text)
    return Path(path).name, [(kind, text[s:e]) for kind, s, e in result.spans], len(text)


def compare(now: dict[str, list[Span]], before: dict[str, list[Span]]) -> tuple[list[str], list[str]]:
    """Spans (as 'file: TYPE text') new in ``now`` and gone from ``before``, counted as multisets per file."""
    new: list[str] = []
    gone: list[str] = []
    for name in sorted(set(now) | set(before)):
        a = collections.Counter(map(tuple, now.get(name, [])))
        b = collections.Counter(map(tuple, before.get(name, [])))
        new += [f"{name}: {kind} {text!r}" for (kind, text), n in (a - b).items() for _ in range(n)]
        gone += [f"{name}: {kind} {text!r}" for (kind, text), n in (b - a).items() for _ in range(n)]
    return new, gone


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="folder of Markdown files (default: %(default)s)")
    ap.add_argument("--case", choices=("as-is", "upper", "lower"), default="as-is", help="redact the text re-cased")
    ap.add_argument("--limit", type=int, default=0, help="only the first N files (sorted by name)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default: %(default)s)")
    ap.add_argument("--save", type=Path, help="write this run's spans (JSON) for a later --compare")
    ap.add_argument("--compare", type=Path, help="spans saved by an earlier run: print what is new and gone")
    args = ap.parse_args(argv)
    files = sorted(str(p) for p in args.corpus.glob("*.md"))
    if not files:
        print(f"skipped: no Markdown files at {args.corpus} (../shared is absent on this machine)")
        return 0
    files = files[:args.limit] if args.limit > 0 else files
    start = time.perf_counter()
    spans: dict[str, list[Span]] = {}
    chars = 0
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for name, found, n in pool.map(redact_file, [(f, args.case) for f in files]):
            spans[name] = found
            chars += n
    seconds = time.perf_counter() - start
    by_type = collections.Counter(kind for found in spans.values() for kind, _ in found)
    print(f"{len(files)} files, {chars / 1e6:.2f} M characters ({args.case}), {seconds:.1f} s with {args.jobs} "
          f"workers: {chars / seconds / 1e3:.0f} k characters/s")
    print(f"spans: {sum(by_type.values())}  " + "  ".join(f"{k} {v}" for k, v in by_type.most_common()))
    if args.save:
        args.save.write_text(json.dumps(spans), encoding="utf-8")
        print(f"saved to {args.save}")
    if args.compare:
        before = json.loads(args.compare.read_text(encoding="utf-8"))
        if args.limit > 0:
            before = {k: v for k, v in before.items() if k in spans}
        new, gone = compare(spans, before)
        print(f"compared with {args.compare}: {len(new)} new spans, {len(gone)} gone")
        for line in new[:50]:
            print(f"  + {line}")
        for line in gone[:50]:
            print(f"  - {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
