"""Cross-encoder reranking with an ONNX model on onnxruntime's CPU provider (never downloads).

Speed: each (query, passage) pair is truncated to ``max_tokens`` (256 by default, longest-first, so a long
passage loses its tail, not the query); pairs are scored one per forward pass by default (no padding; with a
larger ``batch_size`` they are sorted by length and padded per batch to the longest pair in it); onnxruntime runs with one intra-op thread per available core and full graph optimisation.
"""

from __future__ import annotations

import threading
from typing import Any

from kb.models import resolve_reranker, verify_weights
from kb.onnx import load_onnx_encoder

MAX_LENGTH = 512  # ms-marco-MiniLM-L-12-v2 (vectrix_config.json: max_length 512)
DEFAULT_MAX_TOKENS = 256  # what we feed it: query + passage, truncated longest-first


class CrossEncoderReranker:
    """Scores (query, passage) pairs; higher is more relevant. The model loads on first ``score``."""

    # One pair per forward pass by default: the 5 pairs Stage 3 scores differ in length (135-250 tokens), and
    # padding them to the longest made Stage 3 ~20% slower than scoring each alone (kb/EVAL.md, round 4); on a CPU
    # a 200-token sequence already fills the matrix units, so batching gains nothing back.
    def __init__(self, spec: str, batch_size: int = 1, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.name = spec
        self.batch_size = max(1, int(batch_size))
        self.max_tokens = max(16, min(MAX_LENGTH, int(max_tokens)))
        self.path = resolve_reranker(spec)
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: set[str] = set()
        self._pad_id = 0
        self._lock = threading.Lock()

    def load(self) -> CrossEncoderReranker:
        if self._session is not None:
            return self
        with self._lock:
            if self._session is None:
                verify_weights(self.name, self.path, "reranker")
                session, tok, names = load_onnx_encoder(self.path, "rerank.model", self.name, self.max_tokens)
                pad_id = tok.token_to_id("[PAD]")
                self._pad_id = 0 if pad_id is None else pad_id
                self._tokenizer, self._inputs, self._session = tok, names, session
        return self

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def score(self, query: str, texts: list[str]) -> list[float]:
        """Raw logits, one per text, in order."""
        texts = list(texts)
        if not texts:
            return []
        import numpy as np

        self.load()
        encs = self._tokenizer.encode_batch([(query, t) for t in texts])  # truncated, not padded
        # batch similar lengths together so that little compute goes to padding
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out: list[float] = [0.0] * len(texts)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = encs[i].attention_mask
                types[row, :n] = encs[i].type_ids
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = types
            logits = self._session.run(None, feeds)[0]
            for i, x in zip(idx, np.asarray(logits).reshape(len(idx), -1)[:, 0]):
                out[i] = float(x)
        return out

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.name!r}, loaded={self.loaded})"


_shared: dict[tuple[str, int], CrossEncoderReranker] = {}
_shared_lock = threading.Lock()


def get_reranker(spec: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> CrossEncoderReranker:
    """A process-wide reranker per (spec, max_tokens), so the weights load once."""
    key = (spec, int(max_tokens))
    with _shared_lock:
        rr = _shared.get(key)
        if rr is None:
            rr = _shared[key] = CrossEncoderReranker(spec, max_tokens=max_tokens)
        return rr
