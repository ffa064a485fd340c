"""Benchmark: retrieval latency per stage over dev-set queries (p50/p95, milliseconds).

Needs an ingested store: by default the configured knowledge base (e.g. ``ONCOTUI_PATHS__DATA_DIR=/tmp/pdq-data``
after ``oncotui kb ingest ../shared/corpus/pdq``); or --store DIR built by ``bench/kb_ingest.py --keep DIR``
(collection "bench"). Stages: 1 recall = query embedding + dense search + BM25/fusion, 2 gate, 3 rerank, 3b options
lists (reading the sections above the kept passages, and scoring the items found: ``kb.options_lists``), 4 trim;
then the total, its ratio to the issue's target (p95 <= 150 ms for the four stages together) and the total
without Stage 3. The gate is opened (threshold 2.0) so that every query runs every stage.

Without ../shared (a checkout on another machine) it says so and exits 0.

--as-consult sends each question as a consult does (redacted, facts appended, and a case's extra multi-query
phrasings, ``kb.multi_query_weight``), e.g. with ``--set kb/case_eval/cases.jsonl``: multi-query recall embeds and
searches up to three phrasings, so Stage 1 is what it costs.

Run: .venv/bin/python bench/kb_retrieval.py [--store DIR] [--model ...] [-n 200] [--no-rerank] [--set FILE]
     [--as-consult]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
TARGET_P95_MS = 150.0  # issue #3: all four stages together


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
    ap.add_argument("--as-consult", action="store_true", help="the consult's query construction (multi-query)")
    args = ap.parse_args()
    if not args.set.is_file():
        print(f"skipped: no query set at {args.set} (the shared dev set is not on this machine)")
        return 0
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
        print(f"the knowledge base at {kb.location} is empty: ingest first (see the docstring)", file=sys.stderr)
        return 2
    params = retrieval_params(settings, rerank=not args.no_rerank, distance_threshold=2.0)  # every stage runs
    from dataclasses import replace

    sent: list[tuple[str, dict[str, Any]]] = [(q, {}) for q in queries]
    if args.as_consult:
        from engine.nodes.corrective_rag import consult_queries

        sent = [consult_queries(q, settings) for q in queries]
    kb.retrieve("warm-up query about breast cancer treatment", params)
    stages: dict[str, list[float]] = {k: [] for k in ("recall", "gate", "rerank", "options", "trim", "total",
                                                       "no_rerank")}
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    for q, fields in sent:
        tm = kb.retrieve(q, replace(params, **fields)).timings
        recall = tm.get("embed", 0) + tm.get("search", 0) + tm.get("lexical", 0) + tm.get("multi_query", 0)
        stages["recall"].append(recall)
        for k in ("gate", "rerank", "options", "trim", "total"):
            stages[k].append(tm.get(k, 0.0))
        stages["no_rerank"].append(tm.get("total", 0.0) - tm.get("rerank", 0.0))
    wall = time.perf_counter() - t0
    print(f"{len(queries)} queries, {kb.count()} chunks, model {kb.embedder_spec}, hybrid {params.hybrid}, "
          f"recall_k {params.recall_k}, "
          + (f"as a consult (multi_query_weight {params.multi_query_weight}), " if args.as_consult else "")
          + "rerank "
          + ("off" if args.no_rerank else f"{settings.rerank.model} ({settings.rerank.max_tokens} tokens)")
          + f", {wall:.1f} s; load average {load:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end")
    print(f"{'stage':<22} {'p50 ms':>9} {'p95 ms':>9}")
    labels = {"recall": "1 recall", "gate": "2 gate", "rerank": "3 rerank", "options": "3b options lists",
              "trim": "4 trim",
              "total": "total (1-4)", "no_rerank": "total without 3"}
    for k, xs in stages.items():
        print(f"{labels[k]:<22} {pct(xs, 50) * 1000:>9.1f} {pct(xs, 95) * 1000:>9.1f}")
    p95 = pct(stages["total"], 95) * 1000
    ratio = p95 / TARGET_P95_MS
    print(f"total p95 {p95:.0f} ms = {ratio:.2f}x the target of {TARGET_P95_MS:g} ms "
          f"({'met' if ratio <= 1 else 'missed'})")
    kb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
