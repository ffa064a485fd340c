"""Benchmark: retrieval latency per stage over dev-set queries (p50/p95, milliseconds).

Needs an ingested store: by default the configured knowledge base; or --store DIR built by
``bench/kb_ingest.py --keep DIR`` (collection "bench"). Stages: 1 recall = embed + dense search + BM25/fusion,
2 gate, 3 rerank, 4 trim; and the total.

Run: .venv/bin/python bench/kb_retrieval.py [--store DIR] [--model ...] [-n 200] [--no-rerank]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def main() -> int:
    from engine.config import load_settings
    from engine.kbfactory import open_kb, retrieval_params

    settings = load_settings(None)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", type=Path, default=SHARED / "eval" / "retrieval_dev.jsonl")
    ap.add_argument("-n", type=int, default=200, help="queries (cycled if the set is shorter)")
    ap.add_argument("--store", type=Path, help="Chroma folder from bench/kb_ingest.py --keep")
    ap.add_argument("--model", default=settings.embedding.model)
    ap.add_argument("--collection", default="bench")
    ap.add_argument("--no-rerank", action="store_true")
    args = ap.parse_args()
    queries = [json.loads(line)["query"] for line in args.set.read_text().splitlines() if line.strip()]
    queries = (queries * (args.n // max(len(queries), 1) + 1))[:args.n]
    if args.store:
        from kb.store import KnowledgeBase

        kb = KnowledgeBase(chroma_dir=args.store, collection=args.collection, embedder_spec=args.model,
                           reranker_spec=settings.rerank.model, max_tokens=settings.embedding.max_tokens,
                           rerank_max_tokens=settings.rerank.max_tokens)
    else:
        kb = open_kb(settings)
    if kb.count() == 0:
        print("the knowledge base is empty: ingest first", file=sys.stderr)
        return 2
    params = retrieval_params(settings, rerank=not args.no_rerank, distance_threshold=2.0)  # every stage runs
    kb.retrieve("warm-up query about breast cancer treatment", params)
    stages: dict[str, list[float]] = {k: [] for k in ("recall", "gate", "rerank", "trim", "total")}
    t0 = time.perf_counter()
    for q in queries:
        tm = kb.retrieve(q, params).timings
        stages["recall"].append(tm.get("embed", 0) + tm.get("search", 0) + tm.get("lexical", 0))
        for k in ("gate", "rerank", "trim", "total"):
            stages[k].append(tm.get(k, 0.0))
    wall = time.perf_counter() - t0
    print(f"{len(queries)} queries, {kb.count()} chunks, model {kb.embedder_spec}, hybrid {params.hybrid}, "
          f"rerank {params.rerank} ({settings.rerank.max_tokens} tokens), {wall:.1f} s")
    print(f"{'stage':<8} {'p50 ms':>8} {'p95 ms':>8}")
    for k, xs in stages.items():
        print(f"{k:<8} {pct(xs, 50) * 1000:>8.1f} {pct(xs, 95) * 1000:>8.1f}")
    kb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
