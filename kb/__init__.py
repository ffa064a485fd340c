"""oncotui knowledge base: guideline chunking, embedding, Chroma storage and gated retrieval.

The lowest layer of the project: it imports neither ``engine`` nor ``oncotui`` and takes plain parameters.
``import kb`` is cheap; chromadb, sentence-transformers, torch, onnxruntime and PyMuPDF load only when a model or
store is first used. Public names are importable from here (resolved lazily) or from their submodules:

* :mod:`kb.models` — ``resolve_embedder``, ``resolve_reranker``, ``KBError``
* :mod:`kb.embed` — ``Embedder`` (sentence-transformers on torch, or INT8 ONNX BGE on onnxruntime; unit vectors)
* :mod:`kb.rerank` — ``CrossEncoderReranker`` (ONNX cross-encoder, raw logits, pairs truncated to 256 tokens)
* :mod:`kb.lexical` — ``LexicalIndex`` (BM25 over chunks in SQLite FTS5) and ``rrf`` (reciprocal rank fusion)
* :mod:`kb.chunking` — ``Chunk``, ``parse_markdown``, ``chunk_markdown``, ``trim_to_budget``
* :mod:`kb.pdf` — ``extract_pdf``, ``pdf_sections`` (reading order across two columns, running heads stripped,
  headings detected into section paths, page numbers kept)
* :mod:`kb.audience` — ``patient_facing`` (the documented heuristic that skips patient-facing material)
* :mod:`kb.evaluate` — recall@k / MRR, gate rates, the calibration rule (maximise balanced accuracy),
  ``calibrate_gate``, ``calibrate_demo`` (the shipped demo question sets in ``kb/demo_calibration``)
* :mod:`kb.store` — ``KnowledgeBase``, ``RetrievalParams``, ``Hit``, ``RetrievalResult``, ``IngestReport``,
  ``DEMO_DIR``, ``DEMO_CALIBRATION_DIR``

Stage 2 threshold: ``kb.distance_threshold`` when > 0, else the threshold ``oncotui kb calibrate`` stored in the
collection's metadata, else ``kb.store.DEFAULT_THRESHOLDS`` for the embedder. Measured figures (dev sets with
the PDQ corpus, both embedders, with and without rerank, gate rates, ingest and latency) are in ``kb/EVAL.md``.

Earlier hand measurements for all-MiniLM-L6-v2 (nearest-chunk cosine distance; demo set and a 6-document PDQ
sample): specific oncology questions 0.21-0.49; vague oncology questions with no cancer type 0.48-0.79; other
medicine 0.55-0.79; unrelated topics 0.88-0.95. Distance alone cannot separate other medicine from vague oncology,
so the gate rejects the clearly unrelated and the cross-encoder grade does the rest (best-passage logits seen:
in-domain >= -2.7, other medicine <= -5.6).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import kb.airgap  # noqa: F401  (first: offline switches before onnxruntime, PyMuPDF or Hugging Face load)
from kb.errors import KBError

_EXPORTS = {
    "resolve_embedder": "kb.models",
    "resolve_reranker": "kb.models",
    "Embedder": "kb.embed",
    "LexicalIndex": "kb.lexical",
    "rrf": "kb.lexical",
    "extract_pdf": "kb.pdf",
    "pdf_sections": "kb.pdf",
    "patient_facing": "kb.audience",
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
    "DEMO_CALIBRATION_DIR": "kb.store",
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
