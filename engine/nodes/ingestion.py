"""Ingestion: redact identifiers first, then extract case facts from the redacted text only.

The raw note exists only in ``state.raw_input`` (never serialised) and is cleared here, so no later node,
checkpoint, log or prompt can see it.
"""

from __future__ import annotations

from dataclasses import replace

from engine.context import NodeContext
from engine.facts import extract_facts, merge_facts
from engine.phi import redact
from engine.state import ConsultState


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    redaction = redact(state.raw_input)
    r = ctx.settings.router
    facts = extract_facts(redaction.text, genes=r.genes, treatment_keywords=r.treatment_keywords,
                          rare_cancers=r.rare_cancers)
    if state.history:  # a follow-up keeps what earlier turns of THIS thread established
        earlier = extract_facts("\n".join(t.question for t in state.history), genes=r.genes,
                                treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)
        facts = merge_facts(earlier, facts)
    return replace(state, raw_input="", case_text=redaction.text, facts=facts,
                   phi_counts=tuple(sorted(redaction.counts.items())))
