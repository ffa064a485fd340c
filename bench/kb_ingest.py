"""Benchmark: ingest of the PDQ corpus (../shared/corpus/pdq) into a throw-away Chroma store.

Prints documents, chunks, seconds and chunks/s for the first ingest, then the time of an unchanged re-ingest
(which must do no embedding work). The store is kept with --keep DIR (reuse it with bench/kb_retrieval.py).

``--fake-embedder`` swaps the model for a hashing embedder (no inference) to measure everything else: reading,
hashing, chunking, Chroma and FTS5 writes, and the unchanged re-ingest of the whole corpus.

Run: .venv/bin/python bench/kb_ingest.py [--model embedded:bge-small-en-v1.5-int8] [--limit 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"


class HashEmbedder:
    """Deterministic pseudo-embeddings (no model): for measuring the pipeline around the model."""

    name = "fake"
    dim = 384

    def embed(self, texts: list[str]) -> list[list[float]]:
        import hashlib

        import numpy as np

        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out.append((v / np.linalg.norm(v)).tolist())
        return out


def main() -> int:
    from engine.config import load_settings

    settings = load_settings(None)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "pdq")
    ap.add_argument("--model", default=settings.embedding.model, help="embedding.model (default: config)")
    ap.add_argument("--chunk-chars", type=int, default=settings.kb.chunk_chars)
    ap.add_argument("--limit", type=int, default=0, help="only the first N documents (0: all)")
    ap.add_argument("--keep", type=Path, help="Chroma folder to build/keep instead of a temporary one")
    ap.add_argument("--fake-embedder", action="store_true", help="no model: time the pipeline around it")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 2
    from kb.store import KnowledgeBase

    files = sorted(args.corpus.glob("*.md"))
    if args.limit:
        files = files[:args.limit]
    folder = args.keep or Path(tempfile.mkdtemp(prefix="oncotui-bench-"))
    with KnowledgeBase(chroma_dir=folder, collection="bench", embedder_spec=args.model,
                       reranker_spec=settings.rerank.model, batch_size=settings.embedding.batch_size,
                       max_tokens=settings.embedding.max_tokens,
                       embedder=HashEmbedder() if args.fake_embedder else None) as kb:
        t = time.perf_counter()
        if not args.fake_embedder:
            kb.embedder.load()
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        report = kb.ingest(files, chunk_chars=args.chunk_chars)
        first = time.perf_counter() - t
        t = time.perf_counter()
        again = kb.ingest(files, chunk_chars=args.chunk_chars)
        second = time.perf_counter() - t
        print(f"model {'(fake, no inference)' if args.fake_embedder else args.model} (load {load_s:.1f} s), chunk_chars {args.chunk_chars}, store {folder}")
        print(f"first ingest: {report.added_docs + report.updated_docs} documents, {report.chunks_added} chunks in "
              f"{first:.1f} s = {report.chunks_added / max(first, 1e-9):.1f} chunks/s"
              + (f"; {len(report.errors)} errors" if report.errors else ""))
        print(f"unchanged re-ingest: {again.skipped_docs} documents skipped, {again.chunks_added} chunks embedded "
              f"in {second:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
