"""Chroma's HNSW search is approximate: asked for a question's 30 nearest chunks of the PDQ store it missed some of
the true 30, and answered differently from one process to the next (the same consult got another fifth passage).
kb.store asks for ``ANN_DEPTH`` and keeps the nearest: recall is the exact nearest neighbours.

An in-memory collection of random vectors (the hardest case for a graph index) and a fake embedder."""

from __future__ import annotations

import numpy as np
import pytest

from kb.store import KnowledgeBase, RetrievalParams

DIM, N, K = 48, 3000, 30
RNG = np.random.default_rng(7)
VECTORS = RNG.normal(size=(N, DIM)).astype(np.float32)
VECTORS /= np.linalg.norm(VECTORS, axis=1, keepdims=True)
QUESTIONS = {f"q{i}": v / np.linalg.norm(v) for i, v in enumerate(RNG.normal(size=(12, DIM)).astype(np.float32))}


class FakeEmbedder:
    query_prefix = ""

    def embed_query(self, text: str) -> list[float]:
        return QUESTIONS[text].tolist()

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("nothing is embedded here")


@pytest.fixture(scope="module")
def kb():
    k = KnowledgeBase(chroma_dir=None, collection="exact-recall-test", embedder_spec="fake", reranker_spec="fake",
                      embedder=FakeEmbedder())
    for start in range(0, N, 500):
        ids = [f"c{i:04d}" for i in range(start, min(start + 500, N))]
        k._collection.upsert(ids=ids, embeddings=VECTORS[start:start + 500].tolist(), documents=ids,
                             metadatas=[{"source": "r.md", "title": "R", "section": "## R"} for _ in ids])
    yield k
    k.close()


def _exact(name: str) -> list[str]:
    return [f"c{i:04d}" for i in np.argsort(-(VECTORS @ QUESTIONS[name]))[:K]]


def test_recall_is_the_exact_nearest_chunks(kb):
    for name in QUESTIONS:
        result = kb.retrieve(name, RetrievalParams(recall_k=K, distance_threshold=2.0, rerank=False, rerank_k=K,
                                                   char_budget=10**6, options_lists=0))
        assert [h.chunk_id for h in result.candidates] == _exact(name)
        exact = sorted(1.0 - float(VECTORS[int(c[1:])] @ QUESTIONS[name]) for c in _exact(name))
        assert kb.nearest_distances(name, K) == pytest.approx(exact, abs=1e-5)
