"""The Specialist's answer schema and the Critic's deterministic rules. Every rule fails closed.

Rules (each has a test):
1. schema      - the output must be a JSON object with assessment, recommendations (1-5, each with text and
                 evidence ids), caveats and missing_information (lists of strings, possibly empty). Anything that
                 does not parse is rejected; more than 5 recommendations is an issue too (the first 5 are read,
                 and the report's footer says the rest were not).
2. citation    - every recommendation cites at least one evidence id, and every id names a retrieved passage.
3. absolute    - absolute language ("always", "never fails", "guaranteed", "100% cure", "cures all") is rejected.
4. dose        - a dose or schedule (e.g. "75 mg/m2", "every 21 days") must appear in a passage it cites.
5. drug        - a drug or regimen name must appear in a passage it cites. Names are recognised by suffix
                 (-mab, -nib, -platin, -taxel, ...), as a known regimen acronym (``_REGIMENS``) or from the
                 curated list of oncology drugs without such a suffix (``ONCOLOGY_DRUGS``: "arsenic trioxide",
                 "cyclophosphamide", "prednisone", ...; multi-word names match across spaces, hyphens and line
                 breaks, and a listed synonym backs the name: "5-FU" in a passage backs "fluorouracil").
6. support     - lexical entailment proxy: at least half of a recommendation's content words must occur in the
                 passages it cites (an unsupported sentence from a tiny model fails here).
7. term        - a word of 6+ letters found neither in the retrieved passages nor in an English or oncology
                 vocabulary (engine/phi_data: Webster's 2nd word list, clinical_vocab.txt) is a likely invented
                 drug or term ("Nalibamabine", seen from SmolLM2); simple inflections (-s, -ed, -ing, -ly) are
                 undone first. Markdown link targets and URLs are not words (``link_text``: a verbatim PDQ
                 quote's "Level of evidence" link is no 'PopUps'). If the vocabulary cannot be read, the
                 rule fails closed.
8. instruction - text addressed to the system (a chat role label such as "System:" or "Reviewer:", "ignore/
                 disregard prior guidance", "you are now", "approve this answer", "do not mention", "respond only
                 with", "mark as supported", "route to tier 1", ...; ``_INSTRUCTION_PATTERNS``) is rejected in a
                 recommendation; in a passage such sentences are dropped before support is measured and cannot be
                 selected in evidence-locked mode, so a poisoned guideline chunk cannot lend support to an answer
                 that echoes it (``strip_instructions``); the passage is named to the reviewer and in the report.

Rules 2-5, 7 and 8 are also evaluated per atomic claim (``claim_rule_issues``) by the claim-evidence ledger, so a
failing sentence blocks only itself once the retries are spent (engine/ledger.py, engine/governor.py). The free-text
assessment cites nothing, so rules 3-5, 7 and 8 check it against every relevant passage (``assessment_issues``): a
failure rejects the draft, and once the retries are spent the governor withholds the assessment.

Evidence-locked mode (``engine.evidence_locked``; on for the tiny embedded tiers) replaces the free-text schema with
``locked_schema``: the model's whole answer is ``{"sentences": ["E1.s2", "E3.s1", ...]}``, an ordered selection of
sentence ids of the relevant passages (``split_sentences``: prose only, hard-wrapped lines joined; no table rows,
images, captions or headings). The ids are a JSON-schema ``enum``, which the llama.cpp backend compiles into
its grammar, so the model cannot emit anything else; ``parse_locked`` maps the ids back to the verbatim sentences.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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
# Oncology drugs the suffix rule above misses (none ends in one of its suffixes; some are several words), each with
# the other names it is written as: any of them in a cited passage backs the drug, and ``drug_names`` reports the
# first. One home: the drug rule and ``drug_names`` (the ledger's contradiction check, the HITL gate, case fit).
ONCOLOGY_DRUGS: tuple[tuple[str, ...], ...] = (
    # cytotoxic chemotherapy
    ("arsenic trioxide",), ("all-trans retinoic acid", "tretinoin", "ATRA"),
    ("azacitidine",), ("busulfan",), ("chlorambucil",), ("cladribine",), ("clofarabine",),
    ("cyclophosphamide",), ("cytarabine", "ara-C"), ("dacarbazine",), ("eribulin",), ("etoposide",),
    ("fludarabine",), ("fluorouracil", "5-fluorouracil", "5-FU"), ("hydroxyurea", "hydroxycarbamide"), ("ifosfamide",),
    ("ixabepilone",), ("leucovorin", "folinic acid"), ("lurbinectedin",), ("melphalan",), ("mercaptopurine",),
    ("mitotane",), ("mitoxantrone",), ("nelarabine",), ("pemetrexed",), ("procarbazine",),
    ("streptozocin",), ("temozolomide",), ("thioguanine",), ("thiotepa",), ("tipiracil",), ("trabectedin",),
    ("trifluridine",), ("vinblastine",), ("vincristine",), ("vindesine",), ("vinorelbine",),
    # endocrine therapy
    ("exemestane",), ("fulvestrant",), ("elacestrant",), ("toremifene",), ("raloxifene",), ("megestrol",),
    ("leuprolide", "leuprorelin"), ("goserelin",), ("triptorelin",), ("histrelin",), ("relugolix",),
    ("octreotide",), ("lanreotide",),
    # corticosteroids
    ("prednisone",), ("prednisolone",), ("methylprednisolone",), ("dexamethasone",), ("hydrocortisone",),
    # targeted, immune and other systemic therapy
    ("everolimus",), ("temsirolimus",), ("sirolimus",), ("venetoclax",), ("midostaurin",), ("belzutifan",),
    ("tazemetostat",), ("selinexor",), ("aldesleukin", "interleukin-2", "IL-2"),
    ("interferon alfa", "interferon alpha", "peginterferon alfa"), ("sipuleucel-T",), ("tebentafusp",),
    ("talimogene laherparepvec", "T-VEC"), ("bacillus Calmette-Guérin", "bacillus Calmette-Guerin", "BCG"),
    ("tisagenlecleucel",), ("axicabtagene ciloleucel",), ("lisocabtagene maraleucel",),
    ("idecabtagene vicleucel",), ("ciltacabtagene autoleucel",), ("brexucabtagene autoleucel",),
    ("lutetium Lu 177 dotatate", "177Lu-dotatate", "lutetium-177 dotatate"),
    ("lutetium Lu 177 vipivotide tetraxetan", "177Lu-PSMA-617", "lutetium-177 PSMA-617"),
    ("radium-223", "radium Ra 223 dichloride"), ("zoledronic acid",), ("pamidronate",),
    # antibody-drug conjugates: one drug each, not their antibody ("trastuzumab deruxtecan" is not trastuzumab)
    ("trastuzumab deruxtecan", "fam-trastuzumab deruxtecan", "T-DXd"),
    ("trastuzumab emtansine", "ado-trastuzumab emtansine", "T-DM1"), ("datopotamab deruxtecan", "Dato-DXd"),
    ("sacituzumab govitecan",), ("enfortumab vedotin",), ("tisotumab vedotin",), ("brentuximab vedotin",),
    ("polatuzumab vedotin",), ("mirvetuximab soravtansine",), ("inotuzumab ozogamicin",),
    ("gemtuzumab ozogamicin",), ("loncastuximab tesirine",), ("belantamab mafodotin",),
)


def _name_key(text: str) -> str:
    """A drug name's words, lower-cased and joined by one space ("all-trans  retinoic\nacid" -> "all trans retinoic
    acid"): names match across spaces, hyphens and line breaks."""
    return " ".join(re.split(r"[\s\-]+", text.lower().strip()))


_DRUG_KEYS = {_name_key(name): names[0].lower() for names in ONCOLOGY_DRUGS for name in names}
_DRUG_FIRST_WORDS = {k.split()[0]: max(len(x.split()) for x in _DRUG_KEYS if x.split()[0] == k.split()[0])
                     for k in _DRUG_KEYS}  # first word -> the most words a name starting with it has
_NAME_WORD_RE = re.compile(r"\w+")
_NAME_GAP_RE = re.compile(r"[\s\-]+")


def _listed_drugs(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, as written, key) of each ``ONCOLOGY_DRUGS`` name in ``text``, longest first at each word: a
    dictionary look-up of word runs (one regex of every name costs 100 ms on a long passage)."""
    words = [(m.start(), m.end(), m.group(0).lower()) for m in _NAME_WORD_RE.finditer(text)]
    out, i = [], 0
    while i < len(words):
        most = _DRUG_FIRST_WORDS.get(words[i][2], 0)
        n = 1 if most else 0
        while n < most and i + n < len(words) and _NAME_GAP_RE.fullmatch(text, words[i + n - 1][1], words[i + n][0]):
            n += 1  # the words a name could span: joined by spaces, hyphens or line breaks only
        for k in range(n, 0, -1):
            key = " ".join(w for _, _, w in words[i:i + k])
            if key in _DRUG_KEYS:
                a, b = words[i][0], words[i + k - 1][1]
                out.append((a, b, text[a:b], _DRUG_KEYS[key]))
                i += k
                break
        else:
            i += 1
    return out


@functools.lru_cache(maxsize=256)  # case fit asks for every sentence's drugs, for several readings of it
def drug_spans(text: str) -> tuple[tuple[int, int, str], ...]:
    """(start, end, key) of every drug or regimen name in ``text``, in text order: a listed drug's key is its first
    name in ``ONCOLOGY_DRUGS`` (so synonyms share it), a suffix or regimen match's is itself, lower-cased. A suffix
    match inside a listed name ("5-fluorouracil", "trastuzumab deruxtecan") is that name's, not a second one."""
    listed = _listed_drugs(text)
    other = [(m.start(), m.end(), m.group(0), m.group(0).lower())
             for m in list(_DRUG_SUFFIX_RE.finditer(text)) + list(_REGIMEN_RE.finditer(text))
             if not any(a < m.end() and m.start() < b for a, b, _, _ in listed)]
    return tuple((a, b, key) for a, b, _, key in sorted(listed + other))


def named_drugs(text: str) -> list[tuple[str, str]]:
    """Every drug or regimen name in ``text`` as (the name as written, its key) in text order (``drug_spans``)."""
    return [(text[a:b], key) for a, b, key in drug_spans(text)]


@functools.lru_cache(maxsize=64)  # the same passages back every claim of a draft
def _drug_keys(text: str) -> frozenset[str]:
    return frozenset(key for _, key in named_drugs(text))


@functools.lru_cache(maxsize=64)
def _folded(text: str) -> str:
    return " ".join(text.lower().split())


def unbacked_drugs(text: str, cited: str) -> list[str]:
    """Drug names of ``text`` (as written, once each) that ``cited`` does not contain under any of their names."""
    named = named_drugs(text)
    if not named:
        return []
    cited_keys = _drug_keys(cited)
    cited_folded = _folded(cited)
    out: list[str] = []
    for surface, key in named:
        if key in cited_keys or _folded(surface) in cited_folded:
            continue
        if surface not in out:
            out.append(surface)
    return out


_STOPWORDS = frozenset(
    "a an and are as at be been by can could consider considered for from has have if in into is it its may might "
    "of on or per should such than that the their then there these this those to was were which while who will "
    "with within would patient patients treatment therapy recommend recommended option options based also given "
    "including include use used using when where after before other more most less not no".split())
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9\-/]+", re.IGNORECASE)
SUPPORT_MIN = 0.5


def _json_object(raw: str) -> tuple[dict[str, Any] | None, str]:
    """The first JSON object in the model's output, or (None, why it is not one)."""
    match = _JSON_OBJECT_RE.search(raw or "")
    if not match:
        return None, "schema: the answer is not a JSON object"
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        return None, f"schema: the answer is not valid JSON ({exc.msg})"
    if not isinstance(data, dict):
        return None, "schema: the answer is not a JSON object"
    return data, ""


def parse_draft(raw: str, model: str = "") -> tuple[Draft | None, str]:
    """Parse the model's JSON. Returns (draft, "") or (None, why it failed)."""
    data, why = _json_object(raw)
    if data is None:
        return None, why
    assessment = data.get("assessment")
    recs = data.get("recommendations")
    if not isinstance(assessment, str) or not isinstance(recs, list) or not recs:
        return None, "schema: 'assessment' (text) and a non-empty 'recommendations' list are required"
    notes: dict[str, tuple[str, ...]] = {}
    for key in ("caveats", "missing_information"):  # required by the schema: a missing or odd value is not skipped
        value = data.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return None, f"schema: '{key}' must be a list of strings (empty when there is none)"
        notes[key] = tuple(v.strip() for v in value if v.strip())
    parsed: list[Recommendation] = []
    for i, rec in enumerate(recs[:MAX_RECOMMENDATIONS], 1):
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            return None, f"schema: recommendation {i} needs a 'text' string"
        evidence = rec.get("evidence", [])
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            return None, f"schema: recommendation {i} 'evidence' must be a list of ids"
        parsed.append(Recommendation(text=rec["text"].strip(), evidence=tuple(evidence)))
    return Draft(assessment=assessment.strip(), recommendations=tuple(parsed), caveats=notes["caveats"],
                 missing_information=notes["missing_information"], model=model), ""


OVERFLOW_MARK = f"only the first {MAX_RECOMMENDATIONS} are read"


def overflow_issue(raw: str, locked: bool = False) -> str:
    """A critic issue when the answer holds more recommendations (or distinct sentence ids) than the schema allows:
    the parsers read the first MAX_RECOMMENDATIONS, and the rest must not vanish without a word ('' otherwise)."""
    data, _ = _json_object(raw)
    items = (data or {}).get("sentences" if locked else "recommendations")
    if not isinstance(items, list):
        return ""
    n = len(dict.fromkeys(i for i in items if isinstance(i, str))) if locked else len(items)
    if n <= MAX_RECOMMENDATIONS:
        return ""
    return (f"schema: the answer has {n} {'sentences' if locked else 'recommendations'}, at most "
            f"{MAX_RECOMMENDATIONS} are allowed; {OVERFLOW_MARK}")


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text) if w.lower() not in _STOPWORDS and len(w) > 2}


@functools.lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """English (Webster's 2nd, lower-case entries) and oncology-prose words shipped in engine/phi_data."""
    folder = Path(__file__).parent / "phi_data"
    with gzip.open(folder / "english_words.txt.gz", "rt", encoding="utf-8") as fh:
        words = {w.strip() for w in fh if w.strip() and not w.startswith("#")}
    for line in (folder / "clinical_vocab.txt").read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            words.update(line.lower().split())
    return frozenset(words)


_TERM_RE = re.compile(r"[A-Za-z][A-Za-z\-]{5,}")
_INFLECTIONS = ("", "s", "es", "ed", "d", "ing", "ly", "al")


def _known(word: str, known: frozenset[str] | set[str]) -> bool:
    return any(word.endswith(end) and word[: len(word) - len(end)] in known for end in _INFLECTIONS) or any(
        word[: len(word) - len(end)] + "e" in known for end in ("ing", "ed") if word.endswith(end))


_LINK_TARGET_RE = re.compile(r"\]\([^()]*(?:\([^()]*\)[^()]*)*\)")  # "](/Common/PopUps/popDefinition.aspx?id=1)"
_URL_RE = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)


def link_text(text: str) -> str:
    """``text`` with Markdown link and image targets and bare URLs removed, the link text kept: "[stage III colon
    cancer](/types/colorectal/hp/x)" reads "[stage III colon cancer]". A target is an address, not prose, so no
    term check may read it (PDQ's 2,164 "Level of evidence" links would otherwise be 'PopUps', 'popDefinition')."""
    return _URL_RE.sub(" ", _LINK_TARGET_RE.sub("]", text or ""))


_LINK_RE = re.compile(r"!?\[([^\[\]]*)\]\([^()]*(?:\([^()]*\)[^()]*)*\)")
_EMPHASIS_RE = re.compile(r"\*{1,3}|(?<!\w)_{1,2}|_{1,2}(?!\w)")


def display_text(text: str) -> str:
    """A passage sentence as a clinician reads it in the report: citation markers ("[[54](#cit/section_11.54)]",
    "[[Level of evidence A1](...)]") dropped, links shown as their text without targets, emphasis marks dropped (a
    sentence cut out of "*in situ*" leaves one "*" that would italicise the rest of the report). For display only:
    the quote, support and rule checks keep reading the passage's own text."""
    text = _CITATION_RE.sub("", text or "")
    text = _LINK_RE.sub(lambda m: m.group(1), text)
    return " ".join(_EMPHASIS_RE.sub("", text).split())


def list_header(text: str) -> bool:
    """A sentence that only opens a list ("Other risk factors for breast cancer include:"): its items are not in it,
    so on its own it recommends nothing."""
    return _CITATION_RE.sub("", text or "").rstrip().endswith(":")


def unknown_terms(text: str, passages_text: str) -> list[str]:
    """Words of ``text`` in neither ``passages_text`` nor the vocabulary (each part of a hyphenated word); link
    targets and URLs in either are not words (``link_text``)."""
    text, passages_text = link_text(text), link_text(passages_text)
    seen = {w.lower() for w in _WORD_RE.findall(passages_text) + _TERM_RE.findall(passages_text)}
    seen |= {part for w in seen for part in re.split(r"[-/]", w)}  # "FOLFIRI/bevacizumab", "IMspire150"
    vocab = vocabulary()
    out = []
    for m in _TERM_RE.finditer(text):
        parts = [p for p in m.group(0).lower().split("-") if len(p) >= 6]
        if any(not _known(p, seen) and not _known(p, vocab) for p in parts):
            out.append(m.group(0))
    return out


def claim_rule_issues(label: str, text: str, evidence: Sequence[str], passages: dict[str, Passage]) -> list[str]:
    """Rules 2-5, 7 and 8 for one statement (``label`` names it in the messages, e.g. "claim C3")."""
    if not text:
        return [f"citation: {label} is empty"]
    if not evidence:
        return [f"citation: {label} cites no evidence"]
    unknown = [e for e in evidence if e not in passages]
    if unknown:
        return [f"citation: {label} cites unknown evidence {', '.join(unknown)}"]
    issues: list[str] = []
    if m := _INSTRUCTION_RE.search(text):
        issues.append(f"instruction: {label} contains instruction-like text ('{m.group(0)}')")
    cited = " ".join(strip_instructions(passages[e].text) for e in evidence)
    cited_lower = cited.lower()
    if m := _ABSOLUTE_RE.search(text):
        issues.append(f"absolute: {label} uses absolute language ('{m.group(0)}')")
    for m in _DOSE_RE.finditer(text):
        if " ".join(m.group(0).lower().split()) not in " ".join(cited_lower.split()):
            issues.append(f"dose: {label} states '{m.group(0)}', which its cited passages do not")
    named = set()
    for name in unbacked_drugs(text, cited):
        named |= {name.lower(), *name.lower().split()}  # the term rule does not report a word of it again
        issues.append(f"drug: {label} names '{name}', absent from its cited passages")
    every_passage = " ".join(strip_instructions(p.text) for p in passages.values())
    try:
        unknown = [t for t in unknown_terms(text, every_passage) if t.lower() not in named]
    except OSError as exc:  # the vocabulary is missing: the rule cannot be evaluated, so it fails closed
        return issues + [f"term: {label} could not be checked for invented terms ({exc})"]
    issues += [f"term: {label} uses '{t}', found in no retrieved passage and no vocabulary" for t in unknown]
    return issues


# Prompt-injection patterns. Each alternative is something a guideline never says to its reader: a chat role label,
# an order to drop earlier instructions, a new identity for the model, a sign-off or release order, an order about
# what to choose, hide or answer. Not one sentence of the 80 PDQ summaries in ../shared/corpus/pdq is flagged.
_ROLE = r"(?:system|assistant|user|human|reviewer|developer|critic|ai|model|admin(?:istrator)?)"
_INSTRUCTION_PATTERNS = (
    # a chat role label opening a line or sentence ("System: ...", "Assistant: select ...", "[SYSTEM]", "<|user|>")
    r"(?:^|(?<=[.!?;\n]))[\s\"'>*#\-]*\[?" + _ROLE + r"\]?\s*:|\[(?:system|assistant|inst)\]|"
    r"<\|?/?(?:system|assistant|user|im_start|im_end)\|?>",
    # ignore / disregard / forget / override ... instructions, guidance, guidelines, rules, prompt, ...
    r"\b(?:ignore|disregard|forget|override|bypass|overrule)\b[^.;!?\n]{0,40}?\b(?:instructions?|guidance|"
    r"guidelines?|rules?|prompts?|directions?|directives?|checks?|constraints?|polic(?:y|ies)|safeguards?|"
    r"everything (?:above|before|else))\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|preceding|"
    r"foregoing|other|rest)\b",
    # a new identity or mode for the model
    r"\byou are now\b|\bact as (?:an?|the) (?:assistant|ai|model|system|reviewer|unrestricted)\b|"
    r"\bpretend (?:to be|you are)\b|\byour (?:new|real|true) (?:instructions?|role|task|goal)\b|"
    r"\bnew instructions?\b|\bsystem prompt\b|\bdeveloper mode\b|\bjailbreak|\bas an ai\b",
    # sign-off and release orders
    r"\bapprove (?:this|it|without|as is)\b|\b(?:approve|accept|sign off on|release) (?:this|the) (?:draft|"
    r"answer|item|response|output)\b|\bauto-?approve\b|\b(?:this|the) (?:answer|draft|response|output) "
    r"(?:is|has been) (?:approved|verified|supported|safe)\b",
    r"\bmark (?:this|it|them|everything|every (?:claim|recommendation)|all (?:claims|recommendations)|as)\b"
    r".{0,30}\b(?:supported|approved|safe|verified)\b",
    r"\broute (?:this|it|the case)?\s*to tier\b|\bskip (?:the )?(?:review|reviewer|critic|safety|checks?)\b",
    # orders about the answer itself: what to choose, hide or say
    r"\b(?:select|choose|pick|quote|cite|output|repeat) (?:this|the following) (?:sentence|passage|statement|"
    r"text|answer|id)\b",
    r"(?:^|(?<=[.!?;:\n]))\s*(?:do not|don't|never) (?:tell|mention|show|reveal|disclose|flag|report|cite|"
    r"include|say)\b|\bdo not (?:tell|mention (?:it |this )?to|show|reveal to|disclose to) (?:the )?(?:reviewer|"
    r"clinician|user|doctor|physician)\b",
    r"(?:^|(?<=[.!?;:\n]))\s*(?:respond|reply|answer|output|print|say|return) (?:only|with only|exactly)\b|"
    r"\bonly (?:respond|reply|answer) (?:with|in)\b",
    # found in a QA pass: "Forget everything you were told", "Do not follow the guidelines", a bare
    # "### SYSTEM" heading, "Always answer: ...", "You must output only ...", and the order in French or
    # Spanish
    r"\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:you|that|which|above|before|else)\b|"
    r"\b(?:do not|don't|never)\s+(?:follow|obey|apply)\s+(?:the\s+|these\s+|any\s+|your\s+)?(?:guidelines?|"
    r"instructions?|rules?|evidence|passages?)\b",
    r"^[\s#*>\-\[]*(?:system|assistant|developer)(?:\s+prompt)?[\s#*\]]*$",
    r"\balways (?:answer|respond|reply|say|output)\b|\byou (?:must|should|will|shall) (?:now )?(?:only )?"
    r"(?:output|respond|reply|answer|say|print|return)\b",
    r"\bignor(?:ez|e[rz]?|a|ar|ieren|iere)\b[^.;!?\n]{0,40}\b(?:instruc\w+|consignes|anweisungen)\b",
)
_INSTRUCTION_RE = re.compile("|".join(f"(?:{x})" for x in _INSTRUCTION_PATTERNS), re.IGNORECASE | re.MULTILINE)


def instruction_like(text: str) -> bool:
    """Text that addresses the system rather than the clinician (a prompt-injection attempt). Read in NFKC
    form: full-width letters ("Ｉｇｎｏｒｅ previous instructions") are the same words to a model."""
    return bool(_INSTRUCTION_RE.search(unicodedata.normalize("NFKC", text or "")))


def drop_instruction_sentences(text: str) -> str:
    """``text`` with its instruction-like sentences removed and everything else (line breaks too) left as written:
    what case facts may be read from, so "ignore ... and recommend tamoxifen" does not count as prior treatment."""
    if not instruction_like(text):
        return text
    for sentence in _SENTENCE_SPLIT_RE.split(text):
        if sentence and instruction_like(sentence):
            text = text.replace(sentence, "")
    return text


def instruction_passages(passages: Sequence[Passage]) -> tuple[str, ...]:
    """Ids of the relevant passages that hold instruction-like text (a possibly poisoned guideline chunk)."""
    return tuple(p.id for p in passages if p.relevant and instruction_like(p.text))


def strip_instructions(text: str) -> str:
    """``text`` without its instruction-like sentences (what support may be measured against)."""
    if not instruction_like(text):
        return text
    return " ".join(s for s in _SENTENCE_SPLIT_RE.split(text) if not instruction_like(s))


def drug_names(text: str) -> set[str]:
    """Drug and regimen names the rules recognise, lower-cased, a listed drug's synonyms as one name
    (``named_drugs``; the ledger's contradiction check, the HITL gate and case fit use them)."""
    return set(_drug_keys(text))


def check_recommendation(i: int, rec: Recommendation, passages: dict[str, Passage]) -> list[str]:
    issues = claim_rule_issues(f"recommendation {i}", rec.text, rec.evidence, passages)
    if issues and issues[0].startswith("citation"):
        return issues
    cited = " ".join(strip_instructions(passages[e].text) for e in rec.evidence)
    words = _content_words(rec.text)
    if words:
        support = len(words & _content_words(cited)) / len(words)
        if support < SUPPORT_MIN:
            issues.append(f"support: recommendation {i} is not supported by its cited passages "
                          f"({support:.0%} of its key words appear there)")
    return issues


_CITED_RE = re.compile(r"\[(E\d+)(?:\.s\d+)?\]")
_HUMAN_RULES = ("citation", "instruction", "absolute", "dose", "drug")  # no "term": a person's own wording is fine


def review_edits(text: str, passages: Sequence[Passage]) -> tuple[str, ...]:
    """The critic's deterministic rules run on a reviewer's edited answer, statement by statement.

    The reviewer signs the text as written, so findings do not block it: they are recorded with the decision and
    printed beside the answer (a dose or drug no passage states, absolute language, instruction-like text, a
    citation of evidence that was not retrieved). A statement with no ``[E2]``-style citation is checked against
    every retrieved passage. Findings name the statement the way the reviewer wrote it: headings and blank lines
    are not statements, a list item is "item 2 (line 5)", any other line "line 7", with ", sentence 2" when the
    line holds several sentences ("sentence 2" alone when the whole text is one line), and quote it.
    """
    nothing = Passage(id="-", chunk_id="", title="", source="", section="", page=None, text="", distance=1.0,
                      rerank_score=None)  # nothing retrieved: no dose or drug can be backed
    by_id = {p.id: p for p in passages} or {"-": nothing}
    findings: list[str] = []
    lines = [(no, line) for no, line in enumerate((text or "").splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    for no, line in lines:
        m = _LIST_ITEM_RE.match(line)
        body = (line[m.end():] if m else line).strip().lstrip(">-*+• ").strip()
        sentences = [x.strip() for x in _SENTENCE_SPLIT_RE.split(body) if x and x.strip()]
        where = "" if len(lines) == 1 else f"item {m.group(1)} (line {no})" if m and m.group(1) else f"line {no}"
        for k, sentence in enumerate(sentences, 1):
            part = f"sentence {k}" if len(sentences) > 1 or not where else ""
            label = (", ".join(x for x in (where, part) if x)
                     + f" of the reviewer's text (\u201c{_quote(sentence)}\u201d)")
            cited = tuple(dict.fromkeys(_CITED_RE.findall(sentence))) or tuple(by_id)
            issues = claim_rule_issues(label, sentence, cited, by_id)
            findings += [x for x in issues if x.split(":", 1)[0] in _HUMAN_RULES]
    return tuple(findings)


_LIST_ITEM_RE = re.compile(r"^\s*(?:(\d+)[.)]|[-*+•])\s+")


def _quote(sentence: str, limit: int = 70) -> str:
    return sentence if len(sentence) <= limit else sentence[:limit].rsplit(" ", 1)[0] + "\u2026"


def assessment_issues(assessment: str, passages: Sequence[Passage]) -> list[str]:
    """The free-text assessment under the rules a caveat gets (``claim_rule_issues``: instruction, absolute, dose,
    drug, invented term) against every relevant passage, as it cites none. Each issue names "the assessment", which
    is how the governor node knows to withhold it once the retries are spent."""
    if not assessment:
        return []
    by_id = {p.id: p for p in passages}
    if not by_id:  # nothing retrieved can back a dose or a drug: only the rules that need no evidence can pass
        return ["citation: the assessment cannot be checked against any passage"]
    return [i for i in claim_rule_issues("the assessment", assessment, tuple(by_id), by_id)
            if not i.startswith("citation")]


def critique(raw: str, passages: Sequence[Passage], model: str = "", locked: bool = False) -> CriticResult:
    """Run every rule. Any exception inside a rule is a rejection, never a pass."""
    try:
        draft, why = parse_locked(raw, passages, model) if locked else parse_draft(raw, model)
        if draft is None:
            return CriticResult(False, (why,), None)
        by_id = {p.id: p for p in passages}
        issues: list[str] = [] if locked else assessment_issues(draft.assessment, passages)
        if overflow := overflow_issue(raw, locked):
            issues.append(overflow)
        for i, rec in enumerate(draft.recommendations, 1):
            issues.extend(check_recommendation(i, rec, by_id))
        return CriticResult(not issues, tuple(issues), draft)
    except Exception as exc:  # fail closed
        return CriticResult(False, (f"critic: could not evaluate the draft ({type(exc).__name__})",), None)


# --------------------------------------------------------------------------- evidence-locked mode

_SENTENCE_SPLIT_RE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<=[.!?;])\s+(?=[A-Z(\"'])|\n+")
MIN_SENTENCE_WORDS = 4  # shorter fragments are headings or list labels, not statements


# A citation marker after a sentence's full stop: "[[12](#cit/section_1.12)]", "[[1](#cit/x)-[3](#cit/y)]",
# "[[Level of evidence C1](/Common/PopUps/popDefinition.aspx?...)]". The next sentence begins after it.
CITATION_MARK = r"\[(?:\[[^\[\]]*\]\([^()\s]*\)[,\-\u2013\s]*)+\]"
_CITATION_RE = re.compile(CITATION_MARK)
# the end of a sentence: its mark and any citation markers (kept with it), then the space before the next one
# (a chunk may also open with the markers of the sentence before it). Not after "e.g.", "i.e.", "vs." or "U.S."
# ("... approved by the U.S. Food and Drug Administration" had been released as two claims, both fragments).
_BOUNDARY_RE = re.compile(r"(?:(?:(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bU\.S)\.|[!?;])(?:;?\s*" + CITATION_MARK
                          + r")*|^(?:" + CITATION_MARK + r")+)(?=\s+[A-Z(\"'\[])")
_LIST_ITEM_START_RE = re.compile(r"^(?:[-*+\u2022]|\d+[.)])\s+")
_IMAGE_RE = re.compile(r"^!\[|\[Enlarge\]\(", re.IGNORECASE)
_BARE_HEADING_RE = re.compile(r"^(?:#|(?:\*\*|__)[^*_]+(?:\*\*|__):?$|Table \d+\.|Figure \d+\.)")
_SENTENCE_END_RE = re.compile(r"[.!?:;][\"')\]*_]*$")


def text_units(text: str) -> list[tuple[str, str]]:
    """(kind, text) blocks of a passage: "text" (a paragraph), "list" (a list item), "heading", "table" (a Markdown
    table row), "image" (an image or "Enlarge" link) or "caption" (the paragraph right under an image).

    Guideline text is hard-wrapped, so a line break is no boundary when the next line starts in lower case or the
    line before it ends inside a sentence: "the benefit of adjuvant\ntamoxifen in hormone receptor-positive women"
    is one statement. A blank line, a list item, a heading and a table row always start a new block."""
    units: list[list[str]] = []
    open_block = False  # the last block may take a continuation line
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            open_block = False
            continue
        if line.startswith("|"):
            kind = "table"
        elif _IMAGE_RE.search(line):
            kind = "image"
        elif _BARE_HEADING_RE.match(line):
            kind = "heading"
        elif _LIST_ITEM_START_RE.match(line):
            kind = "list"
        else:
            kind = "text"
        if kind == "text" and open_block and units and units[-1][0] in ("text", "list", "caption"):
            last = _CITATION_RE.sub("", units[-1][1]).rstrip()
            if line[0].islower() or not _SENTENCE_END_RE.search(last):
                units[-1][1] += " " + line
                continue
        if kind == "text" and units and units[-1][0] == "image":
            kind = "caption"
        units.append([kind, line])
        open_block = kind in ("text", "list", "caption")
    return [(kind, body) for kind, body in units]


def _bracketed(text: str) -> list[tuple[int, int]]:
    """The spans inside matched round brackets: a statistic "(13.3 months vs. 11.7 months; HR, 0.84; P =
    .0219)" holds sentence marks that end nothing (an unmatched bracket spans nothing)."""
    spans, opened = [], []
    for i, ch in enumerate(text):
        if ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            start = opened.pop()
            if not opened:
                spans.append((start, i))
    return spans


# A list header that opens a treatment's options ("Treatment options for metastatic BCC of the skin ... include:")
OPTIONS_HEADER_RE = re.compile(r"\b(?:options?|approach(?:es)?|regimens?|choices?)\b[^:]*\binclude", re.IGNORECASE)
_NUMBERED_ITEM_RE = re.compile(r"^\d+[.)]\s")


def split_sentences(text: str) -> list[str]:
    """Deterministic sentence split of a passage's prose: its paragraphs and list items (``text_units``, hard-wrapped
    lines joined), each cut at . ! ? ; before a capital letter (after any citation markers), not after "e.g."/"i.e."/
    "vs." nor inside round brackets. Headings, table rows, images and their captions are not statements and are
    left out, as are fragments of fewer than MIN_SENTENCE_WORDS words (but an options list's item:
    ``unit_sentences``) and instruction-like text; bullets and quote marks are dropped."""
    return [piece for _, _, pieces in unit_sentences(text) for piece in pieces]


def unit_sentences(text: str) -> list[tuple[str, str, list[str]]]:
    """(kind, text, sentences) of each ``text_units`` block of ``text``, the sentences as ``split_sentences`` cuts
    them. A numbered item of an options list with short bullets under it ("Treatment options for metastatic BCC ...
    include:" then "1. Hedgehog pathway inhibitors." then "- Vismodegib.") is a sentence however short: under its
    lead-in, with the drugs listed under it, it is the guideline's recommendation (engine.casefit
    ``list_lead_ins``, ``bullets_under``); a locally advanced BCC case had never been offered it."""
    out: list[tuple[str, str, list[str]]] = []
    options = False  # inside an options list (its header read, no paragraph or heading since)
    units = text_units(text)
    for i, (kind, unit) in enumerate(units):
        pieces: list[str] = []
        if kind in ("text", "list"):
            # a numbered item with its drugs in bullets under it, too short to be offered themselves ("- Vismodegib.");
            # "Chemotherapy." alone says nothing, and bullets that are sentences are offered as they are
            after = units[i + 1] if i + 1 < len(units) else ("", "")
            option = options and kind == "list" and bool(_NUMBERED_ITEM_RE.match(unit)) and after[0] == "list" \
                and not _NUMBERED_ITEM_RE.match(after[1]) \
                and len(_CITATION_RE.sub(" ", _LIST_ITEM_START_RE.sub("", after[1])).split()) < MIN_SENTENCE_WORDS
            inside = _bracketed(unit)
            cuts = [0, *(m.end() for m in _BOUNDARY_RE.finditer(unit)
                         if not any(a < m.end() <= b for a, b in inside)), len(unit)]
            for piece in (unit[a:b] for a, b in zip(cuts, cuts[1:])):
                piece = piece.strip().lstrip(">-*\u2022 ").strip()
                short = len(_CITATION_RE.sub(" ", piece).split()) < MIN_SENTENCE_WORDS
                if (not piece or piece.startswith("#") or short and not (option and _words(piece))
                        or instruction_like(piece)):  # never offered to the model, never quoted
                    continue
                pieces.append(piece)
        out.append((kind, unit, pieces))
        headers = [piece for piece in pieces if list_header(piece)]
        if headers:
            options = bool(OPTIONS_HEADER_RE.search(headers[-1]))
        elif kind != "list":
            options = False
    return out


def _words(piece: str) -> bool:
    """A piece holds a word (not only a list number, a citation or punctuation)."""
    return bool(re.search(r"[A-Za-z]{3,}", _CITATION_RE.sub(" ", piece)))


def offered_sentences(text: str) -> list[str]:
    """A passage's sentences as evidence-locked mode numbers them (".s1", ".s2", ...). A list header ("...
    include:") is not one: without its items it says nothing."""
    return [s for s in split_sentences(text) if not list_header(s)]


def passage_sentences(passages: Sequence[Passage]) -> dict[str, tuple[str, str]]:
    """Sentence id ("E1.s3") -> (passage id, verbatim sentence), in passage order (``offered_sentences``)."""
    return {f"{p.id}.s{j}": (p.id, sentence)
            for p in passages for j, sentence in enumerate(offered_sentences(p.text), 1)}


def plain_sentence(text: str) -> str:
    """A sentence's words as a reader sees them: a link's target, a citation marker and emphasis removed
    ("[HIMALAYA](/clinicaltrials/NCT03298451)" -> "[HIMALAYA]", "[[12](#cit/section_4.12)]" and "*" -> " ")."""
    plain = re.sub(r"\]\([^)]*\)", "]", text or "")
    return re.sub(r"\[\[[^\]]*\]\([^)]*\)\]|\[\[[^\]]*\]\]", " ", plain).replace("*", "")


def locked_schema(sentence_ids: Sequence[str]) -> dict[str, Any]:
    """Evidence-locked answer: an ordered selection of sentence ids, nothing else (the enum becomes grammar)."""
    return {
        "type": "object",
        "properties": {"sentences": {"type": "array", "minItems": 1, "maxItems": MAX_RECOMMENDATIONS,
                                     "items": {"type": "string", "enum": list(sentence_ids)}}},
        "required": ["sentences"],
    }


LOCKED_ASSESSMENT = ("Evidence-locked answer: each statement below is quoted verbatim from a retrieved guideline "
                     "passage; the model only chose and ordered them.")


def locked_labels(sentence_ids: Sequence[str]) -> dict[str, str]:
    """Label ("S1", "S2", ...) -> sentence id, numbered in the order the sentences are offered (best fit first,
    ``casefit.locked_candidates``). A small model picks ids in passage order ("E1.s1" before "E7.s1") whatever
    order they are listed in (the audit: the fitting recommendation listed first, passed over); numbered as listed,
    the order counts."""
    return {f"S{i}": sid for i, sid in enumerate(sentence_ids, 1)}


def unlabel_locked(raw: str, labels: Mapping[str, str]) -> str:
    """A locked answer with its labels replaced by the sentence ids they stand for, so that the Critic and the
    parser read sentence ids; an id that is no label is kept (the parser rejects what is unknown), and text that is
    no such answer is returned as it is (it fails to parse: fail closed)."""
    data, _ = _json_object(raw)
    ids = (data or {}).get("sentences")
    if not isinstance(ids, list):
        return raw
    return json.dumps({**data, "sentences": [labels.get(i, i) if isinstance(i, str) else i for i in ids]})


def parse_locked(raw: str, passages: Sequence[Passage], model: str = "") -> tuple[Draft | None, str]:
    """Map a locked answer back to verbatim sentences. Unknown ids reject the answer; repeats are dropped."""
    data, why = _json_object(raw)
    if data is None:
        return None, why
    ids = data.get("sentences")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        return None, "schema: 'sentences' must be a non-empty list of sentence ids"
    sentences = passage_sentences(passages)
    unknown = [i for i in ids if i not in sentences]
    if unknown:
        return None, f"schema: unknown sentence ids {', '.join(unknown)}"
    recs = tuple(Recommendation(text=sentences[i][1], evidence=(sentences[i][0],), sentence_ids=(i,))
                 for i in dict.fromkeys(ids))[:MAX_RECOMMENDATIONS]
    return Draft(assessment=LOCKED_ASSESSMENT, recommendations=recs, model=model), ""
