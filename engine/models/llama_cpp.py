"""llama.cpp backend (``llama_cpp.Llama``): GGUF models on CPU or GPU, with grammar-constrained JSON output.

``llama_cpp`` is imported only when a model is loaded, so importing this module is cheap.
"""

from __future__ import annotations

import json
import os
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.config import ModelProfile
from engine.models.base import GenerationParams, Message, ModelError, chat_request

GGUF_MAGIC = b"GGUF"
GGUF_VERSIONS = (1, 2, 3)  # the format versions llama.cpp has written


def profile_key(name: str, field: str) -> str:
    return f"models.profiles.{name}.{field}"


def check_gguf(path: Path, key: str) -> None:
    """Fail fast, naming the config key, unless ``path`` is a readable GGUF file."""
    if not str(path).strip() or str(path) == ".":
        raise ModelError(f"{key}: is empty; set it to a GGUF file or embedded:NAME")
    if not path.exists():
        raise ModelError(f"{key}: file not found: {path}")
    if path.is_dir():
        raise ModelError(f"{key}: {path} is a directory, not a GGUF file")
    if not path.is_file():  # a named pipe or a device: reading its magic bytes could wait forever
        raise ModelError(f"{key}: {path} is not a regular file (a pipe or a device?); point it at the GGUF file")
    try:
        with open(path, "rb") as fh:
            header = fh.read(24)
    except OSError as exc:
        raise ModelError(f"{key}: cannot read {path}: {exc.strerror or exc}") from None
    head = header[:4]
    if head != GGUF_MAGIC:
        raise ModelError(f"{key}: {path} is not a GGUF file (it starts with {head!r}, expected {GGUF_MAGIC!r})")
    # the header after the magic (version, tensor count, metadata count): a file with the magic and anything after
    # it passed `models list` as "ok", and only the consult found out
    if len(header) < 24:
        raise ModelError(f"{key}: {path} is cut short ({len(header)} bytes): copy the GGUF file again")
    version, tensors, kvs = struct.unpack("<IQQ", header[4:24])
    if version not in GGUF_VERSIONS or tensors > 10**6 or kvs > 10**5:
        raise ModelError(f"{key}: {path} has the GGUF magic but not a GGUF header (version {version}, "
                         f"{tensors} tensors, {kvs} metadata keys): a damaged file? copy or export it again")


class LlamaCppModel:
    """A ChatModel over one GGUF file. Load with :meth:`load` (the manager does) or lazily on first use."""

    def __init__(self, name: str, profile: ModelProfile, model_path: Path | str, *, label: str = "") -> None:
        self.name = name
        self.label = label or profile.label or name
        self.profile = profile
        self.model_path = Path(model_path)
        self._llm: Any = None
        self._lock = threading.Lock()  # a llama context is not thread-safe: one call at a time

    # -- loading -----------------------------------------------------------------------------------------------
    def load(self) -> LlamaCppModel:
        with self._lock:
            self._ensure_loaded()
        return self

    def _ensure_loaded(self) -> Any:
        if self._llm is not None:
            return self._llm
        path_key = profile_key(self.name, "path")
        check_gguf(self.model_path, path_key)
        lora = self.profile.lora_path.strip()
        lora_path: str | None = None
        if lora:
            lp = Path(lora).expanduser()
            if not lp.is_file():
                raise ModelError(f"{profile_key(self.name, 'lora_path')}: file not found: {lp}")
            lora_path = str(lp)
        # llama.cpp's OpenMP threads spin while waiting; on a busy machine (the TUI, the embedder, a test run)
        # that made SmolLM2 ~10x slower in our measurements. Passive waiting costs little when idle. Read once,
        # when libgomp initialises, i.e. on the first import below (torch ships its own copy, unaffected).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import llama_cpp
        except ImportError as exc:
            raise ModelError(f"{profile_key(self.name, 'backend')} = 'llama_cpp' but llama-cpp-python is not "
                             f"installed ({exc}); pip install llama-cpp-python") from None
        kwargs: dict[str, Any] = {
            "model_path": str(self.model_path),
            "n_ctx": self.profile.n_ctx,
            "n_threads": self.profile.n_threads or os.cpu_count() or 1,
            "n_gpu_layers": self.profile.n_gpu_layers,
            "verbose": False,
        }
        if self.profile.chat_format.strip():
            kwargs["chat_format"] = self.profile.chat_format.strip()
        if lora_path:
            kwargs["lora_path"] = lora_path
        try:
            self._llm = llama_cpp.Llama(**kwargs)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"{path_key}: llama.cpp could not load {self.model_path}: {exc}") from None
        return self._llm

    def close(self) -> None:
        with self._lock:
            llm, self._llm = self._llm, None
        if llm is not None and hasattr(llm, "close"):
            llm.close()

    # -- generation --------------------------------------------------------------------------------------------
    def _request(self, messages: list[Message], params: GenerationParams, stream: bool) -> dict[str, Any]:
        return chat_request(messages, params, self.profile.max_tokens, stream)

    def _fail(self, exc: Exception, params: GenerationParams) -> ModelError:
        text = str(exc)
        if "exceed context window" in text:
            return ModelError(f"Model '{self.name}': the prompt is too long for its context window "
                              f"({profile_key(self.name, 'n_ctx')} = {self.profile.n_ctx}): {text}")
        if params.json_schema is not None and ("grammar" in text.lower() or "schema" in text.lower()):
            return ModelError(f"Model '{self.name}': the JSON schema could not be turned into a grammar: {text}")
        return ModelError(f"Model '{self.name}' failed: {text}")

    def generate(self, messages: list[Message], params: GenerationParams) -> str:
        with self._lock:
            llm = self._ensure_loaded()
            try:
                out = llm.create_chat_completion(**self._request(messages, params, stream=False))
            except (ValueError, RuntimeError, json.JSONDecodeError) as exc:
                raise self._fail(exc, params) from None
        return out["choices"][0]["message"].get("content") or ""

    def stream(self, messages: list[Message], params: GenerationParams) -> Iterator[str]:
        # The lock is held until the generator finishes or is closed (a `for` that breaks closes it on release).
        with self._lock:
            llm = self._ensure_loaded()
            chunks: Any = None
            try:
                chunks = llm.create_chat_completion(**self._request(messages, params, stream=True))
                for chunk in chunks:
                    delta = chunk["choices"][0].get("delta") or {}
                    piece = delta.get("content")
                    if piece:
                        yield piece
            except (ValueError, RuntimeError, json.JSONDecodeError) as exc:
                raise self._fail(exc, params) from None
            finally:
                if chunks is not None and hasattr(chunks, "close"):
                    chunks.close()
