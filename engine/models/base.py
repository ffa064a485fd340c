"""The one model protocol every backend implements, plus the errors the engine and the UI understand.

Backends are synchronous (llama.cpp and transformers are blocking C/torch calls); the engine runs them in a worker
thread and pumps streamed tokens onto its event queue.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}


class ModelError(Exception):
    """A model could not be loaded or could not answer. The message is meant for a person."""


class ModelUnavailable(ModelError):
    """No model could be loaded for a tier, even after walking the fallback chain."""


@dataclass(frozen=True)
class GenerationParams:
    max_tokens: int = 512
    temperature: float = 0.2
    json_schema: dict[str, Any] | None = None  # constrain output to this JSON schema when the backend can
    stop: tuple[str, ...] = ()
    # Sampling seed of each request: the same prompt gets the same answer whatever ran before (llama-cpp-python
    # otherwise seeds each call from the previous one, so a consult's picks depended on the consults before it).
    # None: the backend's own
    seed: int | None = 0


@runtime_checkable
class ChatModel(Protocol):
    name: str  # profile name, e.g. "smollm2"
    label: str  # human description, e.g. "SmolLM2-135M (tiny demo model)"

    def generate(self, messages: list[Message], params: GenerationParams) -> str: ...

    def stream(self, messages: list[Message], params: GenerationParams) -> Iterator[str]: ...


def chat_request(messages: list[Message], params: GenerationParams, max_tokens_cap: int,
                 stream: bool) -> dict[str, Any]:
    """The OpenAI-style chat-completion arguments that llama.cpp and OpenAI-compatible servers both accept.

    The profile's max_tokens is a ceiling; a JSON schema becomes llama.cpp's grammar-constrained json_object.
    """
    req: dict[str, Any] = {"messages": messages, "max_tokens": min(params.max_tokens, max_tokens_cap),
                           "temperature": params.temperature, "stream": stream}
    if params.stop:
        req["stop"] = list(params.stop)
    if params.seed is not None:
        req["seed"] = params.seed
    if params.json_schema is not None:
        req["response_format"] = {"type": "json_object", "schema": params.json_schema}
    return req
