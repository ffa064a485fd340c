"""Typed events the engine streams. The TUI and the CLI are just two consumers of these."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from engine.state import Passage, Routing

NODE_LABELS: dict[str, str] = {
    "ingestion": "Redacting identifiers and extracting case facts",
    "router": "Scoring complexity and choosing a model tier",
    "corrective_rag": "Retrieving guidelines",
    "specialist": "Drafting a recommendation",
    "critic": "Checking the draft",
    "governor": "Checking each claim against the evidence",
    "hitl_gate": "Deciding whether a reviewer must sign off",
    "formatter": "Formatting the answer",
    "fallback": "Preparing a safe refusal",
}


@dataclass(frozen=True)
class Event:
    thread_id: str
    consult_id: str

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, **dataclasses.asdict(self)}


@dataclass(frozen=True)
class NodeStarted(Event):
    node: str
    label: str


@dataclass(frozen=True)
class NodeFinished(Event):
    node: str
    label: str
    seconds: float
    summary: str = ""


@dataclass(frozen=True)
class Notice(Event):
    message: str
    level: str = "info"  # info | warning


@dataclass(frozen=True)
class RoutingDecided(Event):
    routing: Routing


@dataclass(frozen=True)
class EvidenceReady(Event):
    query: str
    passages: tuple[Passage, ...]
    gate_passed: bool
    rag_confidence: float
    closest_title: str | None = None
    closest_distance: float | None = None
    threshold: float | None = None
    gate_k: int = 1
    gate_value: float | None = None


@dataclass(frozen=True)
class Token(Event):
    text: str
    attempt: int = 1


@dataclass(frozen=True)
class CriticChecked(Event):
    attempt: int
    passed: bool
    issues: tuple[str, ...]


@dataclass(frozen=True)
class ClaimsGoverned(Event):
    """The governor's release state for every claim: (claim id, state, support 0..1, first reason or "")."""

    claims: tuple[tuple[str, str, float, str], ...]

    def summary(self) -> str:
        """E.g. "3 supported · 1 blocked", in release order."""
        states = [state for _, state, _, _ in self.claims]
        return " · ".join(f"{states.count(s)} {s}" for s in ("supported", "qualified", "deferred", "blocked")
                          if s in states) or "no claims"


@dataclass(frozen=True)
class HitlRequired(Event):
    reasons: tuple[str, ...]
    approval_id: str


@dataclass(frozen=True)
class Final(Event):
    report: str
    status: str  # "released" | "reviewed" | "refused"
    rag_confidence: float = 0.0
    tier: int | None = None


@dataclass(frozen=True)
class ErrorEvent(Event):
    node: str
    message: str
