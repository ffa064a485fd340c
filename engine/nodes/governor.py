"""Governor node: builds the claim-evidence ledger (engine/ledger.py) and gives every claim its release state
(engine/governor.py). Runs between the Critic and the HITL gate; deterministic apart from the reranker."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from engine.context import NodeContext
from engine.events import ClaimsGoverned
from engine.governor import govern, released_notes
from engine.ledger import build_ledger
from engine.state import ConsultState


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    assert state.draft is not None and state.retrieval is not None
    passages = [p for p in state.retrieval.passages if p.relevant]
    scorer = None
    try:
        kb = await asyncio.to_thread(ctx.kb)
        scorer = getattr(kb, "rerank_scores", None)
    except Exception:  # no KB object: the lexical floor still runs
        scorer = None
    ledger = await asyncio.to_thread(build_ledger, state.draft, passages, scorer, state.evidence_locked,
                                     state.facts.cancer_type)
    ledger = govern(ledger, state.retrieval.rag_confidence, ctx.settings.engine.hitl_confidence_floor, state.facts,
                    passages)  # with the passages, a claim stating no stage inherits its section's
    ctx.emit(ClaimsGoverned(state.thread_id, state.consult_id, tuple(
        (c.id, c.state, round(c.support, 2), c.reasons[0] if c.reasons else "") for c in ledger.claims)))
    d = state.draft
    withheld: list[str] = []
    assessment = d.assessment
    last = state.verdicts[-1] if state.verdicts else None
    issue = next((i for i in (last.issues if last else ()) if "the assessment" in i), "")
    if issue:
        assessment = ""
        withheld.append(f"assessment ({issue})")
    caveats = released_notes(d.caveats, passages)
    missing = released_notes(d.missing_information, passages)
    dropped = (len(d.caveats) - len(caveats)) + (len(d.missing_information) - len(missing))
    if dropped:
        withheld.append(f"{dropped} caveat/missing-information line(s) naming a dose or drug absent from the "
                        "evidence, or using absolute language")
    draft = replace(d, assessment=assessment, caveats=caveats, missing_information=missing)
    return replace(state, draft=draft, ledger=replace(ledger, withheld_text=tuple(withheld)))
