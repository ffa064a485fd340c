"""Benchmark: full consults on the embedded defaults (real Chroma, embeddings, reranker and GGUF tiers).

Prints submit -> first event, -> evidence, -> first token, -> final (or HITL halt) per case, and the median.
Uses a throw-away data directory, so it never touches your patients. Run: .venv/bin/python bench/consult.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.config import load_settings  # noqa: E402
from engine.graph import Engine  # noqa: E402

CASES = [
    ("tier1", "Stage II colon cancer after resection, no high-risk features. Is adjuvant chemotherapy advised?"),
    ("tier2", "58-year-old with metastatic pancreatic adenocarcinoma, KRAS G12D and germline BRCA2 mutation, "
              "ECOG 1, untreated. First-line options?"),
    ("out-of-domain", "How should newly diagnosed type 2 diabetes be managed?"),
]


async def one(engine: Engine, pid: str, text: str) -> dict[str, float | str]:
    t0 = time.perf_counter()
    marks: dict[str, float | str] = {}
    async for ev in engine.stream(pid, text):
        now = time.perf_counter() - t0
        marks.setdefault("first_event", now)
        if ev.kind == "EvidenceReady":
            marks.setdefault("evidence", now)
        elif ev.kind == "Token":
            marks.setdefault("first_token", now)
        elif ev.kind in ("Final", "HitlRequired"):
            marks["end"] = now
            marks["outcome"] = ev.status if ev.kind == "Final" else "pending_review"
    return marks


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None).with_overrides({"paths.data_dir": tmp})
        engine = Engine(settings)
        t = time.perf_counter()
        from kb.store import DEMO_DIR

        report = await asyncio.to_thread(engine.kb().ingest, [DEMO_DIR], settings.kb.chunk_chars)
        print(f"demo KB ingest: {report.chunks_added} chunks in {time.perf_counter() - t:.2f} s")
        rows = []
        for rep in range(2):  # the first pass includes model loading (cold); the second is warm
            for i, (name, text) in enumerate(CASES):
                marks = await one(engine, f"PT-{9000 + rep * 10 + i:04d}", text)
                rows.append((rep, name, marks))
                fmt = lambda k: f"{marks[k]:7.2f}s" if k in marks else "      -"  # noqa: E731
                print(f"{'cold' if rep == 0 else 'warm'} {name:<14} first_event {fmt('first_event')}  evidence "
                      f"{fmt('evidence')}  first_token {fmt('first_token')}  end {fmt('end')}  {marks.get('outcome')}")
        warm = [m for rep, _, m in rows if rep == 1]
        print(f"warm median submit->first event {statistics.median(m['first_event'] for m in warm) * 1000:.1f} ms; "
              f"submit->end {statistics.median(m['end'] for m in warm):.2f} s")


if __name__ == "__main__":
    asyncio.run(main())
