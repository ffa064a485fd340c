"""Multi-query recall in kb.store (round 5): extra phrasings add candidates, the clinician's query still decides.

An in-memory Chroma collection with hand-made 4-d vectors and a fake embedder (no models, no corpus)."""

from __future__ import annotations

import math

import pytest

from kb.store import KnowledgeBase, RetrievalParams


def _unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


OVERVIEW, ANSWER, RADIATION, OTHER = [1, 0, 0, 0], [0.8, 0.6, 0, 0], [0.95, 0, 0.31, 0], [0, 0, 0, 1]
CASE = "68-year-old, cirrhosis, Child-Pugh A, portal vein invasion. What first-line systemic therapy?"
QUERIES = {
    CASE: [1, 0.05, 0.1, 0],  # the whole vignette: overview, radiation, answer, other
    "What first-line systemic therapy?": [0.2, 1, 0, 0.5],  # the question alone: answer, other, overview, radiation
    "far away": [0, 0, 1, 0],
    "exactly the answer": ANSWER,
}


class FakeEmbedder:
    query_prefix = ""

    def embed_query(self, text: str) -> list[float]:
        return _unit(QUERIES[text])

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [_unit([1, 1, 1, 1]) for _ in texts]


@pytest.fixture()
def kb():
    k = KnowledgeBase(chroma_dir=None, collection="multi-query-test", embedder_spec="fake", reranker_spec="fake",
                      embedder=FakeEmbedder())
    chunks = {"overview": OVERVIEW, "answer": ANSWER, "radiation": RADIATION, "other": OTHER}
    k._collection.upsert(ids=list(chunks), embeddings=[_unit(v) for v in chunks.values()],
                         documents=[f"{name} text" for name in chunks],
                         metadatas=[{"source": "liver.md", "title": "Liver", "section": f"## {name}"} for name in chunks])
    yield k
    k.close()


def _cos_distance(a: list[float], b: list[float]) -> float:
    return 1.0 - sum(x * y for x, y in zip(_unit(a), _unit(b)))


def test_an_extra_query_brings_the_answering_chunk_into_recall(kb):
    base = RetrievalParams(recall_k=2, distance_threshold=0.5, rerank=False)
    alone = kb.retrieve(CASE, base)
    assert [h.chunk_id for h in alone.hits] == ["overview", "radiation"]
    multi = kb.retrieve(CASE, RetrievalParams(recall_k=2, distance_threshold=0.5, rerank=False,
                                              extra_queries=("What first-line systemic therapy?",),
                                              multi_query_weight=1.0))
    assert sorted(h.chunk_id for h in multi.hits) == ["answer", "overview"]
    answer = next(h for h in multi.hits if h.chunk_id == "answer")
    # its distance is to the clinician's query (0.175), not to the phrasing that found it (0.28)
    assert answer.distance == pytest.approx(_cos_distance(QUERIES[CASE], ANSWER), abs=1e-4)
    assert "multi_query" in multi.timings
    # weight 0 turns it off: the query alone
    off = kb.retrieve(CASE, RetrievalParams(recall_k=2, distance_threshold=0.5, rerank=False,
                                            extra_queries=("What first-line systemic therapy?",),
                                            multi_query_weight=0.0))
    assert [h.chunk_id for h in off.hits] == ["overview", "radiation"]


def test_the_gate_and_each_passage_are_judged_on_the_clinicians_query(kb):
    # an extra phrasing that sits right on a chunk does not open a gate the query itself does not pass
    refused = kb.retrieve("far away", RetrievalParams(distance_threshold=0.3, rerank=False,
                                                      extra_queries=("exactly the answer",), multi_query_weight=1.0))
    assert not refused.gate_passed and refused.hits == ()
    # and a chunk the extra query finds but that lies beyond the threshold from the query is dropped at Stage 2
    th = 0.19  # overview 0.006, radiation 0.024 and the answering chunk 0.175 from the query all pass
    kept = kb.retrieve(CASE, RetrievalParams(recall_k=3, distance_threshold=th, rerank=False,
                                             extra_queries=("exactly the answer",), multi_query_weight=1.0))
    assert "answer" in [h.chunk_id for h in kept.candidates]
    assert all(h.distance <= th for h in kept.hits)
    kept_strict = kb.retrieve(CASE, RetrievalParams(recall_k=3, distance_threshold=0.1, rerank=False,
                                                    extra_queries=("exactly the answer",), multi_query_weight=1.0))
    assert "answer" not in [h.chunk_id for h in kept_strict.hits]
