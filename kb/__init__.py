"""oncotui knowledge base: guideline chunking, embedding, Chroma storage and gated retrieval.

The lowest layer of the project: it imports neither ``engine`` nor ``oncotui`` and takes plain parameters.
``import kb`` is cheap; chromadb, sentence-transformers, torch, onnxruntime and PyMuPDF load only when a model or
store is first used. Public names are importable from here (resolved lazily) or from their submodules:

* :mod:`kb.models` — ``resolve_embedder``, ``resolve_reranker``, ``KBError``
* :mod:`kb.embed` — ``Embedder`` (sentence-transformers, normalized vectors)
* :mod:`kb.rerank` — ``CrossEncoderReranker`` (ONNX cross-encoder, raw logits)
* :mod:`kb.chunking` — ``Chunk``, ``parse_markdown``, ``chunk_markdown``, ``trim_to_budget``
* :mod:`kb.store` — ``KnowledgeBase``, ``RetrievalParams``, ``Hit``, ``RetrievalResult``, ``IngestReport``,
  ``DEMO_DIR``

Default distance gate (``RetrievalParams.distance_threshold`` = 0.75 cosine distance, all-MiniLM-L6-v2), measured
as the distance of the nearest chunk (demo set: 12 docs / 96 chunks; a 6-document NCI PDQ sample: 505 chunks):

* specific oncology treatment questions: 0.21-0.49; patient-case style questions: 0.35-0.48;
* vague oncology questions with no cancer type ("PD-L1", "side effects of immunotherapy", "second-line options
  after progression"): 0.48-0.79; oncology topics the sample lacks (glioblastoma, CLL): 0.49-0.58;
* other medicine (type 2 diabetes, kidney stones, asthma, pneumonia, heart failure, RA): 0.55-0.79;
* unrelated (car engine repair, banana bread, Kubernetes, football): 0.88-0.95.

Distance cannot separate other medicine from vague oncology, so the gate rejects the clearly unrelated (and the
vaguest questions, which the engine can rewrite with the case's context) and leaves the rest to the cross-encoder
grade (best-passage logits seen: in-domain >= -2.7, other medicine <= -5.6).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from kb.errors import KBError

_EXPORTS = {
    "resolve_embedder": "kb.models",
    "resolve_reranker": "kb.models",
    "Embedder": "kb.embed",
    "get_embedder": "kb.embed",
    "CrossEncoderReranker": "kb.rerank",
    "get_reranker": "kb.rerank",
    "Chunk": "kb.chunking",
    "parse_markdown": "kb.chunking",
    "chunk_markdown": "kb.chunking",
    "trim_to_budget": "kb.chunking",
    "KnowledgeBase": "kb.store",
    "RetrievalParams": "kb.store",
    "Hit": "kb.store",
    "RetrievalResult": "kb.store",
    "IngestReport": "kb.store",
    "DEMO_DIR": "kb.store",
}

__all__ = ["KBError", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kb' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
