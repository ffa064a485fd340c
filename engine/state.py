"""Immutable consult state. Nodes return new states via ``dataclasses.replace``; nothing mutates.

Everything here is already redacted: the raw clinical note lives only in ``ConsultState.raw_input`` until the
Ingestion node has run, and that field is never serialised (see ``to_dict``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

HitlStatus = Literal["none", "pending", "approved", "approved_with_edits", "rejected"]
Action = Literal["approve", "reject", "approve_with_edits"]


@dataclass(frozen=True)
class CaseFacts:
    cancer_type: str | None = None
    stage: str | None = None  # normalised roman numeral group: "I", "II", "III", "IV"
    stage_text: str | None = None  # as written, e.g. "T3N1M1" or "stage 4"
    markers: tuple[str, ...] = ()  # e.g. ("BRAF V600E", "MSI-H", "HER2-positive")
    genes: tuple[str, ...] = ()  # distinct genes among the markers (what the router counts)
    prior_treatments: tuple[str, ...] = ()
    performance_status: str | None = None  # "ECOG 1", "KPS 80"
    unknown_primary: bool = False
    rare: bool = False
    line: str | None = None  # line of therapy the note states: "first" (untreated) or "later" (progressed); None
    first_line_done: bool = False  # a later-line case past its first line ("then second-line docetaxel")
    prior_lines: int | None = None  # lines before the one asked ("What third-line option?": 2), engine.facts
    # checkpoint inhibitors, osimertinib, R-CHOP, ... the case progressed after, and the cytotoxics it progressed on
    # or within six months of (engine.facts)
    progressed_after: tuple[str, ...] = ()
    # every drug or regimen the note's statements name (``engine.safety.drug_spans`` keys): what a population's prior
    # treatment is judged against (engine.casefit "prior")
    drugs_named: tuple[str, ...] = ()
    # "drug: clause" for a drug stopped for toxicity or avoided for a stated reason (engine.facts ``_avoided_drugs``)
    avoided_drugs: tuple[str, ...] = ()
    recurrent: bool | None = None  # the note says recurrent/relapsed (True) or newly diagnosed/de novo (False); None
    fitness: tuple[str, ...] = ()  # as written: "not a candidate for intensive chemotherapy", "cisplatin-ineligible"
    statuses: tuple[str, ...] = ()  # "castration:resistant", "HPV:negative", "platinum:sensitive" (engine.facts)
    child_pugh: str | None = None  # "A" / "B" / "C": the liver function the note states (engine.facts)
    risk: tuple[str, ...] = ()  # risk groups stated, "scale:group": "risk:low", "favor:unfavorable" (engine.facts)
    age: int | None = None  # years; 90 for an age the redactor removed (over 89)
    subsites: tuple[str, ...] = ()  # "tongue", "supraglottis", "classic HL" (engine.facts.SUBSITES)
    sex: str | None = None  # "female" / "male" as the note's words say; None when they do not (engine.facts)
    menopause: str | None = None  # "pre" / "post": stated, or post for a woman of 60 or more (engine.facts)

    @property
    def age_text(self) -> str | None:
        """The age as shown: "over 89" for a redacted one (90 is only its lower bound)."""
        return None if self.age is None else "over 89" if self.age >= 90 else str(self.age)

    @property
    def avoided_names(self) -> tuple[str, ...]:
        """The drugs stopped for toxicity or ruled out, without the note's clause (as the patient pane shows them)."""
        return tuple(x.split(": ", 1)[0] for x in self.avoided_drugs)

    @property
    def line_text(self) -> str | None:
        """The line of therapy as shown: "first", "later", "past the first line"; None when not stated."""
        return "past the first line" if self.first_line_done else self.line

    @property
    def groups(self) -> tuple[str, ...]:
        """Risk groups, statuses, the Child-Pugh class and the menopausal status as shown: "intermediate-risk",
        "HPV-negative", "Child-Pugh B", "postmenopausal"."""
        risk = [f"{g}-risk" if scale == "risk" else g for scale, g in (x.split(":") for x in self.risk)]
        return tuple(risk + [f"{name}-{value}" for name, value in (x.split(":") for x in self.statuses)]
                     + ([f"Child-Pugh {self.child_pugh}"] if self.child_pugh else [])
                     + ([f"{self.menopause}menopausal"] if self.menopause else []))


@dataclass(frozen=True)
class Factor:
    name: str
    weight: float
    detail: str


@dataclass(frozen=True)
class Routing:
    score: float
    auto_tier: int
    tier: int  # the tier actually used (override wins)
    factors: tuple[Factor, ...]
    override: int | None = None


@dataclass(frozen=True)
class Passage:
    id: str  # "E1".. citation id shown to the model and the clinician
    chunk_id: str
    title: str
    source: str
    section: str
    page: int | None
    text: str
    distance: float
    rerank_score: float | None
    relevant: bool | None = None  # grader verdict; None = not graded
    # about another cancer than the case's (engine.casefit.other_cancer): not used for the case, however relevant
    other_cancer: bool = False
    # "options": an options list's lead-in and item (kb/outline.py), added beside the kept passage that led to it,
    # whose distance it carries; "" for a passage retrieved itself
    origin: str = ""
    # the cross-encoder logit of each of its sentences (engine.safety.offered_sentences, in order) against the case's
    # question: the order evidence-locked mode offers them in (engine.casefit.sentence_relevance); () = not scored
    sentence_scores: tuple[float, ...] = ()

    @property
    def usable(self) -> bool:
        """Relevant and about the case's cancer: what rag_confidence, the rewrite decision and the evidence pane's
        relevant count take."""
        return bool(self.relevant) and not self.other_cancer


@dataclass(frozen=True)
class Retrieval:
    query: str
    passages: tuple[Passage, ...] = ()
    gate_passed: bool = False
    closest_title: str | None = None
    closest_distance: float | None = None
    threshold: float | None = None  # the distance gate actually applied (configured or calibrated)
    gate_k: int = 1  # the gate compared the mean distance of this many nearest chunks (1: the closest) ...
    gate_value: float | None = None  # ... and this is that mean
    # the facts query the gate admitted the case on ("" = the whole case; rag.gate_focused_query)
    gate_query: str = ""
    rewritten_query: str | None = None
    rag_confidence: float = 0.0
    attempts: int = 1


@dataclass(frozen=True)
class Recommendation:
    text: str
    evidence: tuple[str, ...]  # passage ids
    sentence_ids: tuple[str, ...] = ()  # evidence-locked mode: the quoted passage sentences ("E1.s2")


@dataclass(frozen=True)
class Draft:
    assessment: str
    recommendations: tuple[Recommendation, ...]
    caveats: tuple[str, ...] = ()
    missing_information: tuple[str, ...] = ()
    model: str = ""


@dataclass(frozen=True)
class CriticVerdict:
    attempt: int
    passed: bool
    issues: tuple[str, ...] = ()


ReleaseState = Literal["supported", "qualified", "deferred", "blocked"]
LinkVerdict = Literal["supports", "partial", "unsupported", "off_topic", "unscored"]


@dataclass(frozen=True)
class EvidenceLink:
    """One (claim, cited passage) pair and how well the passage supports the claim (engine/ledger.py)."""

    passage_id: str
    lexical: float  # share of the claim's content words found in the passage
    cross_encoder: float | None  # reranker logit of (claim, passage); None: no reranker or it failed
    verdict: LinkVerdict
    on_case: bool = True  # the passage mentions the case's cancer type (or the type is unknown)


@dataclass(frozen=True)
class Contradiction:
    claim_id: str
    other: str  # a passage id ("E1") or another claim ("C2")
    detail: str  # the conflicting sentence, quoted
    strong: bool  # True: the other side states the claim's exact opposite


@dataclass(frozen=True)
class Claim:
    """One atomic statement of the draft; the governor (engine/governor.py) sets ``state`` and ``reasons``."""

    id: str  # "C1".. in draft order
    recommendation: int  # 1-based index of the recommendation it was split from
    text: str
    evidence: tuple[str, ...]
    links: tuple[EvidenceLink, ...] = ()
    support: float = 0.0  # content-word coverage by the on-topic cited passages, 0..1
    rule_issues: tuple[str, ...] = ()  # the Critic's deterministic rules, evaluated on this claim
    scoring_error: str = ""
    sentence_ids: tuple[str, ...] = ()  # evidence-locked: verbatim passage sentences
    state: ReleaseState = "blocked"  # fail closed: a claim no governor has looked at is never released
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ledger:
    claims: tuple[Claim, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()
    method: str = ""  # how support was scored, e.g. "cross-encoder veto + lexical"
    evidence_locked: bool = False
    governed: bool = False
    withheld_text: tuple[str, ...] = ()  # free text (assessment, caveats) the governor dropped, and why


@dataclass(frozen=True)
class HitlDecision:
    action: Action
    reviewer: str
    at: str  # ISO-8601 UTC
    note: str = ""
    edited_text: str = ""
    edit_findings: tuple[str, ...] = ()  # the critic's rules on edited_text (engine.safety.review_edits)


@dataclass(frozen=True)
class Turn:
    """A previous consult on the same thread, as context for the next one (redacted)."""

    question: str
    answer_summary: str


@dataclass(frozen=True)
class ConsultState:
    thread_id: str
    consult_id: str
    raw_input: str = field(default="", repr=False, metadata={"transient": True})
    case_text: str = ""  # redacted
    phi_counts: tuple[tuple[str, int], ...] = ()
    history: tuple[Turn, ...] = ()
    facts: CaseFacts = CaseFacts()
    tier_override: int | None = None
    routing: Routing | None = None
    retrieval: Retrieval | None = None
    draft: Draft | None = None
    raw_draft: str = ""  # last model output, for the critic's feedback and audit
    attempts: int = 0  # specialist calls so far
    verdicts: tuple[CriticVerdict, ...] = ()
    evidence_locked: bool = False  # the Specialist could only select retrieved sentences (engine/safety.py)
    ledger: Ledger | None = None  # claim-evidence ledger with release states (engine/ledger.py, governor.py)
    hitl_status: HitlStatus = "none"
    hitl_reasons: tuple[str, ...] = ()
    decision: HitlDecision | None = None
    report: str = ""  # final Markdown shown to the clinician
    refusal_reason: str = ""
    error: str = ""
    notices: tuple[str, ...] = ()  # e.g. model fallback notices

    @property
    def critic_feedback(self) -> str:
        if not self.verdicts or self.verdicts[-1].passed:
            return ""
        return "; ".join(self.verdicts[-1].issues)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("raw_input")  # never persisted
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConsultState:
        return _build(cls, data)


def _build(tp: Any, value: Any) -> Any:
    """Rebuild nested frozen dataclasses from ``asdict`` output using the type hints."""
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _build(args[0], value) if len(args) == 1 else value
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        kwargs = {f.name: _build(hints[f.name], value[f.name]) for f in dataclasses.fields(tp) if f.name in value}
        return tp(**kwargs)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], v) for v in value)
        return tuple(_build(a, v) for a, v in zip(args, value))
    return value
