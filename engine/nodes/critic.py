"""Critic: deterministic checks of the Specialist's draft (engine/safety.py), free-text or evidence-locked.
Fails closed: anything it cannot evaluate is a rejection."""

from __future__ import annotations

from dataclasses import replace

from engine.context import NodeContext
from engine.events import CriticChecked
from engine.safety import critique
from engine.state import ConsultState, CriticVerdict


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    passages = [p for p in state.retrieval.passages if p.relevant] if state.retrieval else []
    result = critique(state.raw_draft, passages, state.draft.model if state.draft else "", state.evidence_locked)
    verdict = CriticVerdict(attempt=state.attempts, passed=result.passed, issues=result.issues)
    ctx.emit(CriticChecked(state.thread_id, state.consult_id, verdict.attempt, verdict.passed, verdict.issues))
    return replace(state, draft=result.draft if result.passed else state.draft,
                   verdicts=state.verdicts + (verdict,))
