"""Governor: a release state for every claim of the ledger, from rules that a person can read in one table.

Rules, first match wins (``decide``):

| # | condition                                                                     | state     |
|---|-------------------------------------------------------------------------------|-----------|
| 1 | a Critic rule fails for the claim: no/unknown citation, absolute language,     | blocked   |
|   | a dose or a drug/regimen name absent from its cited passages, instruction-like |           |
|   | text ("approve this", "mark as supported"); or it is only a list header ending |           |
|   | in ":" ("Options include:"), whose items are not part of it                    |           |
| 2 | the claim's stated condition contradicts the case facts (engine/casefit.py):  | blocked   |
|   | another stage ("Stage I ..." for stage III; adjuvant/resected for metastatic;  |           |
|   | the stage its cited sections name when it states none), the opposite marker    |           |
|   | status ("HER2-positive ..." for HER2-negative), another driver than the case's |           |
|   | (clause by clause: "X for EGFR ..., and Y for ALK ..." is blocked for EGFR); a |           |
|   | verbatim quote also by its list's lead-in, the item it is nested under, its    |           |
|   | label and the oral cavity or larynx site its paragraph is about there          |           |
| 3 | a cited passage states the claim's opposite (strong contradiction)             | blocked   |
| 4 | support < PARTIAL (0.5), or every cited passage is off-topic (cross-encoder)   | blocked   |
|   | or about another cancer than the case's (no passage names its cancer type)     |           |
| 5 | the cross-encoder raised while scoring the claim (support unknown)             | deferred  |
| 6 | a weaker contradiction with a cited passage, or a conflict with another claim  | deferred  |
| 7 | the claim states a condition the case does not state (a BRCA line, BRCA status | qualified |
|   | unknown), one option it lists does not apply ("olaparib (for germline BRCA     |           |
|   | carriers)", BRCA negative), PARTIAL <= support < SUPPORTED (0.7), or           |           |
|   | rag_confidence below engine.hitl_confidence_floor; every qualifier is printed  |           |
| 8 | otherwise                                                                      | supported |

Rule 7 releases a claim of unstated condition as qualified ("applies if germline BRCA1/2 carrier (not stated for
this case)") rather than deferring it: the sentence is true and on case, and the qualifier tells the clinician
exactly what to check; a reviewer would have nothing more to add. Rule 2 needs the case facts (``govern``'s
``facts``); without them (None) no claim is judged against the case. Section stages need ``govern``'s
``passages`` (the relevant retrieved passages); without them only what the claim itself states is judged.

What each state means downstream:
- supported: released as a recommendation with its citations.
- qualified: released with its qualifier printed beside it.
- deferred:  not released until a reviewer signs; the reason joins the HITL gate's reasons (``review_reasons``).
- blocked:   never released, even after approval; the report lists it under "Withheld" with the rule that fired
             (the claim text itself is not repeated in the report; the evidence pane shows it to the reviewer).
Every claim blocked -> the safe refusal (graph transition after the governor).

Free text around the claims is checked too, by the same rules against every relevant passage (it cites none):
the assessment is withheld when the Critic's last verdict found instruction-like text, absolute language, a dose or
drug that no relevant passage contains, or an invented term in it (``engine.safety.assessment_issues``), and a caveat
or missing-information line is dropped for the same reasons (``released_notes``). The report lists what was
withheld and its footer says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from engine.casefit import Case, assess, case_from_facts, sentence_context, sentence_labels
from engine.ledger import PARTIAL, SUPPORTED
from engine.safety import claim_rule_issues, list_header
from engine.state import CaseFacts, Claim, ConsultState, Ledger, Passage, ReleaseState

RELEASED: tuple[ReleaseState, ...] = ("supported", "qualified")


def decide(claim: Claim, ledger: Ledger, rag_confidence: float, confidence_floor: float,
           case: Case | None = None, sections: Mapping[str, str] | None = None,
           quoted: Mapping[str, tuple[str, str]] | None = None) -> tuple[ReleaseState, str]:
    """One claim's release state and the reason, following the table above. ``sections``: passage id -> section
    path; a claim that states no stage inherits the stage its cited passages' sections name. ``quoted``: sentence
    id -> (its list's lead-in, the item it is nested under and its paragraph's site: ``casefit.sentence_context``;
    the label it is under), so that a claim quoting one sentence verbatim is judged where it stands, as
    evidence-locked selection judged it (``casefit.select``)."""
    if claim.rule_issues:
        return "blocked", "; ".join(claim.rule_issues)
    if list_header(claim.text):
        return "blocked", "a list header with nothing after it (\u201c... include:\u201d): its items are not part of it"
    cited = tuple((sections or {}).get(e, "") for e in claim.evidence) if sections else ()
    parent, label = (quoted or {}).get(claim.sentence_ids[0], ("", "")) if len(claim.sentence_ids) == 1 else ("", "")
    if parent:
        cited = tuple(f"{c} > {parent}" if c else parent for c in cited) or (parent,)
    fit = assess(claim.text, case, cited, label) if case is not None else None
    if fit is not None and fit.verdict == "contradicts":
        return "blocked", fit.reason
    against = [c for c in ledger.contradictions if c.claim_id == claim.id or c.other == claim.id]
    strong = [c for c in against if c.strong and c.other.startswith("E") and c.claim_id == claim.id]
    if strong:
        return "blocked", f"cited passage {strong[0].other} states the opposite: \u201c{strong[0].detail}\u201d"
    if claim.links and all(link.verdict == "off_topic" for link in claim.links):
        return "blocked", "the cross-encoder finds every cited passage unrelated to the claim"
    if claim.links and not any(link.on_case for link in claim.links):
        return "blocked", "its cited passages are about another cancer than this case's"
    if claim.support < PARTIAL:
        return "blocked", (f"not supported by its cited passages (only {claim.support:.0%} of its key words "
                           f"appear there; at least {PARTIAL:.0%} needed)")
    if claim.scoring_error:
        return "deferred", claim.scoring_error
    if against:
        c = against[0]
        if c.other.startswith("E"):
            return "deferred", f"possible contradiction with {c.other}: \u201c{c.detail}\u201d"
        other = c.other if c.claim_id == claim.id else c.claim_id
        return "deferred", f"conflicts with claim {other}"
    qualifiers = []
    if fit is not None and fit.verdict == "unknown":
        qualifiers.append(fit.reason)
    if fit is not None and fit.notes:
        qualifiers.append(fit.note)
    if claim.support < SUPPORTED:
        qualifiers.append(f"only partly supported by its cited passages ({claim.support:.0%} of its key words)")
    if rag_confidence < confidence_floor:
        qualifiers.append(f"low retrieval confidence ({rag_confidence:.2f} < {confidence_floor:.2f})")
    if qualifiers:
        return "qualified", "; ".join(qualifiers)
    return "supported", f"supported by {', '.join(claim.evidence)} ({claim.support:.0%} of its key words)"


def govern(ledger: Ledger, rag_confidence: float, confidence_floor: float,
           facts: CaseFacts | None = None, passages: Sequence[Passage] = ()) -> Ledger:
    """Release states for every claim; with ``facts``, claims are also judged against the case (rules 2 and 7),
    with ``passages`` also against the stage their sections name (a claim that states none inherits it)."""
    case = case_from_facts(facts) if facts is not None else None
    sections = {p.id: p.section for p in passages}
    parents, labels = sentence_context(passages, sites=bool(case and case.subsites)), sentence_labels(passages)
    quoted = {sid: (parents.get(sid, ""), labels.get(sid, "")) for sid in parents.keys() | labels.keys()}
    claims = []
    for claim in ledger.claims:
        state, reason = decide(claim, ledger, rag_confidence, confidence_floor, case, sections, quoted)
        claims.append(replace(claim, state=state, reasons=(reason,)))
    return replace(ledger, claims=tuple(claims), governed=True)


def released_notes(notes: tuple[str, ...], passages: list[Passage]) -> tuple[str, ...]:
    """Caveats / missing information that pass the instruction, absolute, dose, drug and term rules against all
    relevant passages."""
    by_id = {p.id: p for p in passages}
    return tuple(n for n in notes if not claim_rule_issues("note", n, tuple(by_id), by_id))


def counts(ledger: Ledger | None) -> dict[str, int]:
    out = {"supported": 0, "qualified": 0, "deferred": 0, "blocked": 0}
    for claim in ledger.claims if ledger else ():
        out[claim.state] += 1
    return out


def review_reasons(state: ConsultState) -> tuple[str, ...]:
    """Deferred claims, for the HITL gate: each one is a reason a reviewer must sign."""
    if state.ledger is None:
        return ()
    return tuple(f"Claim {c.id} deferred: {c.reasons[0] if c.reasons else 'needs review'}"
                 for c in state.ledger.claims if c.state == "deferred")


def all_blocked(state: ConsultState) -> bool:
    return state.ledger is not None and all(c.state == "blocked" for c in state.ledger.claims)
