"""Formatter: renders the approved draft as Markdown with citations; a reviewer's edits replace the draft."""

from __future__ import annotations

from dataclasses import replace

from engine.context import NodeContext
from engine.state import ConsultState


def evidence_list(state: ConsultState, only_cited: bool = True) -> list[str]:
    if not state.retrieval:
        return []
    cited = {e for r in (state.draft.recommendations if state.draft else ()) for e in r.evidence}
    lines = []
    for p in state.retrieval.passages:
        if only_cited and cited and p.id not in cited:
            continue
        where = p.section + (f", p. {p.page}" if p.page else "")
        lines.append(f"- **[{p.id}]** {p.title} — {where} (distance {p.distance:.3f}"
                     + (f", rerank {p.rerank_score:.2f}" if p.rerank_score is not None else "") + ")")
    return lines


def render(state: ConsultState, model_label: str) -> str:
    d = state.draft
    assert d is not None and state.routing is not None and state.retrieval is not None
    out: list[str] = []
    if state.decision and state.decision.action == "approve_with_edits":
        out += ["## Reviewed answer", "", state.decision.edited_text.strip(), ""]
    else:
        out += ["## Assessment", "", d.assessment, "", "## Recommendations", ""]
        out += [f"{i}. {r.text} " + " ".join(f"[{e}]" for e in r.evidence)
                for i, r in enumerate(d.recommendations, 1)]
        out.append("")
        if d.caveats:
            out += ["## Caveats", ""] + [f"- {c}" for c in d.caveats] + [""]
        if d.missing_information:
            out += ["## Missing information", ""] + [f"- {m}" for m in d.missing_information] + [""]
    out += ["## Evidence", ""] + evidence_list(state) + [""]
    if state.decision:
        dec = state.decision
        out += ["## Review", "", f"{dec.action.replace('_', ' ')} by {dec.reviewer} at {dec.at}"
                + (f": {dec.note}" if dec.note else ""), ""]
    out.append(f"_Tier {state.routing.tier} · model {model_label} · rag_confidence "
               f"{state.retrieval.rag_confidence:.2f} · decision support only; the treating clinician decides._")
    return "\n".join(out)


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    profile = ctx.settings.models.profiles.get(state.draft.model if state.draft else "")
    label = (profile.label if profile and profile.label else (state.draft.model if state.draft else "unknown"))
    return replace(state, report=render(state, label))
