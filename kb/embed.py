"""Sentence embeddings from a local sentence-transformers folder (never downloads)."""

from __future__ import annotations

import os
import threading
from typing import Any

from kb.errors import KBError
from kb.models import resolve_embedder, verify_weights


def _force_offline() -> None:
    # Before transformers / huggingface_hub are imported: they read these once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bars in the CLI/TUI


class Embedder:
    """Normalized sentence embeddings. The model loads on first use (``embed``/``dim``/``load``).

    ``spec`` is ``embedded:NAME`` or a local sentence-transformers folder (see :mod:`kb.models`).
    """

    def __init__(self, spec: str, device: str = "cpu", batch_size: int = 32) -> None:
        self.name = spec
        self.device = device or "cpu"
        self.batch_size = max(1, int(batch_size))
        self.path = resolve_embedder(spec)  # fail fast on a missing package/folder
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Embedder:
        if self._model is not None:
            return self
        with self._lock:
            if self._model is None:
                verify_weights(self.name, self.path, "embedder")
                _force_offline()
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as e:  # pragma: no cover - broken install
                    raise KBError(f"sentence-transformers is not importable ({e}); run `make setup`") from e
                try:
                    self._model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
                except Exception as e:
                    raise KBError(f"`embedding.model` = {self.name!r}: could not load {self.path} on device "
                                  f"{self.device!r} ({type(e).__name__}: {e})") from e
        return self

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dim(self) -> int:
        model = self.load()._model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        texts = list(texts)
        if not texts:
            return []
        model = self.load()._model
        vectors = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False)
        return vectors.tolist()

    def __repr__(self) -> str:
        return f"Embedder({self.name!r}, device={self.device!r}, loaded={self.loaded})"


_shared: dict[tuple[str, str, int], Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(spec: str, device: str = "cpu", batch_size: int = 32) -> Embedder:
    """A process-wide Embedder per (spec, device, batch_size), so the weights load once."""
    key = (spec, device or "cpu", int(batch_size))
    with _shared_lock:
        emb = _shared.get(key)
        if emb is None:
            emb = _shared[key] = Embedder(spec, device=device, batch_size=batch_size)
        return emb
