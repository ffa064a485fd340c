"""App-level messages posted by the consult workers. Workers only post these; handlers on the app touch the UI."""

from __future__ import annotations

from typing import Any, Literal

from textual.message import Message

Outcome = Literal["done", "cancelled", "failed"]


class EngineEventPosted(Message):
    """One engine event (engine.events.*), forwarded unchanged from a worker to the UI."""

    def __init__(self, event: Any, origin: str = "consult") -> None:
        super().__init__()
        self.event = event
        self.origin = origin  # "consult" (submit / resume) or "review" (a reviewer's decision)


class ConsultEnded(Message):
    """A consult (or resume) stream stopped: finished, cancelled by the user, or failed with a person's message."""

    def __init__(self, thread_id: str, consult_id: str | None, outcome: Outcome, error: str = "",
                 last_step: str = "", origin: str = "consult") -> None:
        super().__init__()
        self.thread_id = thread_id
        self.consult_id = consult_id
        self.outcome = outcome
        self.error = error
        self.last_step = last_step
        self.origin = origin  # "consult" (submit / resume) or "review" (a reviewer's decision)
