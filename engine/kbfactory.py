"""Builds the knowledge base from settings (kb takes plain parameters; it never imports engine)."""

from __future__ import annotations

from typing import Any

from engine.config import Settings


def open_kb(settings: Settings, rebuild: bool = False) -> Any:
    from kb.store import KnowledgeBase

    return KnowledgeBase(chroma_dir=settings.chroma_dir, chroma_url=settings.kb.chroma_url,
                         collection=settings.kb.collection, embedder_spec=settings.embedding.model,
                         reranker_spec=settings.rerank.model, device=settings.embedding.device,
                         batch_size=settings.embedding.batch_size, rebuild=rebuild)
