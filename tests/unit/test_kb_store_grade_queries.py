"""Grade queries in kb.store Stage 3 (round 5b): each passage's rerank_score is the max of its logit against the query
and against each grade query; recall and the gate are unchanged. Fake embedder and reranker, no models."""

from __future__ import annotations

import math

import pytest

from kb.store import KnowledgeBase, RetrievalParams


def _unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


CASE = "68-year-old, cirrhosis, Child-Pugh A, portal vein invasion. What first-line systemic therapy?"
FOCUSED = "hepatocellular carcinoma first-line treatment"
CHUNKS = {"staging": [1, 0, 0, 0], "answer": [0.9, 0.3, 0, 0], "radiation": [0.95, 0, 0.2, 0]}
# cross-encoder logits: the whole vignette scores the answering passage low, the focused query high
LOGITS = {CASE: {"staging": -1.0, "answer": -6.0, "radiation": -2.0},
          FOCUSED: {"staging": -4.0, "answer": 3.0, "radiation": -7.0}}


class FakeEmbedder:
    query_prefix = ""

    def embed_query(self, text: str) -> list[float]:
        return _unit([1, 0.1, 0.05, 0])

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [_unit([1, 1, 1, 1]) for _ in texts]


class FakeReranker:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def score(self, query: str, texts: list[str]) -> list[float]:
        self.queries.append(query)
        return [next(v for k, v in LOGITS[query].items() if f"{k} text" in t) for t in texts]


@pytest.fixture()
def kb():
    k = KnowledgeBase(chroma_dir=None, collection="grade-query-test", embedder_spec="fake", reranker_spec="fake",
                      embedder=FakeEmbedder())
    k._collection.upsert(ids=list(CHUNKS), embeddings=[_unit(v) for v in CHUNKS.values()],
                         documents=[f"{name} text" for name in CHUNKS],
                         metadatas=[{"source": "liver.md", "title": "Liver", "section": f"## {name}"} for name in CHUNKS])
    k._reranker = FakeReranker()
    yield k
    k.close()


def _scores(result) -> dict[str, float]:
    return {h.chunk_id: h.rerank_score for h in result.hits}


def test_the_score_is_the_max_over_the_query_and_each_grade_query(kb):
    base = RetrievalParams(recall_k=3, rerank_k=3, distance_threshold=0.5)
    alone = kb.retrieve(CASE, base)
    assert _scores(alone) == {"staging": -1.0, "answer": -6.0, "radiation": -2.0}
    assert kb.reranker.queries == [CASE]  # no grade queries: one cross-encoder pass
    graded = kb.retrieve(CASE, RetrievalParams(recall_k=3, rerank_k=3, distance_threshold=0.5, grade_queries=(FOCUSED,)))
    assert _scores(graded) == {"staging": -1.0, "answer": 3.0, "radiation": -2.0}
    # recall and the gate are unchanged; in recall order (the default) the order is too
    assert [h.chunk_id for h in graded.hits] == [h.chunk_id for h in alone.hits]
    assert [h.distance for h in graded.hits] == [h.distance for h in alone.hits]
    # with the cross-encoder order, the max orders them
    ordered = kb.retrieve(CASE, RetrievalParams(recall_k=3, rerank_k=3, distance_threshold=0.5,
                                                rerank_order="rerank", grade_queries=(FOCUSED,)))
    assert [h.chunk_id for h in ordered.hits] == ["answer", "staging", "radiation"]


def test_a_grade_query_equal_to_the_query_or_blank_costs_nothing(kb):
    kb.retrieve(CASE, RetrievalParams(recall_k=3, distance_threshold=0.5, grade_queries=(CASE, " ", "")))
    assert kb.reranker.queries == [CASE]
