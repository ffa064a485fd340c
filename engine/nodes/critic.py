"""Critic: deterministic checks of the Specialist's draft (engine/safety.py), free-text or evidence-locked.
Fails closed: anything it cannot evaluate is a rejection.

Evidence-locked drafts are also checked against the case (engine/casefit.py): no sentence left that fits the case
(every one contradicts it, its section's stage, or comes from a passage about another cancer) is a rejection with
the case-fit reason (the consult is refused), and a chosen sentence that contradicts the case
(possible only with a backend that does not enforce the schema's enum) is a rejection with feedback for the retry.
"""

from __future__ import annotations

from dataclasses import replace

from engine.casefit import locked_candidates, no_fit_issue
from engine.context import NodeContext
from engine.events import CriticChecked
from engine.safety import critique
from engine.state import ConsultState, CriticVerdict


def case_fit_issues(state: ConsultState) -> tuple[str, ...]:
    """Evidence-locked only: why the draft's sentence choice does not fit the case ('' when it does)."""
    if not state.evidence_locked or state.retrieval is None:
        return ()
    offered, dropped = locked_candidates([p for p in state.retrieval.passages if p.relevant], state.facts,
                                         state.case_text)
    if not offered:
        return (no_fit_issue(dropped),)
    chosen = [sid for rec in (state.draft.recommendations if state.draft else ()) for sid in rec.sentence_ids]
    return tuple(f"case fit: sentence {sid} {dropped[sid]}; choose only sentences that apply to this case"
                 for sid in chosen if sid in dropped)


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    passages = [p for p in state.retrieval.passages if p.relevant] if state.retrieval else []
    result = critique(state.raw_draft, passages, state.draft.model if state.draft else "", state.evidence_locked)
    misfit = case_fit_issues(replace(state, draft=result.draft))
    # nothing fits the case: no model was asked, so the schema complaint about the empty answer would only confuse
    issues = misfit if misfit and not state.raw_draft else misfit + result.issues
    verdict = CriticVerdict(attempt=state.attempts, passed=result.passed and not misfit, issues=issues)
    ctx.emit(CriticChecked(state.thread_id, state.consult_id, verdict.attempt, verdict.passed, verdict.issues))
    return replace(state, draft=result.draft if verdict.passed else state.draft,
                   verdicts=state.verdicts + (verdict,))
