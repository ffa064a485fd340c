"""Benchmark: ingest of the PDQ corpus (../shared/corpus/pdq) into a throw-away Chroma store.

Prints documents, chunks, tokens, seconds and chunks/s for the first ingest, then the time of an unchanged
re-ingest (which must do no embedding work), each with its ratio to the issue's target (full corpus <= 180 s,
unchanged re-ingest <= 5 s). With ``--limit N`` the first-ingest time is also projected to the full corpus at
the measured token rate. The store is kept with --keep DIR (reuse it with bench/kb_retrieval.py --store DIR).

``--fake-embedder`` swaps the model for a hashing embedder (no inference) to measure everything else: reading,
hashing, chunking, Chroma and FTS5 writes, and the unchanged re-ingest of the whole corpus.

Without ../shared (a checkout on another machine) it says so and exits 0.

Run: .venv/bin/python bench/kb_ingest.py [--model embedded:bge-small-en-v1.5-int8] [--limit 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared"
TARGET_INGEST_S = 180.0  # issue #3: full PDQ corpus on this 2-core machine
TARGET_REINGEST_S = 5.0


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


def verdict(measured: float, target: float) -> str:
    ratio = measured / target
    return f"{ratio:.2f}x the target of {target:g} s ({'met' if ratio <= 1 else 'missed'})"


def count_tokens(model: str, files: list[Path], chunk_chars: int, max_tokens: int) -> tuple[int, int]:
    """(chunks, tokens the embedder sees after truncation) for these files; (0, 0) for a non-ONNX model."""
    from kb.chunking import chunk_markdown, doc_hash_of, embedding_text
    from kb.embed import get_embedder

    emb = get_embedder(model, max_tokens=max_tokens)
    if emb.backend != "onnx":
        return 0, 0
    tok = emb.load()._model[1]
    texts = []
    for f in files:
        data = f.read_bytes()
        texts += [embedding_text(c) for c in chunk_markdown(data.decode("utf-8-sig"), str(f), chunk_chars,
                                                             doc_hash=doc_hash_of(data))]
    return len(texts), sum(len(e.ids) for e in tok.encode_batch(texts))


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
        print(f"skipped: no corpus at {args.corpus} (the shared PDQ corpus is not on this machine)")
        return 0
    from kb.onnx import cpu_threads
    from kb.store import KnowledgeBase

    all_files = sorted(args.corpus.glob("*.md"))
    files = all_files[:args.limit] if args.limit else all_files
    max_tokens = settings.embedding.max_tokens
    folder = args.keep or Path(tempfile.mkdtemp(prefix="oncotui-bench-"))
    load = os.getloadavg()[0]
    with KnowledgeBase(chroma_dir=folder, collection="bench", embedder_spec=args.model,
                       reranker_spec=settings.rerank.model, batch_size=settings.embedding.batch_size,
                       max_tokens=max_tokens,
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
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    model = "(fake, no inference)" if args.fake_embedder else args.model
    print(f"model {model} (load {load_s:.1f} s), chunk_chars {args.chunk_chars}, max_tokens {max_tokens}, "
          f"{cpu_threads()} threads, load average at start {load:.1f}, store {folder if args.keep else '(temporary)'}")
    print(f"first ingest: {report.added_docs + report.updated_docs} of {len(all_files)} documents, "
          f"{report.chunks_added} chunks in {first:.1f} s = {report.chunks_added / max(first, 1e-9):.2f} chunks/s"
          + (f"; {len(report.errors)} errors" if report.errors else ""))
    if args.fake_embedder:
        print("  (no inference: this is the floor that reading, chunking and the writes cost)")
    elif len(files) == len(all_files):
        print(f"  full corpus: {verdict(first, TARGET_INGEST_S)}")
    else:
        chunks, tokens = count_tokens(args.model, files, args.chunk_chars, max_tokens)
        all_chunks, all_tokens = count_tokens(args.model, all_files, args.chunk_chars, max_tokens)
        if tokens:
            projected = first * all_tokens / tokens
            print(f"  {tokens / max(first, 1e-9):.0f} tokens/s; the full corpus is {all_chunks} chunks, "
                  f"{all_tokens} tokens: projected {projected:.0f} s = {verdict(projected, TARGET_INGEST_S)}")
    print(f"unchanged re-ingest: {again.skipped_docs} documents skipped, {again.chunks_added} chunks embedded "
          f"in {second:.2f} s = {verdict(second, TARGET_REINGEST_S)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
