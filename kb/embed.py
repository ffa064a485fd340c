"""Sentence embeddings from local weights (never downloads): sentence-transformers (torch) or ONNX (onnxruntime).

* ``embedded:all-minilm-l6-v2`` and local sentence-transformers folders run on torch (mean pooling as configured
  in the folder).
* ``embedded:bge-small-en-v1.5-int8`` (and local folders with ``model.onnx`` + ``tokenizer.json`` and no
  ``modules.json``) run on onnxruntime's CPU provider: CLS pooling, then L2 normalisation. BGE queries get the
  prefix "Represent this sentence for searching relevant passages: " (``embed_query``); passages get none.

Both truncate passages to ``max_tokens`` tokens (256 by default: a 900-character chunk is about 230 tokens), sort
texts by length before batching so that little compute goes to padding, and return unit-length vectors. Queries are
truncated only at ``QUERY_MAX_TOKENS`` (or the model's own limit): ``max_tokens`` trades passage tails for ingest
speed, and must not cut off a long clinical case typed as the query.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from kb.errors import KBError
from kb.models import embedder_info, resolve_embedder, verify_weights
from kb.onnx import load_onnx_encoder

DEFAULT_MAX_TOKENS = 256
QUERY_MAX_TOKENS = 512  # BERT-family position limit


def _force_offline() -> None:
    # Before transformers / huggingface_hub are imported: they read these once. (The offline switches themselves
    # are set by kb.airgap when kb is imported.)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bars in the CLI/TUI


class Embedder:
    """Normalized sentence embeddings. The model loads on first use (``embed``/``dim``/``load``).

    ``spec`` is ``embedded:NAME`` or a local model folder (see :mod:`kb.models`). ``embed`` is for passages,
    ``embed_query`` for queries (adds the model's query prefix, if it has one).
    """

    def __init__(self, spec: str, device: str = "cpu", batch_size: int = 32,
                 max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.name = spec
        self.device = device or "cpu"
        self.batch_size = max(1, int(batch_size))
        self.max_tokens = max(8, int(max_tokens))
        self.path = resolve_embedder(spec)  # fail fast on a missing package/folder
        self.info = embedder_info(spec, self.path)
        self.backend = "onnx" if self.info is not None else "sentence-transformers"
        self.query_prefix = self.info.query_prefix if self.info is not None else ""
        self._model: Any = None  # SentenceTransformer, or (onnx session, tokenizer, input names)
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._query_tok: Any = None  # ONNX: the tokenizer with the query limit
        self._st_limit = QUERY_MAX_TOKENS  # sentence-transformers: the model's own limit
        self._encode_lock = threading.Lock()  # sentence-transformers: max_seq_length is switched for queries

    def load(self) -> Embedder:
        if self._model is not None:
            return self
        with self._lock:
            if self._model is None:
                verify_weights(self.name, self.path, "embedder")
                self._model = self._load_onnx() if self.backend == "onnx" else self._load_st()
        return self

    def _load_st(self) -> Any:
        _force_offline()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:  # pragma: no cover - broken install
            raise KBError(f"sentence-transformers is not importable ({e}); run `make setup`") from e
        _check_torch_device(self.device)
        try:
            model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
        except Exception as e:
            raise KBError(f"`embedding.model` = {self.name!r}: could not load {self.path} on device "
                          f"{self.device!r} ({type(e).__name__}: {e})") from e
        self._st_limit = min(int(model.max_seq_length or QUERY_MAX_TOKENS), QUERY_MAX_TOKENS)
        model.max_seq_length = min(self._st_limit, self.max_tokens)
        return model

    def _load_onnx(self) -> Any:
        if self.device not in ("cpu", ""):
            raise KBError(f"`embedding.model` = {self.name!r} runs on onnxruntime's CPU provider; set "
                          f"embedding.device = \"cpu\" (configured {self.device!r})")
        return load_onnx_encoder(self.path, "embedding.model", self.name, self.max_tokens)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dim(self) -> int:
        model = self.load()._model
        if self.backend == "onnx":
            if self._dim is None:
                self._dim = len(self.embed(["dimension probe"])[0])
            return self._dim
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit-length vector per passage text, in order."""
        texts = list(texts)
        if not texts:
            return []
        model = self.load()._model
        if self.backend == "onnx":
            return self._embed_onnx(texts, self._model[1])
        with self._encode_lock:
            vectors = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query (with the model's query prefix, if any), truncated only at
        ``QUERY_MAX_TOKENS``."""
        model = self.load()._model
        text = self.query_prefix + text
        if self.backend == "onnx":
            if self._query_tok is None:
                from tokenizers import Tokenizer

                tok = Tokenizer.from_str(self._model[1].to_str())  # a copy: ingest threads keep theirs
                tok.enable_truncation(max_length=QUERY_MAX_TOKENS)
                tok.no_padding()
                self._query_tok = tok
            return self._embed_onnx([text], self._query_tok)[0]
        with self._encode_lock:
            model.max_seq_length = self._st_limit
            try:
                vector = model.encode([text], normalize_embeddings=True, convert_to_numpy=True,
                                      show_progress_bar=False)[0]
            finally:
                model.max_seq_length = min(self._st_limit, self.max_tokens)
        return vector.tolist()

    def _embed_onnx(self, texts: list[str], tok: Any) -> list[list[float]]:
        import numpy as np

        session, _tok, names = self._model
        encs = tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(texts), 0), dtype=np.float32)
        rows: dict[int, Any] = {}
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = np.asarray(session.run(None, feeds)[0], dtype=np.float32)
            if hidden.ndim == 3:
                if self.info is not None and self.info.pooling == "mean":
                    m = mask[:, :, None].astype(np.float32)
                    pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
                else:
                    pooled = hidden[:, 0, :]  # CLS
            else:  # already pooled
                pooled = hidden
            pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            for row, i in enumerate(idx):
                rows[i] = pooled[row]
        out = np.stack([rows[i] for i in range(len(texts))])
        return out.tolist()

    def __repr__(self) -> str:
        return f"Embedder({self.name!r}, backend={self.backend}, device={self.device!r}, loaded={self.loaded})"


_shared: dict[tuple[str, str, int, int], Embedder] = {}
_shared_lock = threading.Lock()


def _check_torch_device(device: str) -> None:
    """KBError naming `embedding.device` for a device torch cannot parse or does not have, before any weights load
    (the load would fail with torch's own words, blamed on embedding.model)."""
    if device == "cpu":
        return
    import torch

    fix = 'set embedding.device = "cpu" (or ONCOTUI_EMBEDDING__DEVICE=cpu)'
    try:
        kind = torch.device(device).type
    except (RuntimeError, ValueError) as e:
        raise KBError(f"`embedding.device` = {device!r} is not a torch device ({e}); {fix}") from None
    backend = getattr(torch, kind, None) if kind != "mps" else getattr(torch.backends, "mps", None)
    available = getattr(backend, "is_available", None)
    if callable(available) and not available():
        raise KBError(f"`embedding.device` = {device!r}, but torch sees no {kind} device here "
                      f"(torch.{kind}.is_available() is False); {fix}")


def get_embedder(spec: str, device: str = "cpu", batch_size: int = 32,
                 max_tokens: int = DEFAULT_MAX_TOKENS) -> Embedder:
    """A process-wide Embedder per (spec, device, batch_size, max_tokens), so the weights load once."""
    key = (spec, device or "cpu", int(batch_size), int(max_tokens))
    with _shared_lock:
        emb = _shared.get(key)
        if emb is None:
            emb = _shared[key] = Embedder(spec, device=device, batch_size=batch_size, max_tokens=max_tokens)
        return emb
