"""Builds the knowledge base from settings (kb takes plain parameters; it never imports engine)."""

from __future__ import annotations

from typing import Any

from engine.config import Settings


def open_kb(settings: Settings, rebuild: bool = False, check_model: bool = True) -> Any:
    """``check_model=False``: open a collection built with another embedding model for inspection (``kb stats``,
    ``kb remove``); ``kb.model_mismatch`` then says what is wrong."""
    from kb.store import KnowledgeBase

    return KnowledgeBase(chroma_dir=settings.chroma_dir, chroma_url=settings.kb.chroma_url,
                         collection=settings.kb.collection, embedder_spec=settings.embedding.model,
                         reranker_spec=settings.rerank.model, device=settings.embedding.device,
                         batch_size=settings.embedding.batch_size, rebuild=rebuild,
                         max_tokens=settings.embedding.max_tokens, rerank_max_tokens=settings.rerank.max_tokens,
                         check_model=check_model)


def retrieval_params(settings: Settings, **overrides: Any) -> Any:
    """kb.store.RetrievalParams from ``[kb]`` (distance_threshold 0 = the collection's calibrated threshold)."""
    from kb.store import RetrievalParams

    k = settings.kb
    values = dict(recall_k=k.recall_k, distance_threshold=k.distance_threshold, rerank_k=k.rerank_k,
                  char_budget=k.char_budget, hybrid=k.hybrid, lexical_weight=k.lexical_weight,
                  rerank_order=settings.rerank.order, multi_query_weight=k.multi_query_weight,
                  options_lists=k.options_lists)
    values.update(overrides)
    return RetrievalParams(**values)
