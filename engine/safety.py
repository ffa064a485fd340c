"""The Specialist's answer schema and the Critic's deterministic rules. Every rule fails closed.

Rules (each has a test):
1. schema      - the output must be a JSON object with assessment, recommendations (1-5, each with text and
                 evidence ids), caveats and missing_information. Anything that does not parse is rejected.
2. citation    - every recommendation cites at least one evidence id, and every id names a retrieved passage.
3. absolute    - absolute language ("always", "never fails", "guaranteed", "100% cure", "cures all") is rejected.
4. dose        - a dose or schedule (e.g. "75 mg/m2", "every 21 days") must appear in a passage it cites.
5. drug        - a drug or regimen name (by suffix: -mab, -nib, -platin, -taxel, ...; or a known regimen
                 acronym) must appear in a passage it cites.
6. support     - lexical entailment proxy: at least half of a recommendation's content words must occur in the
                 passages it cites (an unsupported sentence from a tiny model fails here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.state import Draft, Passage, Recommendation

MAX_RECOMMENDATIONS = 5


def draft_schema(evidence_ids: Sequence[str]) -> dict[str, Any]:
    """JSON schema for the Specialist; ids are an enum so a grammar-constrained model cannot invent one."""
    return {
        "type": "object",
        "properties": {
            "assessment": {"type": "string", "maxLength": 600},
            "recommendations": {
                "type": "array", "minItems": 1, "maxItems": MAX_RECOMMENDATIONS,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "maxLength": 400},
                        "evidence": {"type": "array", "minItems": 1, "maxItems": 3,
                                     "items": {"type": "string", "enum": list(evidence_ids)}},
                    },
                    "required": ["text", "evidence"],
                },
            },
            "caveats": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 300}},
            "missing_information": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 200}},
        },
        "required": ["assessment", "recommendations", "caveats", "missing_information"],
    }


@dataclass(frozen=True)
class CriticResult:
    passed: bool
    issues: tuple[str, ...]
    draft: Draft | None


_JSON_OBJECT_RE = re.compile(r"\{.*\}", re.DOTALL)
_ABSOLUTE_RE = re.compile(
    r"\b(?:always|never fails|guaranteed?|certain(?:ly)? cure[sd]?|100 ?% (?:cure|effective|survival)|"
    r"cures? (?:all|every)|definitely|without (?:any )?risk|no risk)\b", re.IGNORECASE)
_DOSE_RE = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:mg/m2|mg/m²|mg/kg|mg|mcg|µg|g/m2|units?/kg|IU|mL|Gy|AUC\s*\d)\b|"
    r"\bAUC\s*\d+\b|\bevery\s+\d+\s*(?:days?|weeks?|hours?|h)\b|\bq\d+(?:h|d|w)\b|"
    r"\b\d+\s*(?:times|x)\s*(?:daily|a day|per day|weekly)\b|\b(?:once|twice|three times) (?:daily|weekly|a day)\b",
    re.IGNORECASE)
_DRUG_SUFFIX_RE = re.compile(
    r"\b[a-z]{3,}(?:mab|nib|lisib|parib|platin|taxel|rubicin|citabine|trexate|fosfamide|mustine|"
    r"tecan|mycin|vudine|zomib|lidomide|statin|relix|lutamide|terone|rozole|fen|degib|ciclib|rafenib|tinib|rasib|sertib)\b",
    re.IGNORECASE)
_REGIMENS = ("FOLFIRINOX", "NALIRIFOX", "FOLFOX", "FOLFIRI", "CAPOX", "XELOX", "FLOT", "R-CHOP", "CHOP", "ABVD",
             "BEP", "AC-T", "TC", "CMF", "ECF", "EOX", "MVAC", "GemCis", "PEM")
_REGIMEN_RE = re.compile(r"\b(?:" + "|".join(re.escape(r) for r in _REGIMENS) + r")\b")
_STOPWORDS = frozenset(
    "a an and are as at be been by can could consider considered for from has have if in into is it its may might "
    "of on or per should such than that the their then there these this those to was were which while who will "
    "with within would patient patients treatment therapy recommend recommended option options based also given "
    "including include use used using when where after before other more most less not no".split())
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9\-/]+", re.IGNORECASE)
SUPPORT_MIN = 0.5


def parse_draft(raw: str, model: str = "") -> tuple[Draft | None, str]:
    """Parse the model's JSON. Returns (draft, "") or (None, why it failed)."""
    match = _JSON_OBJECT_RE.search(raw or "")
    if not match:
        return None, "schema: the answer is not a JSON object"
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        return None, f"schema: the answer is not valid JSON ({exc.msg})"
    if not isinstance(data, dict):
        return None, "schema: the answer is not a JSON object"
    assessment = data.get("assessment")
    recs = data.get("recommendations")
    if not isinstance(assessment, str) or not isinstance(recs, list) or not recs:
        return None, "schema: 'assessment' (text) and a non-empty 'recommendations' list are required"
    parsed: list[Recommendation] = []
    for i, rec in enumerate(recs[:MAX_RECOMMENDATIONS], 1):
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            return None, f"schema: recommendation {i} needs a 'text' string"
        evidence = rec.get("evidence", [])
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            return None, f"schema: recommendation {i} 'evidence' must be a list of ids"
        parsed.append(Recommendation(text=rec["text"].strip(), evidence=tuple(evidence)))

    def strings(key: str) -> tuple[str, ...]:
        value = data.get(key, [])
        return tuple(str(v).strip() for v in value if str(v).strip()) if isinstance(value, list) else ()

    return Draft(assessment=assessment.strip(), recommendations=tuple(parsed), caveats=strings("caveats"),
                 missing_information=strings("missing_information"), model=model), ""


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text) if w.lower() not in _STOPWORDS and len(w) > 2}


def check_recommendation(i: int, rec: Recommendation, passages: dict[str, Passage]) -> list[str]:
    issues: list[str] = []
    if not rec.text:
        return [f"citation: recommendation {i} is empty"]
    if not rec.evidence:
        return [f"citation: recommendation {i} cites no evidence"]
    unknown = [e for e in rec.evidence if e not in passages]
    if unknown:
        return [f"citation: recommendation {i} cites unknown evidence {', '.join(unknown)}"]
    cited = " ".join(passages[e].text for e in rec.evidence)
    cited_lower = cited.lower()
    if m := _ABSOLUTE_RE.search(rec.text):
        issues.append(f"absolute: recommendation {i} uses absolute language ('{m.group(0)}')")
    for m in _DOSE_RE.finditer(rec.text):
        if " ".join(m.group(0).lower().split()) not in " ".join(cited_lower.split()):
            issues.append(f"dose: recommendation {i} states '{m.group(0)}', which its cited passages do not")
    for m in list(_DRUG_SUFFIX_RE.finditer(rec.text)) + list(_REGIMEN_RE.finditer(rec.text)):
        if m.group(0).lower() not in cited_lower:
            issues.append(f"drug: recommendation {i} names '{m.group(0)}', absent from its cited passages")
    words = _content_words(rec.text)
    if words:
        support = len(words & _content_words(cited)) / len(words)
        if support < SUPPORT_MIN:
            issues.append(f"support: recommendation {i} is not supported by its cited passages "
                          f"({support:.0%} of its key words appear there)")
    return issues


def critique(raw: str, passages: Sequence[Passage], model: str = "") -> CriticResult:
    """Run every rule. Any exception inside a rule is a rejection, never a pass."""
    try:
        draft, why = parse_draft(raw, model)
        if draft is None:
            return CriticResult(False, (why,), None)
        by_id = {p.id: p for p in passages}
        issues: list[str] = []
        if m := _ABSOLUTE_RE.search(draft.assessment):
            issues.append(f"absolute: the assessment uses absolute language ('{m.group(0)}')")
        for i, rec in enumerate(draft.recommendations, 1):
            issues.extend(check_recommendation(i, rec, by_id))
        return CriticResult(not issues, tuple(issues), draft)
    except Exception as exc:  # fail closed
        return CriticResult(False, (f"critic: could not evaluate the draft ({type(exc).__name__})",), None)
