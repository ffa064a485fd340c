"""Formatter: renders the governed draft as Markdown with citations; a reviewer's edits replace the draft.

Recommendations come only from the claim ledger (engine/ledger.py) and follow the governor's release states: a
supported claim is listed with its citations, a qualified one with its qualifier, a deferred one only as "deferred"
until a reviewer approves; a blocked claim is never listed, whatever the decision, and appears under "Withheld"
with the rule that fired. No ledger means nothing is released (fail closed). Contradictions are printed too.
Quoted passage text is shown as a clinician reads it (``engine.safety.display_text``: no citation markers, links as
their text, no stray emphasis marks); the ledger keeps the verbatim text.
"""

from __future__ import annotations

import re
from dataclasses import replace

from engine.casefit import (POINTER_REASON, STAGING_ROW_REASON, bullets_under, case_from_facts, list_lead_ins,
                            locked_candidates, unusable_drugs, unusable_targets)
from engine.config import Settings
from engine.context import NodeContext
from engine.governor import counts
from engine.safety import OVERFLOW_MARK, display_text, instruction_passages
from engine.state import Claim, ConsultState, Passage


def section_label(section: str) -> str:
    """A stored heading path ("## Treatment > ### Metastatic") as people read it ("Treatment > Metastatic")."""
    from kb.chunking import plain_section

    return plain_section(section or "") or "(no heading)"


def evidence_list(state: ConsultState, only_cited: bool = True) -> list[str]:
    if not state.retrieval:
        return []
    cited = {e for r in (state.draft.recommendations if state.draft else ()) for e in r.evidence}
    lines = []
    for p in state.retrieval.passages:
        if only_cited and cited and p.id not in cited:
            continue
        where = section_label(p.section) + (f", p. {p.page}" if p.page else "")
        distance = ("options list above a kept passage: that passage's distance" if p.origin == "options"
                    else "distance")
        lines.append(f"- **[{p.id}]** {p.title} — {where} ({distance} {p.distance:.3f}"
                     + (f", rerank {p.rerank_score:.2f}" if p.rerank_score is not None else "") + ")")
    return lines


def render(state: ConsultState, model_label: str) -> str:
    d = state.draft
    assert d is not None and state.routing is not None and state.retrieval is not None
    out: list[str] = []
    if state.decision and state.decision.action == "approve_with_edits":
        out += ["## Reviewed answer", "", state.decision.edited_text.strip(), ""]
        if state.decision.edit_findings:
            out += [f"**Checks on the reviewer's text** (signed as written by {state.decision.reviewer}, who answers "
                    "for it):", ""] + [f"- {f}" for f in state.decision.edit_findings] + [""]
    else:
        if d.assessment:
            out += ["## Assessment", "", d.assessment, ""]
        out += ["## Recommendations", ""] + recommendation_lines(state) + [""]
    out += withheld_lines(state)
    if not (state.decision and state.decision.action == "approve_with_edits"):
        if d.caveats:
            out += ["## Caveats", ""] + [f"- {c}" for c in d.caveats] + [""]
        if d.missing_information:
            out += ["## Missing information", ""] + [f"- {m}" for m in d.missing_information] + [""]
    out += ["## Evidence", ""] + evidence_list(state) + [""]
    out += set_aside_lines(state)
    if poisoned := instruction_passages(state.retrieval.passages):
        out += [f"_Passage {', '.join(poisoned)} contains instruction-like text addressed to the system (a possibly "
                "poisoned guideline): those sentences were dropped, never offered to the model nor counted as "
                "support. Check the knowledge base source._", ""]
    if state.decision:
        dec = state.decision
        out += ["## Review", "", f"{dec.action.replace('_', ' ')} by {dec.reviewer} at {dec.at}"
                + (f": {dec.note}" if dec.note else ""), ""]
    ledger = state.ledger
    claims = ""
    if ledger is not None:
        n = counts(ledger)
        locked = " · evidence-locked" if ledger.evidence_locked else ""
        claims = (f"claims: {n['supported']} supported, {n['qualified']} qualified, {n['deferred']} deferred, "
                  f"{n['blocked']} blocked ({ledger.method}){locked}")
    edited = state.decision is not None and state.decision.action == "approve_with_edits"
    if edited:  # the ledger and the locked mode describe the model's draft, not the text the reviewer signed
        dec = state.decision
        checked = ("the critic's rules flagged what is listed above" if dec.edit_findings  # type: ignore[union-attr]
                   else "the critic's rules flagged nothing in it")
        claims = (f" · the answer above was edited by reviewer {dec.reviewer} "  # type: ignore[union-attr]
                  f"and is signed as written ({checked})"
                  + (f"; the claim ledger ({claims.removeprefix('claims: ')}) refers to the model's draft, not to "
                     "this text" if claims else ""))
    elif claims:
        claims = " · " + claims + withheld_note(state)
    out.append(f"_{tier_label(state)} · model {model_label}{' (draft)' if edited else ''} · rag_confidence "
               f"{state.retrieval.rag_confidence:.2f}{claims} · decision support only; the treating clinician "
               "decides._")
    return "\n".join(out)


def tier_label(state: ConsultState) -> str:
    """"Tier 1", naming a clinician's override and what the router scored, so a forced tier is never silent."""
    r = state.routing
    assert r is not None
    if r.override is None:
        return f"Tier {r.tier}"
    return f"Tier {r.tier} (forced by the clinician; the router scored Tier {r.auto_tier}, complexity {r.score:.2f})"


def withheld_note(state: ConsultState) -> str:
    """The footer's word on text that is not shown: free text the governor withheld (the claim counts cover only
    the recommendations) and recommendations beyond the schema's maximum, which were never read."""
    withheld = state.ledger.withheld_text if state.ledger else ()
    parts = ["the assessment" if w.startswith("assessment") else "caveat/missing-information lines"
             for w in withheld]
    note = f" · withheld: {', '.join(dict.fromkeys(parts))} (see Withheld)" if parts else ""
    last = state.verdicts[-1].issues if state.verdicts else ()
    overflow = next((i for i in last if OVERFLOW_MARK in i), "")
    return note + (f" · {overflow.removeprefix('schema: ')}" if overflow else "")


def _cites(claim: Claim) -> str:
    return " ".join(f"[{s}]" for s in claim.sentence_ids) if claim.sentence_ids else " ".join(
        f"[{e}]" for e in claim.evidence)


def recommendation_lines(state: ConsultState) -> list[str]:
    """Released claims only; blocked ones never (the governor's word is final)."""
    ledger = state.ledger
    if ledger is None or not ledger.governed:
        return ["_No claim ledger: nothing can be released._"]
    approved = state.decision is not None and state.decision.action == "approve"
    lines = []
    shown_where = shown_lead = ""
    for c in ledger.claims:
        reason = c.reasons[0] if c.reasons else ""
        if c.state == "supported":
            tag = f"_supported · support {c.support:.2f}_"
        elif c.state == "qualified":
            tag = f"**qualified:** {reason}"
        elif c.state == "deferred" and approved:
            tag = f"**deferred, released by reviewer {state.decision.reviewer}:** {reason}"  # type: ignore[union-attr]
        elif c.state == "deferred":
            tag = f"**deferred to a reviewer (not released):** {reason}"
        else:
            continue
        line = f"{len(lines) + 1}. {display_text(c.text)} {_cites(c)} — {tag}"
        where = claim_section(c, state)
        if where and where != shown_where:  # once for a run of claims from one section
            line += f"\\\n   _in: {where}_"  # a hard line break, then the section on its own line
            shown_where = where
        lead = lead_in(c, state)
        if lead and lead != shown_lead:  # once for a run of items of one list
            line += f"\\\n   _an item of the list: \u201c{display_text(lead)}\u201d_"
        shown_lead = lead
        if listed := listed_under(c, state):
            line += f"\\\n   _listed under it: {'; '.join(listed)}_"
        if aside := set_aside_under(c, state):
            line += f"\\\n   _listed under it, not for this case: {'; '.join(aside)}_"
        lines.append(line)
    return lines or ["_No recommendation could be released._"]


def claim_section(claim: Claim, state: ConsultState) -> str:
    """The guideline section a claim quotes or first cites, as people read it. PDQ states many options in its
    headings ("... (First-Line Therapy) > ALK inhibitors (for patients with ALK translocations) > Lorlatinib") and
    only the trials under them, so a quoted trial sentence means little without its section."""
    first = claim.sentence_ids[0].rsplit(".s", 1)[0] if claim.sentence_ids else next(iter(claim.evidence), "")
    passage = next((p for p in (state.retrieval.passages if state.retrieval else ()) if p.id == first), None)
    if passage is None or not passage.section:
        return ""
    return section_label(passage.section).replace("*", "").replace("_", " ")


def _quoted_passage(claim: Claim, state: ConsultState) -> Passage | None:
    """The passage a claim quoting one sentence verbatim quotes it from; None for any other claim."""
    if len(claim.sentence_ids) != 1:
        return None
    pid = claim.sentence_ids[0].rsplit(".s", 1)[0]
    return next((p for p in (state.retrieval.passages if state.retrieval else ()) if p.id == pid), None)


def lead_in(claim: Claim, state: ConsultState) -> str:
    """The lead-in of the list a quoted item is in (``casefit.list_lead_ins``, verbatim): "Inadequate lymph node
    sampling." means nothing until the reader sees "Features in patients with stage II colon cancer that are
    associated with an increased risk of recurrence include:". Empty for any other claim."""
    passage = _quoted_passage(claim, state)
    return list_lead_ins([passage]).get(claim.sentence_ids[0], "") if passage else ""


MAX_LISTED = 12


def listed_under(claim: Claim, state: ConsultState) -> list[str]:
    """The drugs an options list names under the item a claim quotes, as people read them: PDQ's bullets are too
    short to quote ("6. ALK inhibitors (for patients with ALK translocations)." then "- Alectinib." "- Lorlatinib."),
    so the quoted item alone would send the clinician to the evidence (``casefit.bullets_under``: verbatim passage
    text, shown as the section is). Empty for any other claim."""
    names = [display_text(b).rstrip(". ") for b, why in _bullets(claim, state) if not why]
    more = len(names) - MAX_LISTED
    return names[:MAX_LISTED] + ([f"and {more} more"] if more > 0 else [])


def set_aside_under(claim: Claim, state: ConsultState) -> list[str]:
    """The drugs listed under the quoted item that the case cannot have, each with why: a drug the disease
    progressed on or the note stopped or ruled out (a QA pass's small cell lung cancer after lurbinectedin had
    "Chemotherapy." released with "listed under it: Topotecan; Lurbinectedin")."""
    return [f"{display_text(b).rstrip('. ')} ({why})" for b, why in _bullets(claim, state) if why]


def _bullets(claim: Claim, state: ConsultState) -> list[tuple[str, str]]:
    """(bullet, why the case cannot have it or "") for each bullet under the item a claim quotes."""
    passage = _quoted_passage(claim, state)
    bullets = bullets_under(passage, claim.sentence_ids[0]) if passage else []
    case = case_from_facts(state.facts) if bullets else None
    return [(b, unusable_targets(b, [], case) or unusable_drugs(b, [], case)) for b in bullets if case]


def withheld_lines(state: ConsultState) -> list[str]:
    ledger = state.ledger
    if ledger is None:
        return []
    out: list[str] = []
    blocked = [c for c in ledger.claims if c.state == "blocked"]
    if blocked or ledger.withheld_text:
        out += ["## Withheld (not released)", ""]
        # the draft's numbering, not the list above (which numbers what was released): "from recommendation 2"
        # read as the released recommendation 2, another sentence
        out += [f"- {c.id} (from the draft's recommendation {c.recommendation}; not in the list above) — blocked: "
                f"{c.reasons[0] if c.reasons else 'not governed'}" for c in blocked]
        out += [f"- {w}" for w in ledger.withheld_text] + [""]
    if ledger.contradictions:
        out += ["## Contradictions recorded", ""]
        out += [f"- {x.claim_id} vs {x.other} ({'states the opposite' if x.strong else 'possible conflict'}): "
                f"\u201c{display_text(x.detail)}\u201d" for x in ledger.contradictions] + [""]
    return out


SET_ASIDE_SHOWN = 3  # reasons listed; the rest are counted
# a trial's later sentences go with its head's reason: "tells the trial begun in E2.s1, which states ..."
_STORY_RE = re.compile(r"^tells the trial (?:begun in|whose (?:population|eligibility) \S+ (?:gives|states),?)"
                       r"\s*\S*?, which ")


def set_aside_lines(state: ConsultState) -> list[str]:
    """Evidence-locked: the commonest reasons the retrieved guideline sentences did not fit the case, with how many
    each set aside ("5 sentences: states Child-Pugh class A; the case is Child-Pugh class B"), so the clinician sees
    what the guideline's evidence is for when it is not for this patient (a QA pass's Child-Pugh B case had every
    first-line trial set aside and nothing said so). Pointers, staging-table rows and repeats are not counted."""
    if state.retrieval is None or not (state.evidence_locked or state.ledger and state.ledger.evidence_locked):
        return []
    relevant = [p for p in state.retrieval.passages if p.relevant]
    _, dropped = locked_candidates(relevant, state.facts, state.case_text)
    why: dict[str, int] = {}
    for reason in dropped.values():
        if reason in (POINTER_REASON, STAGING_ROW_REASON) or reason.startswith("repeats "):
            continue
        core = _STORY_RE.sub("", reason.removeprefix("does not apply to this case: "))
        why[core] = why.get(core, 0) + 1
    if not why:
        return []
    ranked = sorted(why.items(), key=lambda x: -x[1])
    out = ["## Set aside for this case", ""]
    out += [f"- {n} sentence{'s' if n > 1 else ''}: {display_text(reason)}" for reason, n in ranked[:SET_ASIDE_SHOWN]]
    rest = sum(n for _, n in ranked[SET_ASIDE_SHOWN:])
    if rest:
        out.append(f"- {rest} more for other reasons")
    return out + [""]


def model_label(state: ConsultState, settings: Settings) -> str:
    """The drafting model as the reader should see it: the profile's label ("... tiny demo model, clinically
    useless") when it has one, so the reviewer's preview warns as the released answer does."""
    name = state.draft.model if state.draft else ""
    profile = settings.models.profiles.get(name)
    return profile.label if profile and profile.label else (name or "unknown")


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    return replace(state, report=render(state, model_label(state, ctx.settings)))
