"""Claim-evidence ledger: the draft's recommendations as atomic claims, each linked to the passages it cites.

Claim split
    Every recommendation is split into sentences (``split_claim``: at . ! ? ; before a capital letter, not after
    "e.g."/"i.e."/"vs.", and at line breaks); each sentence is one claim ``C1``, ``C2``.. in draft order and keeps
    the recommendation's citations. In evidence-locked mode each recommendation already is one verbatim passage
    sentence.

Support of a (claim, cited passage) link
    - lexical: the share of the claim's content words (stop words and words of <= 2 letters dropped, see
      ``engine.safety``) that occur in the passage. Deterministic; the floor that always runs.
    - cross-encoder: when the knowledge base has its reranker (``kb.rerank_scores``), the ms-marco cross-encoder
      logit of (claim, passage). It measures topical relevance, not entailment (on the demo set a claim and its
      negation both score ~6.5, an unrelated claim -8 to -11), so it is used only as a veto: a passage scoring
      below ``CE_ON_TOPIC`` is about something else and does not count as support, however many words it shares.
    - verdict: ``off_topic`` (cross-encoder veto; a NaN score vetoes too), ``supports`` (lexical >= SUPPORTED), ``partial``
      (>= PARTIAL), ``unsupported``; ``unscored`` when the reranker raised, in which case the claim records
      ``scoring_error`` and the governor defers it (fails closed: never ``supported``).
    - claim support: the lexical coverage of the claim by the union of its on-topic cited passages (words may come
      from different passages). Instruction-like passage sentences ("ignore previous instructions", "mark as
      supported") are removed first (``engine.safety.strip_instructions``).

Case match
    When the case's cancer type is known, a link is ``on_case`` only if the passage (title, section or text)
    names one of the type's distinctive words ("pancreatic" for "pancreatic adenocarcinoma"; generic words such
    as cancer/carcinoma/metastatic do not count). A verbatim melanoma sentence is true, but not about a
    pancreatic patient; the governor blocks a claim none of whose passages is on the case.

Contradictions (recorded in the ledger, never dropped)
    Polarity of a sentence: negative when it contains a negation cue ("not", "never", "avoid", "contraindicated",
    "no benefit", "discouraged", ...). A claim and a sentence of a cited passage (or another claim) conflict when
    their polarity differs (passages: every relevant retrieved passage, cited or not, so an answer cannot
    cherry-pick the agreeing one), they talk about the same thing (content-word overlap >= CONTRADICTION_OVERLAP of the
    shorter one, and they share a drug/regimen name when either names one), and they do not name different
    populations (differing numbers or stage numerals, e.g. "stage III" vs "stage I", "ECOG 0-1" vs "ECOG 2").
    ``strong`` when the overlap is >= STRONG_OVERLAP and the passage is cited: one states the other's opposite.

The ledger is part of ``ConsultState`` (frozen dataclasses in engine/state.py), so it is checkpointed with every
node; the governor (engine/governor.py) fills in each claim's release state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from engine.safety import _content_words, claim_rule_issues, drug_names, split_sentences, strip_instructions
from engine.state import Claim, Contradiction, Draft, EvidenceLink, Ledger, LinkVerdict, Passage

SUPPORTED = 0.7  # share of the claim's content words found in its cited passages
PARTIAL = 0.5  # below this the claim is unsupported (same floor as the Critic's support rule)
CE_ON_TOPIC = 0.0  # cross-encoder logit; below it the passage is not about the claim
CONTRADICTION_OVERLAP = 0.5
STRONG_OVERLAP = 0.8

Scorer = Callable[[str, list[str]], list[float]]  # kb.rerank_scores(query, texts)
_GENERIC = frozenset("cancer cancers carcinoma carcinomas adenocarcinoma tumour tumor tumours tumors neoplasm "
                     "malignancy disease metastatic advanced early locally stage".split())

_NEGATION_RE = re.compile(
    r"\b(?:not|never|cannot|avoid(?:s|ed)?|contraindicated|discouraged|no (?:benefit|role|evidence|longer)|"
    r"(?:do|does|did|should|must|is|are|was|were)n't)\b", re.IGNORECASE)
_SCOPE_RE = re.compile(r"\b(?:\d+(?:\.\d+)?%?|i{1,3}[abc]?|iv[abc]?)\b", re.IGNORECASE)
_CLAIM_SPLIT_RE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<=[.!?;])\s+(?=[A-Z(\"'])|\n+")


def split_claim(text: str) -> list[str]:
    """Sentences of one recommendation; unlike passage sentences, short ones are kept (they are claims too)."""
    parts = [p.strip().lstrip("-*• ").strip() for p in _CLAIM_SPLIT_RE.split(text or "")]
    return [p for p in parts if p] or [text.strip()]


def negative(text: str) -> bool:
    return bool(_NEGATION_RE.search(text))


def _scope(text: str) -> set[str]:
    return {m.group(0).lower() for m in _SCOPE_RE.finditer(text)}


def conflict(a: str, b: str) -> float:
    """Overlap in [0, 1] when ``a`` and ``b`` state opposite things about the same subject, else 0."""
    if negative(a) == negative(b):
        return 0.0
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb:
        return 0.0
    da, db = drug_names(a), drug_names(b)
    if (da or db) and not da & db:
        return 0.0
    sa, sb = _scope(a), _scope(b)
    if sa and sb and sa != sb:  # e.g. "stage III" vs "stage I": different populations, not a contradiction
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


def case_words(cancer_type: str | None) -> set[str]:
    """Distinctive words of the case's cancer type; empty when it is unknown (then every passage is on case)."""
    return _content_words(cancer_type or "") - _GENERIC


def on_case(passage: Passage, words: set[str]) -> bool:
    haystack = f"{passage.title} {passage.section} {passage.text}".lower()
    return not words or any(w in haystack for w in words)


def _lexical(words: set[str], text: str) -> float:
    return len(words & _content_words(text)) / len(words) if words else 0.0


def _verdict(lexical: float, ce: float | None, scored: bool) -> LinkVerdict:
    if not scored:
        return "unscored"
    if ce is not None and not ce >= CE_ON_TOPIC:  # NaN compares False both ways: a NaN logit is no evidence
        return "off_topic"
    return "supports" if lexical >= SUPPORTED else "partial" if lexical >= PARTIAL else "unsupported"


def _claim(cid: str, rec_index: int, text: str, evidence: tuple[str, ...], sentence_ids: tuple[str, ...],
           by_id: dict[str, Passage], scorer: Scorer | None, case: set[str]) -> tuple[Claim, list[Contradiction]]:
    found = _contradictions(cid, text, evidence, by_id)
    issues = tuple(claim_rule_issues(f"claim {cid}", text, evidence, by_id))
    base = Claim(id=cid, recommendation=rec_index, text=text, evidence=evidence, rule_issues=issues,
                 sentence_ids=sentence_ids)
    if issues and issues[0].startswith("citation"):
        return base, found  # nothing to link
    cited = [by_id[e] for e in evidence]
    ce: list[float | None] = [None] * len(cited)
    error = ""
    if scorer is not None:
        try:
            scores = [float(x) for x in scorer(text, [p.text for p in cited])]
            if len(scores) != len(cited):
                raise ValueError(f"{len(scores)} scores for {len(cited)} passages")
            ce = list(scores)
        except Exception as exc:  # fail closed: the governor defers an unscored claim
            error = f"support could not be scored ({type(exc).__name__}: {exc})"
    words = _content_words(text)
    clean = [strip_instructions(p.text) for p in cited]  # a poisoned chunk lends no support (engine/safety.py)
    links = tuple(EvidenceLink(p.id, round(_lexical(words, t), 3), None if s is None else round(s, 3),
                               _verdict(_lexical(words, t), s, not error), on_case(p, case))
                  for p, t, s in zip(cited, clean, ce))
    on_topic = " ".join(t for t, link in zip(clean, links) if link.verdict != "off_topic")
    support = round(_lexical(words, on_topic), 3)
    return Claim(id=cid, recommendation=rec_index, text=text, evidence=evidence, links=links, support=support,
                 rule_issues=issues, scoring_error=error, sentence_ids=sentence_ids), found


def _contradictions(cid: str, text: str, evidence: tuple[str, ...],
                    by_id: dict[str, Passage]) -> list[Contradiction]:
    """Sentences of any retrieved passage that state the opposite; only a cited passage can be ``strong``."""
    found = []
    for p in by_id.values():
        for sentence in split_sentences(p.text):
            overlap = conflict(text, sentence)
            if overlap >= CONTRADICTION_OVERLAP:
                found.append(Contradiction(cid, p.id, sentence, p.id in evidence and overlap >= STRONG_OVERLAP))
    return found


def build_ledger(draft: Draft, passages: Sequence[Passage], scorer: Scorer | None,
                 evidence_locked: bool = False, cancer_type: str | None = None) -> Ledger:
    """Split, link and score every claim of ``draft``; record contradictions. Release states come later."""
    by_id = {p.id: p for p in passages}
    case = case_words(cancer_type)
    claims: list[Claim] = []
    contradictions: list[Contradiction] = []
    for i, rec in enumerate(draft.recommendations, 1):
        texts = [rec.text] if rec.sentence_ids else split_claim(rec.text)
        for text in texts:
            claim, found = _claim(f"C{len(claims) + 1}", i, text, rec.evidence, rec.sentence_ids, by_id, scorer,
                                  case)
            claims.append(claim)
            contradictions += found
    for a_index, a in enumerate(claims):  # claims that contradict each other
        for b in claims[a_index + 1:]:
            overlap = conflict(a.text, b.text)
            if overlap >= CONTRADICTION_OVERLAP:
                contradictions.append(Contradiction(a.id, b.id, b.text, overlap >= STRONG_OVERLAP))
    method = "cross-encoder veto + lexical coverage" if scorer is not None else "lexical coverage"
    return Ledger(claims=tuple(claims), contradictions=tuple(contradictions), method=method,
                  evidence_locked=evidence_locked)
