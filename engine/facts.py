"""Case-fact extraction from (already redacted) clinical text, for the Router and the prompts.

Rules, each tested:
- Cancer type: every phrase in CANCER_TYPES is searched; the longest match wins (the most specific: "triple-negative
  breast cancer" over "breast cancer"), ties go to the earliest. "small cell lung" never matches inside "non-small".
- Stage: roman ("stage IIIB"), arabic ("stage 4") and TNM ("T3N1M1": M1 -> IV, else N1-3 -> III, a routing-only
  approximation since true stage groups differ by cancer). "metastatic" without "non-" implies IV. Several stages
  mentioned -> the highest (disease progresses; routing must not under-call it).
- Markers: genes from the configured list with an optional variant or status ("BRAF V600E", "EGFR exon 19 deletion",
  "HER2-positive"), plus biomarkers (MSI-H, dMMR, TMB-high, PD-L1 %, ER/PR status). A gene counts as altered unless
  its status is negative / wild-type / not detected.
- Prior treatment: a configured keyword not preceded (within a few words) by a negation ("no prior chemotherapy"),
  outside questions ("Is FOLFIRINOX an option?" asks, it does not report).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.state import CaseFacts

# (canonical name, regex alternatives). Longest matched span wins, so list generic names freely.
CANCER_TYPES: tuple[tuple[str, str], ...] = (
    ("triple-negative breast cancer", r"triple[- ]negative breast (?:cancer|carcinoma)|\bTNBC\b"),
    ("HER2-positive breast cancer", r"HER2[- ]?(?:positive|\+) breast (?:cancer|carcinoma)"),
    ("hormone receptor-positive breast cancer", r"(?:HR|hormone[- ]receptor|ER)[- ]?(?:positive|\+) breast (?:cancer|carcinoma)"),
    ("breast cancer", r"breast (?:cancer|carcinoma|adenocarcinoma)|(?:invasive )?ductal carcinoma|lobular carcinoma"),
    ("non-small cell lung cancer", r"non[- ]small[- ]cell lung (?:cancer|carcinoma)|\bNSCLC\b|lung adenocarcinoma|"
                                   r"squamous cell (?:carcinoma of the lung|lung (?:cancer|carcinoma))"),
    ("small cell lung cancer", r"(?<!non-)(?<!non )(?<!non)small[- ]cell lung (?:cancer|carcinoma)|\bSCLC\b"),
    ("lung cancer", r"lung (?:cancer|carcinoma|tumou?r)"),
    ("colorectal cancer", r"colorectal (?:cancer|carcinoma|adenocarcinoma)|colon (?:cancer|carcinoma|adenocarcinoma)|"
                          r"rectal (?:cancer|carcinoma|adenocarcinoma)|\bCRC\b"),
    ("pancreatic neuroendocrine tumor", r"pancreatic neuroendocrine (?:tumou?r|neoplasm|carcinoma)|\bpNET\b"),
    ("pancreatic adenocarcinoma", r"pancreatic (?:ductal )?(?:adenocarcinoma|cancer|carcinoma)|\bPDAC\b|"
                                  r"adenocarcinoma of the pancreas|cancer of the pancreas"),
    ("prostate cancer", r"prostate (?:cancer|carcinoma|adenocarcinoma)|\bmCRPC\b|castration[- ]resistant prostate"),
    ("uveal melanoma", r"uveal melanoma|ocular melanoma"),
    ("melanoma", r"melanoma"),
    ("ovarian cancer", r"ovarian (?:cancer|carcinoma)|high[- ]grade serous (?:ovarian )?carcinoma"),
    ("gastric cancer", r"gastric (?:cancer|carcinoma|adenocarcinoma)|stomach cancer|gastroesophageal junction"),
    ("esophageal cancer", r"o?esophageal (?:cancer|carcinoma|adenocarcinoma)"),
    ("hepatocellular carcinoma", r"hepatocellular carcinoma|\bHCC\b|liver cancer"),
    ("cholangiocarcinoma", r"cholangiocarcinoma|bile duct cancer|biliary tract cancer"),
    ("gallbladder cancer", r"gallbladder (?:cancer|carcinoma)"),
    ("renal cell carcinoma", r"renal cell (?:carcinoma|cancer)|\bRCC\b|kidney cancer"),
    ("urothelial carcinoma", r"urothelial (?:carcinoma|cancer)|bladder (?:cancer|carcinoma)"),
    ("glioblastoma", r"glioblastoma|\bGBM\b"),
    ("glioma", r"glioma|astrocytoma|oligodendroglioma"),
    ("soft tissue sarcoma", r"(?:soft[- ]tissue )?sarcoma|leiomyosarcoma|liposarcoma"),
    ("gastrointestinal stromal tumor", r"gastrointestinal stromal tumou?r|\bGIST\b"),
    ("mesothelioma", r"mesothelioma"),
    ("neuroendocrine tumor", r"neuroendocrine (?:tumou?r|carcinoma|neoplasm)|carcinoid"),
    ("diffuse large B-cell lymphoma", r"diffuse large B[- ]cell lymphoma|\bDLBCL\b"),
    ("Hodgkin lymphoma", r"(?<!non-)(?<!non )Hodgkin(?:'s)? lymphoma"),
    ("lymphoma", r"lymphoma"),
    ("leukemia", r"leuka?emia|\bAML\b|\bCLL\b|\bALL\b|\bCML\b"),
    ("multiple myeloma", r"(?:multiple )?myeloma"),
    ("head and neck squamous cell carcinoma", r"head and neck (?:squamous cell )?(?:cancer|carcinoma)|\bHNSCC\b|"
                                             r"oropharyngeal (?:cancer|carcinoma)"),
    ("thyroid cancer", r"thyroid (?:cancer|carcinoma)"),
    ("cervical cancer", r"cervical (?:cancer|carcinoma)"),
    ("endometrial cancer", r"endometrial (?:cancer|carcinoma)|uterine (?:cancer|carcinoma)"),
    ("thymic carcinoma", r"thymic carcinoma|thymoma"),
    ("adrenocortical carcinoma", r"adrenocortical carcinoma"),
    ("Merkel cell carcinoma", r"merkel cell carcinoma"),
    ("anal cancer", r"anal (?:cancer|carcinoma)"),
    ("cancer of unknown primary", r"cancer of unknown primary|carcinoma of unknown primary|\bCUP\b"),
)
_TYPE_RES = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in CANCER_TYPES)

_ROMAN = {"0": "0", "1": "I", "2": "II", "3": "III", "4": "IV", "i": "I", "ii": "II", "iii": "III", "iv": "IV"}
_STAGE_ORDER = {"0": 0, "I": 1, "II": 2, "III": 3, "IV": 4}
_STAGE_RE = re.compile(r"\bstage\s*(iv|iii|ii|i|[0-4])(?:[abc]\d?)?\b", re.IGNORECASE)
_TNM_RE = re.compile(r"\b[cpy]?T(?:[0-4x]|is)[a-d]?\s*N([0-3x])[a-c]?\s*M([01x])[a-c]?\b", re.IGNORECASE)
_METASTATIC_RE = re.compile(r"(?<!non-)(?<!non )\b(?:metastatic|metastases|metastasis|metastasized)\b", re.IGNORECASE)
_EXTENSIVE_RE = re.compile(r"\bextensive[- ]stage\b", re.IGNORECASE)  # SCLC staging: extensive ~ IV
_UNKNOWN_PRIMARY_RE = re.compile(
    r"unknown primary|primary (?:site |tumou?r )?(?:is |remains |was )?unknown|occult primary|\bCUP\b", re.IGNORECASE)
_ECOG_RE = re.compile(r"\bECOG(?:\s*PS)?\s*(?:of|score|:|=)?\s*([0-4])\b", re.IGNORECASE)
_KPS_RE = re.compile(r"\b(?:KPS|Karnofsky(?: performance status)?)\s*(?:of|:|=)?\s*(\d{2,3})\s*%?", re.IGNORECASE)

_VARIANT = (r"(?:[\s-]*(?:exon\s*\d+\s*(?:deletion|insertion|skipping|mutation|del|ins)?|"
            r"[A-Z]\d{1,4}(?:[A-Z]|del|fs|\*)?|fusion|rearrangement|rearranged|amplification|amplified|"
            r"positive|negative|wild[- ]type|mutation|mutated|mutant|alteration|deletion|loss|"
            r"not detected|\+(?![\w])|-(?=\s|$|[,.;)])))*")
_NEGATIVE_STATUS = re.compile(r"negative|wild[- ]type|not detected|(?<![\w])-$", re.IGNORECASE)
_BIOMARKER_RE = re.compile(
    r"\b(?:MSI[- ]?H(?:igh)?|MSI[- ]?L(?:ow)?|MSS|dMMR|pMMR|TMB[- ]?(?:high|low|H)|"
    r"PD-?L1(?:\s*(?:TPS|CPS)?\s*(?:[<>≥≤]=?\s*)?\d{1,3}\s*%?)?|"
    r"(?:ER|PR)[- ]?(?:positive|negative|\+|-)(?=[\s,.;/)]|$)|HR[- ]?(?:positive|negative|\+|-)(?=[\s,.;/)]|$))",
    re.IGNORECASE)
_NEGATION_RE = re.compile(r"\b(?:no|not|without|never|denies|naive|na[iï]ve)\b[^.;]{0,30}$", re.IGNORECASE)
_SENTENCE_RE = re.compile(r"(?<=[.?!;])\s+|\n+")
_NAIVE_RE = re.compile(r"treatment[- ]na[iï]ve|untreated|no prior (?:therapy|treatment)", re.IGNORECASE)


def _best_cancer_type(text: str) -> str | None:
    best: tuple[int, int, str] | None = None  # (-length, start, name)
    for name, rx in _TYPE_RES:
        for m in rx.finditer(text):
            key = (-(m.end() - m.start()), m.start(), name)
            if best is None or key < best:
                best = key
    return best[2] if best else None


def _stage(text: str) -> tuple[str | None, str | None]:
    found: list[tuple[str, str]] = []
    for m in _STAGE_RE.finditer(text):
        found.append((_ROMAN[m.group(1).lower()], m.group(0)))
    for m in _TNM_RE.finditer(text):
        n, metastasis = m.group(1).lower(), m.group(2).lower()
        if metastasis == "1":
            found.append(("IV", m.group(0)))
        elif n in "123":
            found.append(("III", m.group(0)))
    if m := _EXTENSIVE_RE.search(text):
        found.append(("IV", m.group(0)))
    if not found:
        m = _METASTATIC_RE.search(text)
        if m:
            found.append(("IV", m.group(0)))
    if not found:
        return None, None
    return max(found, key=lambda f: _STAGE_ORDER[f[0]])


def _markers(text: str, genes: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    markers: list[str] = []
    altered: list[str] = []
    for gene in genes:
        rx = re.compile(r"(?<![\w-])" + re.escape(gene) + r"(?![\w])" + _VARIANT, re.IGNORECASE)
        for m in rx.finditer(text):
            markers.append(" ".join(m.group(0).split()))
            if not _NEGATIVE_STATUS.search(m.group(0)[len(gene):]) and gene.upper() not in altered:
                altered.append(gene.upper())
    for m in _BIOMARKER_RE.finditer(text):
        markers.append(m.group(0).strip())
    unique = tuple(dict.fromkeys(m for m in markers if m))
    return unique, tuple(altered)


def _treatments(text: str, keywords: Iterable[str]) -> tuple[str, ...]:
    if _NAIVE_RE.search(text):
        return ()
    # A question asks about a treatment; it does not report one: drop sentences ending in "?".
    statements = " ".join(s for s in _SENTENCE_RE.split(text) if not s.rstrip().endswith("?"))
    out: list[str] = []
    for kw in keywords:
        for m in re.finditer(r"(?<![\w-])" + re.escape(kw) + r"(?![\w])", statements, re.IGNORECASE):
            if _NEGATION_RE.search(statements[max(0, m.start() - 40):m.start()]):
                continue
            if kw.lower() not in out:
                out.append(kw.lower())
            break
    return tuple(out)


def _performance(text: str) -> str | None:
    if m := _ECOG_RE.search(text):
        return f"ECOG {m.group(1)}"
    if m := _KPS_RE.search(text):
        return f"KPS {m.group(1)}"
    return None


def is_rare(cancer_type: str | None, rare_cancers: Iterable[str]) -> bool:
    if not cancer_type:
        return False
    for keyword in rare_cancers:
        pattern = r"(?<!non-)(?<!non )\b" + re.escape(keyword) + r"\b"
        if re.search(pattern, cancer_type, re.IGNORECASE):
            return True
    return False


def extract_facts(text: str, *, genes: Iterable[str], treatment_keywords: Iterable[str],
                  rare_cancers: Iterable[str]) -> CaseFacts:
    cancer_type = _best_cancer_type(text)
    stage, stage_text = _stage(text)
    markers, altered = _markers(text, genes)
    unknown_primary = bool(_UNKNOWN_PRIMARY_RE.search(text)) or cancer_type == "cancer of unknown primary"
    return CaseFacts(
        cancer_type=cancer_type,
        stage=stage,
        stage_text=stage_text,
        markers=markers,
        genes=altered,
        prior_treatments=_treatments(text, treatment_keywords),
        performance_status=_performance(text),
        unknown_primary=unknown_primary,
        rare=is_rare(cancer_type, rare_cancers),
    )


def merge_facts(earlier: CaseFacts, later: CaseFacts) -> CaseFacts:
    """A follow-up turn ("what about second line?") keeps what the thread already established."""
    stage_pick = max((earlier.stage, earlier.stage_text), (later.stage, later.stage_text),
                     key=lambda s: _STAGE_ORDER.get(s[0] or "", -1))
    return CaseFacts(
        cancer_type=later.cancer_type or earlier.cancer_type,
        stage=stage_pick[0],
        stage_text=stage_pick[1],
        markers=tuple(dict.fromkeys(earlier.markers + later.markers)),
        genes=tuple(dict.fromkeys(earlier.genes + later.genes)),
        prior_treatments=tuple(dict.fromkeys(earlier.prior_treatments + later.prior_treatments)),
        performance_status=later.performance_status or earlier.performance_status,
        unknown_primary=earlier.unknown_primary or later.unknown_primary,
        rare=earlier.rare or later.rare,
    )
