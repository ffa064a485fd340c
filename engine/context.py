"""What a node may use while it runs: settings, models, the knowledge base and an event sink."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.config import Settings
from engine.events import Event, Token
from engine.models.base import ChatModel, GenerationParams, Message, ModelError


class ModelSource(Protocol):
    def get(self, tier: int) -> Any: ...  # -> engine.models.manager.LoadedModel


class KnowledgeSource(Protocol):
    def retrieve(self, query: str, params: Any, anchor: str | None = None) -> Any: ...

    def rerank_scores(self, query: str, texts: list[str]) -> list[float]: ...


@dataclass
class NodeContext:
    settings: Settings
    models: ModelSource
    kb: Callable[[], KnowledgeSource]  # lazy: the KB (and its models) load on first retrieval
    emit: Callable[[Event], None]
    stop: threading.Event = field(default_factory=threading.Event)


async def stream_model(ctx: NodeContext, model: ChatModel, messages: list[Message], params: GenerationParams,
                       *, thread_id: str, consult_id: str, attempt: int, timeout_s: float,
                       emit_tokens: bool = True, show: Callable[[str], str] | None = None) -> str:
    """Run a blocking model stream in a worker thread, emitting Token events on the loop as they arrive.

    ``show`` turns each piece into what the reader is shown (possibly nothing yet); the raw text is returned as is.

    The worker checks ``ctx.stop`` between tokens, so a cancel or a timeout stops generation promptly instead
    of leaving a model running in the background.
    """
    loop = asyncio.get_running_loop()
    chunks: list[str] = []

    def work() -> None:
        for piece in model.stream(messages, params):
            if ctx.stop.is_set():
                break
            chunks.append(piece)
            shown = show(piece) if show is not None and piece else piece
            if emit_tokens and shown:
                loop.call_soon_threadsafe(ctx.emit, Token(thread_id, consult_id, shown, attempt))

    try:
        await asyncio.wait_for(asyncio.to_thread(work), timeout=timeout_s)
    except TimeoutError:
        ctx.stop.set()
        raise ModelError(f"Model '{model.name}' did not finish within {timeout_s:.0f} s") from None
    except asyncio.CancelledError:
        ctx.stop.set()
        raise
    return "".join(chunks)
