"""Case fit: does a guideline sentence's stated condition apply to this case? Deterministic, regex only.

A sentence can be verbatim in the evidence and still be wrong for the patient ("Stage I disease generally needs no
adjuvant therapy" for a stage III case). Support measures the first; this module measures the second, from the
redacted case facts (``CaseFacts``, engine/facts.py) alone.

Conditions recognised in a sentence (deliberately few: a word that is not clearly a condition is ignored)
    stage       "stage I", "Stage IIIB", "stage II–IIIA", "stages II and III", "Stages I, II, and III" (a list is
                the span from its lowest to its highest stage), "stage II and above", bare lettered
                sub-stages ("IIIA", "IB"; bare "IV" is not one: it also means intravenous), "early-stage"/"early
                disease"/"early (un)favorable" (0-II; "Treatment of Early Unfavorable Classic HL"), "locally
                advanced" (II-III), "advanced disease" (III-IV), "metastatic" (IV; not "metastatic
                potential/risk/spread": a tumour's risk, not its stage), "non-metastatic",
                "limited-stage" (I-III), "extensive-stage" (IV), "localised" (not metastatic);
                "early" is 0-II (contradicts III: "Early tumours may be managed with surgery alone")
    setting     the early, operable setting: "adjuvant", "neoadjuvant", "perioperative", "pre-/postoperative",
                "resected"/"resectable" (not "unresectable", not "can be fully resected", not in a sentence about
                metastases: "resectable liver metastases ... perioperative chemotherapy"): stages 0-III, contradicts
                metastatic disease. Its own family: "Stage I needs no adjuvant therapy" stays a stage I sentence.
                "Resected"/"resectable" is also a family of its own that an unresectable case contradicts, as
                it contradicts "adjuvant"/"postoperative" treatment (not "adjuvant treatment after chemoradiation").
    surgery     surgery named as the treatment ("treated with surgical resection", "treated with extrapleural
                pneumonectomy", "Surgery is the treatment of choice") or as what came before ("after resection"):
                contradicted by an unresectable case and judged for no other (not "by surgery or by radiation
                therapy alone", not "cannot be treated with surgery")
    invasion    "muscle-invasive"/"MIBC" vs "non-muscle-invasive"/"NMIBC", each contradicting the other
    recurrence  from a section only: a treatment section for recurrent disease alone ("Treatment of Recurrent
                Bladder Cancer", "Treatment Options for Local Recurrence"; not "Stage IV and Recurrent ...",
                "Metastatic or Recurrent ...", "Relapsed or Refractory ..."). A newly diagnosed case (engine.facts
                ``recurrent`` False: "newly diagnosed", "de novo") contradicts it, a recurrent one fits, a case that
                says neither is qualified ("applies if recurrent disease")
    line        the line of therapy a section's deepest heading names ("Second-line systemic therapy",
                "Progressive Stage IV", "after first-line chemotherapy": later; "First-Line Therapy", "Newly
                Diagnosed": first), the sentence states ("in patients whose disease progressed after first-line
                chemotherapy", "who had received prior anti-PD-1 therapy", "as second-line therapy", "previously
                treated", "pretreated", "platinum-refractory": later; "in the first-line setting", "previously
                untreated", "treatment-naive", "untreated for metastatic disease", "no prior therapy": first; see
                ``_LINE_LATER_RE``) or the label of the list item it is in states ("1. **Previously treated
                patients.** One study included ...", to the next numbered item: ``sentence_labels``). The sentence's
                own overrides its label's, which overrides its heading's. A later line contradicts an untreated case
                (engine.facts ``line``); a first line only qualifies a case that progressed (it may have progressed
                on adjuvant therapy). A sentence's or label's line is judged only for a case that states its line.
                No line: "relapsed"/"recurrent" alone, a bare "after" ("after resection"), "adjuvant", "untreated
                brain metastases", "prior adjuvant therapy"; a sentence about eligibility or a share of the patients
                ("one previous treatment was allowed", "53% had received prior therapy": a mixed population); a
                line after "regardless of". Trial narrative is read like any sentence: a later-line trial's
                population and results do not apply to an untreated case, a first-line trial's fit it
    fitness     fitness for a treatment's intensity, read as in case facts (engine.facts.fitness_readings): "not
                candidates for intensive chemotherapy", "transplant-ineligible", "unfit for cisplatin-based
                chemotherapy", "Less-fit patients", "frail" (unfit); "eligible for intensive chemotherapy",
                "transplant-eligible", "Fit patients" (fit), each for one target (intensive, transplant, cisplatin,
                chemotherapy, or general for the bare words). The case's statements imply others
                (``_FITNESS_IMPLIES``: unfit for intensive therapy is unfit for a transplant). Like a line, a
                sentence's own is judged only for a case that states its fitness; a heading's always
                qualifies. A case that has had chemotherapy, without progression, poor performance or stated
                unfitness, was a candidate for it ("after concurrent chemoradiation"): judged for that target
                only; a case at ECOG 3-4 (KPS <= 50) is unfit for intensive therapy, a transplant and cisplatin
                unless the note says otherwise
    performance the population's performance status: "good performance status", "ECOG PS 0-1" (good: ECOG 0-1,
                KPS >= 80), "poor performance status" (ECOG 3-4, KPS <= 50); ECOG 2 is neither. Judged only for a
                case that states its own (engine.facts ``performance_status``)
    age         the population's age (engine.facts.age_readings): "patients older than 60 years", "aged 65 to 79
                years", "aged ≥80 years", "older patients (aged ≥60 years)"; "older patients"/"the elderly" fits
                60 and over and contradicts under 60, "younger patients" the reverse. Not an age as a factor ("age
                older than 60 years") or a statistic ("median age"). Judged only for a case that states its age
                (engine.facts ``age``), and never from a heading (PDQ's "... or advanced age (aged ≥80 years)" is
                one alternative of two)
    menopause   the population's menopausal status (engine.facts.menopause_readings): "postmenopausal women" (post),
                "premenopausal or perimenopausal women" (pre); not "postmenopausal hormone therapy". Judged for a
                case whose status is known (engine.facts ``menopause``: stated, or a woman of 60 or more) or who is
                a man: a premenopausal population contradicts a postmenopausal case and a man; a postmenopausal one
                contradicts a premenopausal case only as qualified ("applies if ovarian function is suppressed":
                PDQ treats such women as postmenopausal) and a man likewise ("given with a GnRH agonist"); a
                heading's ("Aromatase inhibitors > Premenopausal women") always qualifies
    risk        a risk group (engine.facts.risk_readings): "low-/intermediate-/high-risk", "low- to intermediate-risk"
                (alternatives), "(early) favorable/unfavorable" ("Early Unfavorable Classic HL"); two scales, each
                judged only against the same scale, and only for a case that states a risk group (heading too)
    section     a sentence inherits the conditions its passage's section path names, family by family, for each
                family it does not state itself: stage and setting ("Treatment by Stage > Advanced or Metastatic
                Disease": advanced or metastatic; "Early / Resectable Disease"; "Locally Advanced Unresectable
                Disease") as one family of alternatives, and subgroups ("Stages I, II, and III HER2-Positive Breast
                Cancer", "HER2-Negative Hormone Receptor–Positive" (both), "Germline *BRCA1* and *BRCA2* Variants",
                "(for patients with *EGFR* variants)", "Resected/Resectable Stage IIIA"). A bullet nested under a
                numbered list item has that item as its section's deepest part ("8. ROS1 inhibitors (for patients
                with ROS1 rearrangements)." then "- Repotrectinib ...": ``sentence_parents``), and a list item its
                list's lead-in ("Features in patients with stage II colon cancer ... include:"; its line of therapy
                read as a label's). A site within the oral cavity or larynx ("Supraglottis", "... Lesions of the
                Floor of the Mouth") rules out the others' sections for a case that names its site, and so does
                the site a sentence's paragraph is about there (``paragraph_sites``); classic HL and NLPHL
                ("Treatment of Nodular Lymphocyte-Predominant HL (NLPHL)") are read the same way, and APL: an APL
                case does not fit AML's treatment sections that name no APL ("Treatment of Newly Diagnosed AML"),
                an AML case that names no APL does not fit APL's
    receptor    HER2/ER/PR/HR(hormone receptor) positive/negative (+/-), HER2-low, "HER2 amplification" (=
                HER2-positive), "HR+/HER2-" (both), triple-negative/TNBC (HR-negative and HER2-negative); HER2 by
                its IHC score, read as in case facts (engine.facts.her2_score): "HER2 3+", "IHC 2+ with ISH
                amplification" (positive), "HER2 IHC 1+ or 2+/ISH-negative" (low), "HER2-zero"/"HER2 IHC 0" (zero),
                "HER2 2+" without ISH (no condition); HER2 by ISH alone as in case facts (engine.facts.her2_ish:
                "HER2 FISH not amplified", "HER2/CEP17 ratio 2.4, copy number 5.1"; ASCO/CAP groups 2-4: none)
    dashes      U+2010-2014 and U+2212 read as "-" ("hormone receptor–positive", PDQ's spelling); status words in
                any case ("HER2-Positive"); "estrogen/progesterone receptor-positive" are ER/PR; Markdown emphasis
                is ignored ("*EGFR* variants")
    no driver   "without an actionable driver", "driver-negative" (every driver gene unaltered)
    either way  "with or without", "whether or not", "regardless of" before a gene or MMR term: no condition
    gene        a gene with a status: "EGFR exon 19 deletion or L858R", "ALK rearrangement", "ALK-positive", "EGFR variants" (PDQ's word),
                "KRAS G12C", "KRAS/NRAS mutations" (either), "RAS wild-type" (KRAS and NRAS wild-type), a list
                sharing one status: "germline BRCA1, BRCA2 or PALB2 mutations" / "EGFR or ALK alterations" (any
                one of them), "KRAS, NRAS and BRAF wild-type" (all of them), also of different families ("EGFR or
                PIK3CA mutation", "EGFR- or PIK3CA-mutated", "mutations in EGFR or PIK3CA") and written one by one
                ("an EGFR mutation or a PIK3CA mutation": one family, alternatives); a variant is its own gene's alone
                ("EGFR or KRAS G12C" reads KRAS G12C only),
                "germline BRCA carriers", "ESR1 mutation", "MET exon 14 skipping", "NTRK fusion". A gene named
                without a status ("testing for EGFR and ALK", "anti-EGFR antibody") is not a condition.
    mmr         MSI-H/dMMR/"mismatch repair deficient"/"MMR-deficient" (deficient) vs MSS/pMMR/MSI-L/"MMR intact"
                and a negated deficient ("non-MSI-H/dMMR", "not MSI-H": proficient), read as in case facts
                (engine.facts.mmr_readings); "MSI-H testing pending" or "not MSS" is no condition
    pdl1        "PD-L1-positive" (>= 1%), "PD-L1-negative" (< 1%), "PD-L1-high"/"high PD-L1" (>= 50%), "PD-L1-low"
                (1-49%), a value or range ("PD-L1 TPS >= 50%", "PD-L1 1-49%", "PD-L1 < 1%", "PD-L1 CPS >= 10"),
                read as in case facts (engine.facts.pdl1_range); a TPS range is not judged against a CPS value

The case's side comes from CaseFacts: stage (+ sub-stage letter, "metastatic", "unresectable" and "(non-)muscle-
invasive" from stage_text, where engine.facts puts them; a stage IV read from TNM with M0, bladder T4bN0M0, is not
metastatic; "muscle-invasive" without a stage is stage II or higher (AJCC 8: T2 or more), an interval whose every
group a stage class must fit or contradict: "early" or "metastatic" lines are qualified, "stage I" contradicts;
"localized" disease without a stage ("localized prostate adenocarcinoma", "organ-confined") is stage 0-III and not
metastatic: metastatic and stage IV lines contradict, localised lines fit, a stage I/II line is qualified;
engine.facts' routing guess from TNM, node-positive M0 as III, is not used where the cancer's groups differ:
``_routing_only_stage``), the marker
strings parsed with the same patterns (statuses included: "EGFR negative", "ALK negative", "BRCA2 negative" are
wild-type), the cancer type ("triple-negative breast cancer", "HER2-positive breast cancer", "hormone
receptor-positive breast cancer") and altered genes (facts.genes). A HER2 marker with its IHC score refines
HER2-negative: "HER2-negative (IHC 0)"/"HER2 0" is HER2-zero (a HER2-low line contradicts, a HER2-negative line
fits), "IHC 1+" or "IHC 2+, ISH-negative" is HER2-low (a HER2-negative or HER2-low line fits), "IHC 3+" or "2+,
ISH-positive" is HER2-positive; a plain "HER2-negative" marker does not undo a score another marker gives. ER/PR
markers with a score come from case facts already read ("ER-low (5%)", "PR-negative (Allred 2)"); an ER-low case
fits an ER-low line and is unknown for ER-positive and ER-negative lines. Germline BRCA1 and BRCA2 are tested
together: a negative result for one (neither stated altered) is read as BRCA1/2 negative.

How one sentence is judged (``assess``)
    Each condition is ``fits``, ``unknown`` (the case does not state it, stage included: a case without a stage
    gets "applies if stage III") or ``contradicts``. Conditions of one
    family are alternatives (a sentence listing "HR+/HER2-, HER2-positive and triple-negative" groups names all
    three; "EGFR ... and adjuvant alectinib for ALK-positive disease" names two drivers): the family fits when one of
    them fits and contradicts only when all of them do. Families combine as a conjunction: one contradicted family
    makes the sentence ``contradicts``. Families: stage, receptor, driver (EGFR, ALK, ROS1, KRAS, NRAS, BRAF, MET,
    RET, NTRK, HER2/ERBB2 mutation: one family because these drivers are near mutually exclusive), mmr, pdl1, and
    one per other gene (BRCA, PIK3CA, ESR1, ...); genes named as alternatives across families are one family named
    by all of them ("driver+PIK3CA", "BRCA+PALB2").
    Driver exclusivity: when the case states a driver alteration (EGFR exon 19 deletion) and a sentence's condition
    is another driver the case does not mention (ALK rearrangement), the condition contradicts the case. Not for
    amplifications (MET amplification co-occurs with EGFR as a resistance mechanism).
    Not the sentence's own conditions:
    - options: a condition that qualifies one option of a list, in parentheses after its name ("elacestrant (ESR1
      mutation)", "olaparib (for germline BRCA carriers)") or as "<therapy> for <condition>" beside another option
      ("PARP inhibitors for germline BRCA carriers, and chemotherapy otherwise", "or, for RAS wild-type tumours, an
      anti-EGFR antibody"; alone, "Trastuzumab for HER2-positive disease is standard", it is the sentence's own
      condition). It never makes the sentence
      conditional; one that contradicts the case is a note the governor prints as a qualifier ("the option for
      germline BRCA carriers does not apply (the case is BRCA2 negative)").
    - examples: two or more listed after "notably", "such as", "including", "especially", "e.g." ("testing is
      advised for many patients, notably younger patients, TNBC or a suggestive family history"): indications.
    - test targets: what follows "test(ed/ing) for" ("should be tested for fusions ... and BRAF alterations").
    Clauses: a sentence coordinating clauses (", and" / "; " / ", while" / ", but" ...; a clause has 3+ words
    besides its conditions, so "HER2-positive, and triple-negative" is a list) in which two clauses state a condition
    of one family ("osimertinib for resected EGFR ... tumours, and adjuvant alectinib for resected ALK-positive
    disease") is judged clause by clause: one clause that contradicts the case makes the sentence contradict (it is
    quoted whole), unknown clauses are alternatives ("applies if EGFR ... or ALK-positive").
    Receptors side by side ("ER-positive, HER2-positive disease", "HER2-negative hormone receptor-positive") are one
    subgroup, all required (``_joined_receptors``), unless they are items of a longer list.

Where it is used
    - Evidence-locked selection (engine/nodes/specialist.py): sentences that contradict the case, and those of a
      passage about another cancer than the case's (the governor's rule, ``engine.ledger.on_case``), are not
      offered to the model (not in the prompt, not in the schema enum); sentences that state a fitting condition
      are listed first, and within each fit class recommendations before trial narrative and statistics
      (``select``, ``sentence_kind``). None left -> no model is called, the Critic rejects the attempt and the
      consult ends in the safe refusal (engine/nodes/critic.py).
    - Governor (engine/governor.py): a claim that contradicts the case is blocked ("does not apply to this case:
      ..."); a claim whose condition the case does not state is released only as qualified ("applies if ...");
      sections are judged when ``govern`` is given the passages.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from engine.facts import (ALK_LAST_GEN, ALK_SECOND_GEN, ANTI_CD38_DRUGS, ARPI_DRUGS, BCLC_RE, BREAST_TYPES,
                          CDK46_DRUGS, CHEMO_BACKBONES, CTLA4_DRUGS, CYTOTOXICS, DASHES, EGFR_TKIS, EITHER_WAY_RE,
                          FRONTLINE_REGIMENS, FRONTLINE_REGIMEN_RE, HER2_ADCS, HER2_ISH_RE, HER2_SCORE_RE,
                          LENALIDOMIDE, LONE_M1_RE, NOT_A_STAGE, PD1_CLASS, PD1_DRUGS, PDL1_RE, POMALIDOMIDE,
                          RISK_SCALES, STATUSES, TNM_RE, age_readings, asked_sentences, avoid_key, bladder_stage,
                          child_pugh_readings, drug_and_class_spans, expression_readings, fitness_readings,
                          her2_ish, her2_score,
                          menopause_readings, mmr_readings, pdl1_range, risk_readings, statement_text,
                          status_readings, subsite_readings, tnm_staging)
from engine.ledger import case_words, on_case
from engine.safety import (OPTIONS_HEADER_RE, drug_names, drug_spans, list_header, passage_sentences,
                           plain_sentence, text_units, unit_sentences)
from engine.state import CaseFacts, Passage

Fit = Literal["fits", "unknown", "contradicts"]
Verdict = Literal["none", "fits", "unknown", "contradicts"]  # "none": the sentence states no condition

DRIVERS = frozenset({"EGFR", "ALK", "ROS1", "KRAS", "NRAS", "BRAF", "MET", "RET", "NTRK", "ERBB2"})
_GENE_FAMILY = {"BRCA1": "BRCA", "BRCA2": "BRCA"}
_ROMAN = {"0": 0, "I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "1": 1, "2": 2, "3": 3, "4": 4}


# --------------------------------------------------------------------------- conditions

@dataclass(frozen=True)
class Condition:
    """One condition a sentence states. ``kind`` picks the evaluation; ``text`` is the words as written."""

    family: str
    # stage | stage_class | receptor | gene | mmr | pdl1 | expression | invasion | line | recurrence | fitness | age |
    # surgery
    kind: str
    text: str
    lo: int = 0  # stage: fine-scale interval (group * 10 + sub-stage letter, 0 = the whole group)
    hi: int = 0
    value: str = ""  # stage_class: early/...; mmr: deficient/proficient; pdl1: positive/...; fitness: intensive:unfit
    receptors: tuple[tuple[str, str], ...] = ()  # receptor: (HER2|HR|ER|PR, positive|negative|low), all required
    genes: tuple[str, ...] = ()  # gene: altered -> any of them; wild-type -> all of them
    altered: bool = True
    variants: frozenset[str] = frozenset()  # gene: "exon 19", "L858R"; empty = any alteration
    exclusive: bool = True  # gene: takes part in driver exclusivity (not for amplifications)
    heading: tuple[int, int] = (0, 0)  # a section's stage or setting: (which cited section, which of its headings)
    after_surgery: bool = False  # setting: adjuvant or postoperative treatment, which an unresectable case rules out
    before_surgery: bool = False  # setting: neoadjuvant or preoperative treatment, which a resected case rules out
    implied: bool = False  # line: a stage's section implies its initial treatment (``_line_condition``)


# stage V: bilateral Wilms tumor (PDQ's "Treatment of stage V Wilms tumor"), read in guidelines only
_STAGE_NUM = r"(IV|V|III|II|I|0|[1-4])"
# A stage, a range or a list: "stage I", "stages II-IIIA", "Stages I, II, and III", "stage I, II, or III", "Stage
# II/III/IV", "stage II and above". A list is read as the span from its lowest to its highest stage. After a comma only a roman numeral
# continues the list ("stage III, 3 months of CAPOX" is stage III).
_STAGE_TOKEN = r"(?:IV|V|III|II|I|0|[1-4])(?:[A-C]\d?)?(?![\w])"  # FIGO's "IB2" is IB
_STAGE_RE = re.compile(
    r"\b[Ss]tages?\s+(?P<list>" + _STAGE_TOKEN +
    r"(?:\s*,\s*(?:(?:and|or)\s+)?(?:[Ss]tages?\s+)?(?:IV|III|II|I|0)(?:[A-C]\d?)?(?![\w])"
    r"|\s*(?:[-–—/]|to|or|and)\s*(?:[Ss]tages?\s+)?" + _STAGE_TOKEN + r")*)"
    r"(?P<above>\s+(?:and|or)\s+(?:above|higher|greater|beyond))?")
_STAGE_ITEM_RE = re.compile(_STAGE_NUM + r"([A-C])?(?:(?<=[A-C])\d)?(?![\w])")
_BARE_STAGE_RE = re.compile(r"(?<![\w-])(IV|III|II|I)([A-C])\d?(?:\s*[-–]\s*(IV|III|II|I)([A-C])?\d?)?(?![\w])")
_STAGE_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "without metastatic disease" is non-metastatic ("In patients without metastatic disease, resection of the
    # primary tumor ... is standard practice." had been read as metastatic and offered first to a metastatic case)
    ("non-metastatic", re.compile(r"\bnon[- ]?metastatic\b|\b(?:without|no)\s+(?:evidence\s+of\s+)?metastatic\b",
                                  re.IGNORECASE)),
    ("metastatic", re.compile(r"(?<!non-)(?<!non )(?<!non)\b(?:oligo)?metastatic\b" + NOT_A_STAGE, re.IGNORECASE)),
    # TNM's M category ("Radical nephrectomy (for T4, M0 lesions)" was offered to a metastatic kidney case), not
    # the FAB subtype of AML ("FAB classification M0", "M0 AML")
    ("non-metastatic", re.compile(r"(?<![\w-])(?<!classification )(?<!FAB )[cp]?M0(?![\w-])(?!\s+AML)")),
    ("metastatic", LONE_M1_RE),
    ("locally advanced", re.compile(r"\blocally[- ]advanced\b", re.IGNORECASE)),
    # PDQ's "advanced-stage" (Hodgkin lymphoma, ovarian cancer) is stage III-IV: it had not been read at all,
    # and "Patients with advanced-stage disease are primarily treated with chemotherapy alone" was released to
    # a stage IIA Hodgkin case as "supported"
    ("advanced-stage", re.compile(r"(?<!locally )(?<!locally-)\badvanced[- ]stages?\b", re.IGNORECASE)),
    ("advanced", re.compile(r"(?<!locally )(?<!locally-)\badvanced(?=\s+(?:or metastatic\s+)?(?:disease|cancers?|"
                            r"tumou?rs?|setting|stages?)\b)", re.IGNORECASE)),
    ("early", re.compile(r"\bearly[- ]stage\b|\bearly\s+(?:\w+\s+)?(?:disease|tumou?rs?|cancers?)\b|"
                        r"\bearly\s+(?:un)?favou?rable\b", re.IGNORECASE)),  # HL: "Early Favorable Classic HL"
    ("limited-stage", re.compile(r"\blimited[- ]stage\b", re.IGNORECASE)),
    ("extensive-stage", re.compile(r"\bextensive[- ]stage\b", re.IGNORECASE)),
    ("localised", re.compile(r"\blocali[sz]ed\b(?![- ](?:to|in)\b)", re.IGNORECASE)),
)
# The early (curative, operable) setting: adjuvant/neoadjuvant/perioperative treatment, resected/resectable disease.
# Its own family ("setting"): "Stage I disease needs no adjuvant therapy" stays a stage I sentence for stage III.
# Not read in a sentence about metastases ("resectable liver metastases ... perioperative chemotherapy").
# Not a work-up or an operation's outcome ("advances in preoperative imaging have improved patient selection for
# resection": a long note's resected colon cancer with liver metastases had that passage's resection figures dropped).
_SETTING_RE = re.compile(r"\b(?:neo-?)?adjuvant\b|\b(?:peri|pre|post)-?operative\b(?!\s+(?:imaging|evaluation|"
                         r"assessment|staging|work-?up|testing|tests?|scans?|CT|MRI|PET|biops(?:y|ies)|complications?|"
                         r"mortality|morbidity|deaths?)\b)", re.IGNORECASE)
# "Resected"/"resectable": the early setting too, and its own family ("resection"), which an unresectable case
# contradicts ("Resected/Resectable Stage IIIA NSCLC > Adjuvant immunotherapy" for unresectable stage IIIA: the
# stage fits, the resection does not). "unresectable" itself is no condition (\b keeps it out).
_RESECTED_RE = re.compile(r"\bresect(?:ed|able)\b", re.IGNORECASE)
# Bladder cancer's two settings, each contradicting the other.
_INVASION_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("non-muscle-invasive", re.compile(r"\bnon[- ]?muscle[- ]invasive\b|\bNMIBC\b", re.IGNORECASE)),
    ("muscle-invasive", re.compile(r"(?<!non-)(?<!non )(?<!non)\bmuscle[- ]invasive\b|\bMIBC\b", re.IGNORECASE)),
)
# Adjuvant or postoperative: after surgery, unless after (chemo)radiation ("Adjuvant treatment after chemoradiation
# therapy", limited-stage SCLC)
_AFTER_SURGERY_RE = re.compile(r"adjuvant|post-?operative", re.IGNORECASE)
_BEFORE_SURGERY_RE = re.compile(r"neo-?adjuvant|pre-?operative|pre-?surgical", re.IGNORECASE)
# The breast operation a sentence is about ("Postmastectomy radiation therapy", "after breast-conserving
# surgery"), against the case's (engine.facts' extent): postmastectomy chest wall radiation had been released
# for DCIS after lumpectomy
_OPERATION_RES = (
    ("mastectomy", re.compile(r"\bpost-?mastectomy\b|\b(?:after|following)\s+(?:a\s+|total\s+|modified\s+"
                              r"radical\s+)?mastectomy\b", re.IGNORECASE)),
    ("breast-conserving surgery", re.compile(r"\b(?:after|following)\s+(?:breast[- ]conserving\s+(?:surgery|"
                                             r"therapy)|BCS|lumpectomy|partial\s+mastectomy)\b|"
                                             r"\bpost-?lumpectomy\b", re.IGNORECASE)))
_AFTER_RADIATION_RE = re.compile(r"[^.;]{0,60}?\bafter\s+(?:\w+\s+){0,3}(?:chemo)?radi", re.IGNORECASE)


# Surgery as a population's first treatment ("For patients who undergo surgery first, combination chemotherapy is
# typically given in the adjuvant setting.", "patients who underwent initial surgery"): not for a case treated before
# its operation (a QA pass's TNBC with residual disease after neoadjuvant chemotherapy had that sentence drafted)
_SURGERY_FIRST_RE = re.compile(r"\bsurgery\s+first\b|\b(?:initial|upfront|up-front)\s+surgery\b", re.IGNORECASE)
# a note's report of treatment before its operation ("she received neoadjuvant dose-dense doxorubicin ...",
# "after preoperative chemoradiation")
_HAD_PREOPERATIVE_RE = re.compile(r"\b(?:received|had|completed|underwent|after|following)\s+(?:[\w-]+\s+){0,4}?"
                                  r"(?:neo-?adjuvant|pre-?operative)\b", re.IGNORECASE)


def treated_before_surgery(note: str) -> str:
    """The clause of ``note`` (its statements, not its questions) that reports treatment given before surgery, or
    "" when none does ("did not receive neoadjuvant ..." does not)."""
    said = statement_text(note or "")
    for m in _HAD_PREOPERATIVE_RE.finditer(said):
        if not re.search(r"\b(?:not|no|never|without)\s+(?:\w+\s+)?\Z", said[max(0, m.start() - 20):m.start()]):
            start = max([0] + [x.end() for x in re.finditer(r"[.;,]\s+", said[:m.start()])])
            end = min([len(said), m.end() + 100] + [m.end() + x.start() for x in re.finditer(r"[.;,](?:\s|$)",
                                                                                         said[m.end():])][:2])
            return said[start:end].strip()
    return ""


# A population defined by what it progressed on, could not tolerate or was treated with before ("Patients had disease
# progression during, or were intolerant of, trifluridine-tipiracil, regorafenib, or both.", FRESCO-2): for a case
# whose note names none of those drugs it is not stated (a QA pass's colon cancer after FOLFOX and FOLFIRI had
# fruquintinib's later-line trial drafted first); the drugs follow the cue, listed
_PRIOR_DRUGS_RE = re.compile(
    r"\b(?:progress\w*\s+(?:on|during|after|following)|(?:refractory|resistant)\s+to|intolerant\s+(?:of|to)|"
    r"(?:previously|prior)\s+(?:treated|received)(?:\s+with)?|pretreated\s+with|after\s+(?:prior\s+)?"
    r"(?:treatment|therapy)\s+with)\b(?:,?\s+or\s+(?:were\s+|was\s+)?(?:intolerant|refractory)\s+(?:of|to),?)?",
    re.IGNORECASE)
# between two drugs of a list: a comma, "and" or "or" ("trifluridine-tipiracil, regorafenib, or both": the second
# half of a hyphenated name is not read as a drug)
_DRUG_LIST_GAP_RE = re.compile(r"^(?:-[\w-]+)?[\s,/-]*(?P<last>(?:and|or|and/or|plus)\s+)?$", re.IGNORECASE)


def _prior_drugs(text: str, at: int) -> list[tuple[int, int, str]]:
    """The drugs listed right after ``at`` (the first within two words, each next one after a comma, "and" or "or";
    the one after "and" or "or" is the last), as ``drug_spans`` gives them; [] when the list does not start there."""
    end = min([len(text)] + [at + x.start() for x in re.finditer(r"[.;:]\s|[.;:]$", text[at:])][:1])
    out: list[tuple[int, int, str]] = []
    last, closed = at, False
    for a, b, key in drug_spans(text[at:end]):
        gap = text[last:at + a]
        m = _DRUG_LIST_GAP_RE.match(gap)
        if closed or not (m if out else len(gap.split()) <= 2):
            break
        out.append((at + a, at + b, key))
        last, closed = at + b, bool(out[1:] and m and m.group("last"))
    return out


def _after_surgery(text: str, m: re.Match[str]) -> bool:
    """The setting ``m`` read in ``text`` is treatment after surgery: an unresectable case has none (the audit's
    unresectable stage IIIA NSCLC case was offered "Adjuvant chemotherapy is recommended, and radiation therapy is
    reserved for cases with unclear resection margins." from the section on resected chest wall tumours). Residual
    disease after preoperative therapy is found at the operation: treatment for it comes after surgery."""
    return (bool(_AFTER_SURGERY_RE.fullmatch(m.group(0))) and not _AFTER_RADIATION_RE.match(text, m.end())
            or _residual_after(text, m))


# "patients with residual disease after preoperative therapy", "residual invasive disease following neoadjuvant
# chemotherapy": the population had that treatment and its operation (a long note's TNBC with residual disease had
# its capecitabine section's "These approaches should be considered for patients with residual disease after
# preoperative therapy." read as preoperative and offered after the other setting's sentences)
_RESIDUAL_RE = re.compile(r"\bresidual\b", re.IGNORECASE)
_HAD_BEFORE_SETTING_RE = re.compile(r"\b(?:after|following)\s+(?:\w+\s+){0,2}\Z", re.IGNORECASE)


def _residual_after(text: str, m: re.Match[str]) -> bool:
    """``m`` (a before-surgery setting) is what a population with residual disease had: treated before it."""
    return bool(_BEFORE_SURGERY_RE.match(m.group(0)) and _RESIDUAL_RE.search(text)
                and _HAD_BEFORE_SETTING_RE.search(text, max(0, m.start() - 40), m.start()))


# Surgery named as the treatment ("Solitary mesotheliomas are treated with surgical resection en bloc ...", "Surgery
# is the treatment of choice ...") or as what came before it ("chemotherapy after resection"): an unresectable case
# has none (the audit's unresectable mesothelioma case was offered both). Not an alternative ("by surgery or by
# radiation therapy alone": the radiation stays an option) and not negated ("cannot be treated with surgery").
_SURGERY = r"(?:(?:surgical\s+)?(?:resection|surgery|excision)|\w+ectomy)"
_SURGERY_RE = re.compile(
    r"\b(?:treated|managed|cured)\s+(?:\w+ly\s+)?(?:with|by)\s+(?:(?:wide|radical|complete|local|initial|"
    r"aggressive|definitive|extrapleural)\s+)*" + _SURGERY + r"\b"
    r"|\b(?:surgery|surgical\s+resection|resection)\s+(?:is|remains)\s+(?:considered\s+)?the\s+(?:\w+\s+)?"
    r"(?:standard|treatment\s+of\s+choice|mainstay|primary\s+treatment)"
    r"|\b(?:after|following)\s+(?:\w+\s+)?" + _SURGERY + r"\b", re.IGNORECASE)
# ... unless the sentence is about unresectable disease itself ("T-VEC ... approved for ... unresectable cutaneous ...
# lesions in patients with melanoma that recurs after initial surgery") or about disease that came back after the
# surgery ("unresectable progressive disease after surgery", "recurs after initial surgery"; _CASE_UNRESECTABLE_RE)
_RECURRED_RE = re.compile(r"\b(?:recur\w*|relaps\w*|progress\w*)\s+(?:\w+\s+){0,2}\Z", re.IGNORECASE)
_ALTERNATIVE_RE = re.compile(r"[^.;]{0,60}?\bor\s+(?:by\s+|with\s+)?(?:\w+\s+){0,2}?(?:radiation|radiotherapy|chemo|"
                             r"systemic|observation|surveillance|ablation|biopsy)", re.IGNORECASE)
_NEGATED_RE = re.compile(r"\b(?:not|cannot|without|never|instead\s+of|rather\s+than)\s+(?:\w+\s+){0,2}\Z",
                         re.IGNORECASE)


def _surgery_named(text: str, m: re.Match[str]) -> bool:
    """``m`` (``_SURGERY_RE``) names surgery as the treatment or what came before: not negated, not one of
    alternatives, not the surgery that disease came back after."""
    if _NEGATED_RE.search(text, 0, m.start()) or _ALTERNATIVE_RE.match(text, m.end()):
        return False
    after = m.group(0).lower().startswith(("after", "following"))
    return not (after and _RECURRED_RE.search(text, max(0, m.start() - 40), m.start()))


_METASTASES_RE = re.compile(r"metasta", re.IGNORECASE)
_HISTORY_END_RE = re.compile(r"[;.)]\s|[;)]|,\s+(?:or|and|which|but)\b|$")
_RELAPSED_FROM_RE = re.compile(r"\b(?:relapsed?|relapses|recurrence|recurred|progression|progressed)\s+"
                               r"(?:during\s+or\s+after|during|after|following|on)\s+", re.IGNORECASE)
_VERB_BEFORE_RE = re.compile(r"\b(?:be|been|is|are|was|were|fully|completely|not)\s+\Z", re.IGNORECASE)

# Hyphen-like dashes PDQ writes ("hormone receptor–positive", U+2013) are read as "-" (``spans``, with
# engine.facts.DASHES; same length, so positions stay valid). Headings are capitalised ("HER2-Positive"): status
# words match in any case.
_REC = r"(HER2|ERBB2|ER|PR|HR|(?i:hormone[- ]receptors?|o?estrogen[- ]receptors?|progesterone[- ]receptors?))"
_STATUS = r"(?:[- ]?((?i:positive|negative|low|ultralow))\b|\s?(\+|-)(?=[\s,.;:/)]|$))"
_COMBO_RE = re.compile(r"\b(HR|ER|(?i:hormone[- ]receptors?|o?estrogen[- ]receptors?))" + _STATUS
                       + r"\s*/\s*(HER2)" + _STATUS)
_RECEPTOR_RE = re.compile(r"\b" + _REC + _STATUS)
# a suspended hyphen: "ER- and/or PR-positive" is ER-positive and/or PR-positive, not ER-negative
_SUSPENDED_RE = re.compile(r"\s+(?:and/or|or|and)\s+" + _REC + r"[- ]((?i:positive|negative|low))\b")
_HER2_AMP_RE = re.compile(r"\b(?:HER2|ERBB2)[- ](?:amplification|amplified|overexpress(?:ion|ing|ed))\b")
_TNBC_RE = re.compile(r"\btriple[- ]negative\b|\bTNBC\b", re.IGNORECASE)

_GENE_ALIASES = {"RAS": ("KRAS", "NRAS"), "BRCA": ("BRCA1", "BRCA2"), "BRCA1/2": ("BRCA1", "BRCA2"),
                 "AKT": ("AKT1",), "HER2": ("ERBB2",), "NTRK1": ("NTRK",), "NTRK2": ("NTRK",), "NTRK3": ("NTRK",)}
_GENE = (r"(?:BRCA1/2|BRCA1|BRCA2|BRCA|EGFR|ALK|ROS1|KRAS|NRAS|RAS|BRAF|MET|RET|NTRK[123]?|HER2|ERBB2|PIK3CA|"
         r"AKT1|AKT|PTEN|ESR1|IDH1|IDH2|FGFR2|FGFR3|KIT|PDGFRA|PALB2|ATM|FLT3|NPM1|JAK2)")
_VARIANT = (r"(?:exon\s*\d+(?:\s*(?:deletions?|insertions?|skipping|mutations?|del|ins))?|ex\s*\d+\s*(?:del|ins)|"
            r"ITD|TKD|(?:p\.)?[A-Z]\d{1,4}[A-Z]|(?:p\.)?[A-Z]\d{2,4}(?![\w]))")  # "p.G12C" (HGVS) is G12C, "ex19del" exon 19;
# "V600" (a codon, any substitution at it: PDQ's "BRAF V600 pathogenic variants")
_GENE_RE = re.compile(
    r"(?<![\w-])(?P<germline>(?i:germline)\s+)?(?P<genes>" + _GENE + r"(?:\s*/\s*" + _GENE + r")*)(?![\w])"
    # (variants side by side describe one alteration: "PDGFRA exon 18 D842V", which had been read as exon 18 only, so
    # PDQ's "Initial TKI therapy for PDGFRA D842V-variant GISTs" did not apply to it)
    r"(?:(?P<variants>[\s-]+" + _VARIANT + r"(?:\s*(?:,|or|and|/)\s*" + _VARIANT + r"|\s+" + _VARIANT + r")*)"
    r"(?:[\s-]+(?:mutations?|mutant|mutated|(?:pathogenic\s+)?[Vv]ariants?|positive))?"
    r"|(?:\s+pathway)?[\s-]+(?:(?:sensitizing|sensitising|activating)\s+)?(?P<status>mutations?|mutant|mutated|"
    r"(?:pathogenic\s+)?[Vv]ariants?|fusions?|rearrangements?|rearranged|translocations?|translocated|"
    r"amplifications?|amplified|alterations?|altered|positive|carriers?|wild[- ]?type|negative|not detected)\b"
    r"|(?P<plus>\+)(?=[\s,.;:)]|$))?")
# A list of genes sharing one status: "BRCA1, BRCA2 or PALB2 mutations", "EGFR or ALK alterations", "KRAS, NRAS and
# BRAF wild-type"; altered -> any of them, wild-type -> all of them. "Germline BRCA1/2 or PALB2:" (germline, no
# status word) is one too. Never with a variant: in "EGFR or KRAS G12C" the variant is KRAS's alone (read per gene).
_GENE_SEP = r"(?:\s*/\s*|\s*,\s*(?:(?:and/or|or|and)\s+)?|\s+(?:and/or|or|and)\s+)"
# "EGFR- or PIK3CA-mutated": a gene's hyphen before the separator belongs to the status after the last one
_GENE_LIST_RE = re.compile(
    r"(?<![\w-])(?P<germline>(?i:germline)\s+)?(?P<genes>" + _GENE + r"(?:-?" + _GENE_SEP + _GENE + r")+)(?![\w])"
    r"(?:(?:\s+pathway)?[\s-]+(?:(?:sensitizing|sensitising|activating)\s+)?(?P<status>mutations?|mutant|mutated|"
    r"(?:pathogenic\s+)?[Vv]ariants?|fusions?|rearrangements?|rearranged|translocations?|translocated|"
    r"amplifications?|amplified|alterations?|altered|positive|carriers?|wild[- ]?type|negative|not detected)\b"
    r"|(?=\s*(?:[:;,.)]|$)|\s+(?:testing|tests?)\b))")
# The status before the genes: "mutations in EGFR or PIK3CA", "alterations of BRCA1, BRCA2 or PALB2" (any of them).
_GENE_IN_RE = re.compile(
    r"(?<![\w-])(?P<germline>(?i:germline)\s+)?(?P<status>(?i:mutations?|alterations?|(?:pathogenic\s+)?variants?|fusions?|"
    r"rearrangements?|translocations?|amplifications?))\s+(?:in|of|affecting)\s+(?:the\s+)?"
    r"(?P<genes>" + _GENE + r"(?:" + _GENE_SEP + _GENE + r")*)(?![\w])(?:\s+genes?\b)?")
# Gene conditions written one by one and joined by "or" ("an EGFR mutation or a PIK3CA mutation", "a BRCA1
# mutation, a BRCA2 mutation or a PALB2 mutation") are alternatives, as a list sharing one status is.
_GENE_OR_JOIN_RE = re.compile(r"\s*(?:,\s*(?:(?P<or1>(?:and/)?or)\s+)?|\s(?P<or2>(?:and/)?or)\s+)(?:(?:an?|the)\s+)?",
                              re.IGNORECASE)
# A negation right before a gene condition: "without EGFR or ALK alterations", "no sensitizing EGFR mutation",
# "negative for KRAS mutations" state the genes wild-type (read as altered, an EGFR case would fit them).
_GENE_NEGATION_RE = re.compile(
    r"\b(?:without|no|lacking|lacks?|absence[ ]of|negative[ ]for|wild[- ]type[ ]for)"
    r"(?:\s+(?:an?|any|known|actionable|targetable|sensitizing|sensitising|activating|oncogenic|detectable|"
    r"pathogenic|germline|somatic|driver))*\s+\Z", re.IGNORECASE)
_NO_DRIVER_RE = re.compile(r"\b(?:without|no|absence of)\s+(?:an?\s+|any\s+)?(?:actionable|targetable|oncogenic)\s+"
                           r"(?:driver|alteration|mutation)s?\b|\bdriver[- ]negative\b", re.IGNORECASE)
_TESTING_RE = re.compile(r"\s+(?:and\s+(?:\w+\s+){0,2})?(?:testing|tests?)\b", re.IGNORECASE)
_HER2_DRIVER_STATUS = ("mutation", "mutations", "mutant", "mutated", "variant", "variants")  # PDQ: "variants"

_HIGH_PDL1_RE = re.compile(r"\bhigh PD-?L1\b", re.IGNORECASE)  # the rest of PD-L1: engine.facts.PDL1_RE


def _fine(group: str, letter: str | None) -> tuple[int, int]:
    g = _ROMAN[group.upper()] * 10
    return (g + ord(letter) - 64, g + ord(letter) - 64) if letter else (g, g + 9)


def _status(word: str | None, sign: str | None) -> str:
    if word:
        return {"ultralow": "low"}.get(word.lower(), word.lower())
    return "positive" if sign == "+" else "negative"


def _receptor_key(name: str) -> str:
    words = {"hormone": "HR", "estrogen": "ER", "oestrogen": "ER", "progesterone": "PR"}
    return {"ERBB2": "HER2"}.get(name.upper()) or words.get(name.lower().split()[0].split("-")[0], name.upper())


def conditions(text: str) -> list[Condition]:
    """The conditions ``text`` states, in the order found (each span is read once)."""
    return [c for _, _, c in spans(text)]


def spans(text: str) -> list[tuple[int, int, Condition]]:
    """``conditions`` with where each one was read: (start, end, condition), in text order."""
    # Markdown emphasis around a gene ("*EGFR* variants", PDQ) is read as a space: same length, positions hold
    original, text = text, text.translate(DASHES).replace("*", " ")
    found: list[tuple[int, int, Condition]] = []
    taken: list[tuple[int, int]] = []

    def free(m: re.Match[str] | tuple[int, int]) -> bool:
        start, end = m if isinstance(m, tuple) else m.span()
        return not any(start < e and s < end for s, e in taken)

    def add(m: re.Match[str] | tuple[int, int], c: Condition) -> None:
        start, end = m if isinstance(m, tuple) else m.span()
        taken.append((start, end))
        found.append((start, end, c))

    # the disease the population had before it relapsed ("disease relapse during or after adjuvant therapy for early
    # breast cancer", postMONARCH's eligibility): its history, not its extent now; an advanced or metastatic extent
    # there still holds ("progressed after first-line chemotherapy for metastatic disease"), and so do receptors
    history = [(m.end(), end.start() if (end := _HISTORY_END_RE.search(text, m.end())) else len(text))
               for m in _RELAPSED_FROM_RE.finditer(text)]

    def extent_free(m: re.Match[str], late: bool = False) -> bool:
        return free(m) and (late or not any(a <= m.start() < b for a, b in history))

    for m in _STAGE_RE.finditer(text):
        items = [_fine(g, letter) for g, letter in _STAGE_ITEM_RE.findall(m.group("list"))]
        if not extent_free(m, late=max(b for _, b in items) >= 40):
            continue
        lo, hi = min(a for a, _ in items), max(b for _, b in items)
        if m.group("above"):
            hi = 49
        add(m, Condition("stage", "stage", m.group(0).strip(), lo=lo, hi=hi))
    for m in _BARE_STAGE_RE.finditer(text):
        lo, hi = _fine(m.group(1), m.group(2))
        if m.group(3):
            hi = _fine(m.group(3), m.group(4))[1]
        if extent_free(m, late=hi >= 40):
            add(m, Condition("stage", "stage", m.group(0), lo=lo, hi=hi))
    for value, rx in _STAGE_CLASSES:
        for m in rx.finditer(text):
            if extent_free(m, late=value in ("metastatic", "advanced", "advanced-stage", "extensive-stage")):
                add(m, Condition("stage", "stage_class", m.group(0), value=value))
    for value, rx in _OPERATION_RES:  # "Postmastectomy radiation ...", "after breast-conserving surgery"
        for m in rx.finditer(text):
            if extent_free(m):
                add(m, Condition("operation", "operation", m.group(0), value=value))
    if not _METASTASES_RE.search(text):
        for family, rx in (("setting", _SETTING_RE), ("resection", _RESECTED_RE)):
            for m in rx.finditer(text):
                if extent_free(m) and not _VERB_BEFORE_RE.search(text, 0, m.start()):  # "can be fully resected": none
                    add(m, Condition(family, "stage_class", m.group(0), value="resectable",
                                     after_surgery=family == "setting" and _after_surgery(text, m),
                                     before_surgery=family == "setting" and bool(_BEFORE_SURGERY_RE.match(m.group(0)))
                                     and not _residual_after(text, m)))
        for m in _SURGERY_RE.finditer(text) if not _CASE_UNRESECTABLE_RE.search(text) else ():
            if extent_free(m) and _surgery_named(text, m):
                add(m, Condition("surgery", "surgery", m.group(0)))
    for m in _PRIOR_DRUGS_RE.finditer(text):  # what the population had before ("progression during ... regorafenib")
        if free(m) and (drugs := _prior_drugs(text, m.end())):
            add((m.start(), drugs[-1][1]), Condition("prior", "prior", original[m.start():drugs[-1][1]],
                                                     value=" ".join(dict.fromkeys(key for _, _, key in drugs))))
    for value, rx in _INVASION_RES:
        for m in rx.finditer(text):
            if free(m):
                add(m, Condition("invasion", "invasion", m.group(0), value=value))
    for m in _COMBO_RE.finditer(text):
        both = ((_receptor_key(m.group(1)), _status(m.group(2), m.group(3))), ("HER2", _status(m.group(5), m.group(6))))
        add(m, Condition("receptor", "receptor", m.group(0), receptors=both))
    for m in HER2_SCORE_RE.finditer(text):  # "HER2 3+", "HER2 IHC 1+ or 2+/ISH-negative", "HER2-zero"
        status, detail = her2_score(m)
        if not free(m) or status is None and not detail:
            continue  # a plain "HER2-positive" is read below
        if status in (None, "equivocal"):  # "HER2 2+" without ISH, or a word the score disagrees with: no status
            taken.append((m.start(), m.end()))
        else:
            end, shown = _balanced(text, m)
            add((m.start(), end), Condition("receptor", "receptor", shown, receptors=(("HER2", status),)))
    for m in HER2_ISH_RE.finditer(text):  # "HER2/CEP17 ratio 2.4, copy number 5.1", "HER2 FISH not amplified"
        status, detail = her2_ish(m)
        if not detail or not free(m):
            continue
        if status is None:  # ASCO/CAP groups 2-4, a ratio alone, or a word the numbers disagree with: no status
            taken.append((m.start(), m.end()))
        else:
            add(m, Condition("receptor", "receptor", " ".join(m.group(0).split()), receptors=(("HER2", status),)))
    for m in _HER2_AMP_RE.finditer(text):
        if free(m):
            add(m, Condition("receptor", "receptor", m.group(0), receptors=(("HER2", "positive"),)))
    for m in _RECEPTOR_RE.finditer(text):
        if free(m):
            later = _SUSPENDED_RE.match(text, m.end()) if m.group(3) == "-" else None
            status = _status(later.group(2), None) if later else _status(m.group(2), m.group(3))
            shown = f"{m.group(1)}-{later.group(2)}" if later else m.group(0).strip()
            add(m, Condition("receptor", "receptor", shown, receptors=((_receptor_key(m.group(1)), status),)))
    for m in _TNBC_RE.finditer(text):
        if free(m):
            add(m, Condition("receptor", "receptor", m.group(0), receptors=(("HR", "negative"), ("HER2", "negative"))))
    def add_gene(m: re.Match[str], c: Condition) -> None:
        """A gene condition, turned wild-type by a negation just before it ("without EGFR or ALK alterations")."""
        if EITHER_WAY_RE.search(text, 0, m.start()):  # "with or without EGFR mutations": no condition
            taken.append((m.start(), m.end()))
            return
        neg = _GENE_NEGATION_RE.search(text, 0, m.start())
        if neg is None or not c.altered:
            add(m, c)
        elif c.variants:  # "without an EGFR exon 19 deletion" is not EGFR wild-type: no condition read
            taken.append((neg.start(), m.end()))
        else:
            add((neg.start(), m.end()), replace(c, text=" ".join(text[neg.start():m.end()].split()), altered=False))

    for m in _GENE_IN_RE.finditer(text):
        if free(m) and (c := _gene_condition(m)) is not None:
            add_gene(m, c)  # "mutations in EGFR or PIK3CA"
    for m in _GENE_LIST_RE.finditer(text):
        if free(m):
            if (c := _gene_condition(m)) is not None:
                add_gene(m, c)
            else:  # "EGFR, ALK and ROS1 testing": no condition, and none read from its parts either
                taken.append((m.start(), m.end()))
    for m in _GENE_RE.finditer(text):
        if free(m) and (c := _gene_condition(m)) is not None:
            add_gene(m, c)
    _join_gene_alternatives(text, found)
    for m in _NO_DRIVER_RE.finditer(text):  # "without an actionable driver": every driver must be absent
        if free(m):
            add(m, Condition("driver", "gene", m.group(0), genes=tuple(sorted(DRIVERS)), altered=False))
    for a, b, value in mmr_readings(text):  # "MSI-H", "non-MSI-H/dMMR" (proficient), "MSI-H pending" (none)
        if free((a, b)):
            if value is None:
                taken.append((a, b))
            else:
                add((a, b), Condition("mmr", "mmr", text[a:b], value=value))
    for m in PDL1_RE.finditer(text):  # "PD-L1-positive", "PD-L1 TPS >= 50%", "PD-L1 1-49%", "PD-L1 CPS >= 10"
        if free(m) and (r := pdl1_range(m)) is not None:
            end, shown = _balanced(text, m)
            add((m.start(), end), Condition("pdl1", "pdl1", shown, lo=r[0], hi=r[1], value=r[2]))
    for m in _HIGH_PDL1_RE.finditer(text):
        if free(m):
            add(m, Condition("pdl1", "pdl1", m.group(0), lo=50, hi=100))
    for a, b, name, status in expression_readings(text):  # "CLDN18.2-positive", "high ... folate receptor alpha"
        if free((a, b)):
            add((a, b), Condition(name, "expression", text[a:b], value=status))
    found += _line_spans(text)  # read apart: "untreated for metastatic disease" is a line and a stage
    for a, b, name, value in status_readings(text):  # "Castration-Resistant Prostate Cancer", "HPV-positive"
        found.append((a, b, Condition(name, "status", text[a:b], value=value)))
    for a, b, classes in child_pugh_readings(text):  # "intact liver function (Child-Pugh class A)"
        found.append((a, b, Condition("liver", "liver", text[a:b], value=classes)))
    for a, b, groups in risk_readings(text):  # read apart too: "Early Unfavorable" is a stage and a risk group
        value = f"{RISK_SCALES[groups[0]]}:{'|'.join(groups)}"
        found.append((a, b, Condition("risk", "risk", text[a:b], value=value)))
    for a, b, target, value in fitness_readings(text):  # "not candidates for intensive therapy", "transplant-eligible"
        if free((a, b)):
            add((a, b), Condition("fitness", "fitness", text[a:b], value=f"{target}:{value}"))
    for value, rx in _PERFORMANCE_RES:  # "older patients with good performance status may benefit from ..."
        for m in rx.finditer(text):
            if free(m):
                add(m, Condition("performance", "performance", m.group(0), value=value))
    for a, b, lo, hi, vague in age_readings(text):  # "patients older than 60 years", "older patients"
        if free((a, b)):
            add((a, b), Condition("age", "age", text[a:b], lo=lo, hi=hi, value=vague))
    for a, b, value in menopause_readings(text):  # "postmenopausal women", "premenopausal or perimenopausal women"
        if free((a, b)):
            add((a, b), Condition("menopause", "menopause", text[a:b], value=value))
    for m in _NEUROENDOCRINE_FOR_RE.finditer(text):  # "(for patients with ... neuroendocrine tumors)"
        if free((m.start("net"), m.end("net"))):
            add((m.start("net"), m.end("net")), Condition("histology", "histology", m.group("net"),
                                                            value="neuroendocrine"))
    return _joined_receptors(sorted(((a, b, _as_written(c, text[a:b], original[a:b])) for a, b, c in found),
                                    key=lambda x: x[0]), original)


def _joined_receptors(found: list[tuple[int, int, Condition]], text: str) -> list[tuple[int, int, Condition]]:
    """Receptor statuses written side by side describe one subgroup, all of them required: "HER2-negative hormone
    receptor-negative" (read as alternatives, the HR-negative half let a HER2-positive case fit). Joined by nothing
    but spaces or a slash, or by a comma when the two are not items of a longer list: "hormone receptor-positive,
    HER2-negative advanced breast cancer" is one subgroup (palbociclib plus letrozole had fitted a triple-negative
    case through its HER2-negative half), "HR-positive, HER2-negative, or triple-negative" three alternatives;
    "HER2-positive or HR-positive" stays two."""
    out: list[tuple[int, int, Condition]] = []
    for k, (a, b, c) in enumerate(found):
        sep = text[out[-1][1]:a] if out else ""
        listed = bool(re.match(r"\s*,?\s*(?:and/or|and|or)\b", text[b:])) or len(out) > 1 and \
            out[-2][2].kind == "receptor" and bool(re.fullmatch(r"\s*,\s*", text[out[-2][1]:out[-1][0]]))
        if out and c.kind == "receptor" and out[-1][2].kind == "receptor" and (
                re.fullmatch(r"\s*/?\s*", sep) or re.fullmatch(r"\s*,\s*", sep) and not listed):
            pa, _, pc = out[-1]
            keys = {k for k, _ in pc.receptors}
            if not keys & {k for k, _ in c.receptors}:
                out[-1] = (pa, b, replace(pc, text=text[pa:b], receptors=pc.receptors + c.receptors))
                continue
        out.append((a, b, c))
    return out


def _as_written(c: Condition, read: str, written: str) -> Condition:
    """The condition's words as the text writes them ("stage II\u2013IIIA", "KRAS-altered" for "*KRAS*-altered"),
    where ``spans`` read dashes as "-" and emphasis as spaces."""
    if c.text == " ".join(read.split()):
        return replace(c, text=" ".join(written.replace("*", "").split()))
    dashes = [ch for ch in written if ch.translate(DASHES) == "-"]
    if c.text.count("-") != len(dashes) or all(ch == "-" for ch in dashes):
        return c
    it = iter(dashes)
    return replace(c, text="".join(next(it) if ch == "-" else ch for ch in c.text))


def _balanced(text: str, m: re.Match[str]) -> tuple[int, str]:
    """The end of a match that opened a parenthesis, and its words for the reasons: "HER2-low (IHC 1+)" takes its
    closing parenthesis; "HER2-positive (IHC 3+ or ISH-amplified)" is shown as "HER2-positive (IHC 3+)"."""
    end, shown = m.end(), " ".join(m.group(0).split())
    if shown.count("(") > shown.count(")"):
        if text[end:end + 1] == ")":
            end += 1
        shown += ")"
    return end, shown


def _gene_condition(m: re.Match[str]) -> Condition | None:
    groups = m.groupdict()  # a list (_GENE_LIST_RE) has no variants or "+"
    status = (groups["status"] or "").lower()
    variants_text = groups.get("variants") or ""
    if not (status or variants_text or groups.get("plus") or groups["germline"]):
        return None  # a gene named without a status ("testing for EGFR and ALK") is not a condition
    if _TESTING_RE.match(m.string, m.end()):
        return None  # "BRAF mutation testing", "germline BRCA1/2 and broader testing": a test to order
    names = [n.upper() for n in re.split(r"-?" + _GENE_SEP + r"(?=[A-Z])", m.group("genes"))]
    if any(n in ("HER2", "ERBB2") for n in names) and not (variants_text or status in _HER2_DRIVER_STATUS):
        return None  # HER2 positive/amplified is a receptor status (handled above), not a driver mutation
    genes = tuple(dict.fromkeys(g for n in names for g in _GENE_ALIASES.get(n, (n,))))
    wild = status.startswith(("wild", "negative", "not"))
    variants = frozenset(_variant(v) for v in re.findall(_VARIANT, variants_text))
    family = _gene_family(genes)
    return Condition(family, "gene", " ".join(m.group(0).split()), genes=genes, altered=not wild,
                     variants=variants, exclusive=not status.startswith("amplif"))


def _gene_family(genes: Sequence[str]) -> str:
    """The family of a gene condition: "driver" for the near mutually exclusive drivers, "BRCA" for BRCA1/2, else
    the gene; a list of genes of different families is one family named by all of them ("driver+PIK3CA" for
    "EGFR or PIK3CA mutation", "BRCA+PALB2" for "BRCA1, BRCA2 or PALB2"), alternatives among themselves."""
    return "+".join(dict.fromkeys("driver" if g in DRIVERS else _GENE_FAMILY.get(g, g) for g in genes))


def _join_gene_alternatives(text: str, found: list[tuple[int, int, Condition]]) -> None:
    """Gene conditions written one by one and joined by "or" ("an EGFR mutation or a PIK3CA mutation") take one
    family, so they are judged as alternatives, like a list sharing one status. Wild-type ones are not joined
    ("no EGFR mutation or ALK fusion" is read by the negation rules)."""
    genes = sorted((k for k, (_, _, c) in enumerate(found) if c.kind == "gene" and c.altered),
                   key=lambda k: found[k][0])
    chains: list[list[int]] = []
    has_or: list[bool] = []
    for k in genes:
        j = _GENE_OR_JOIN_RE.fullmatch(text, found[chains[-1][-1]][1], found[k][0]) if chains else None
        if j is not None:
            chains[-1].append(k)
            has_or[-1] = has_or[-1] or bool(j.group("or1") or j.group("or2"))
        else:
            chains.append([k])
            has_or.append(False)
    for chain, joined in zip(chains, has_or):
        if joined and len(chain) > 1:
            family = "+".join(dict.fromkeys(f for k in chain for f in found[k][2].family.split("+")))
            for k in chain:
                a, b, c = found[k]
                found[k] = (a, b, replace(c, family=family))


def _variant(v: str) -> str:
    m = re.match(r"ex(?:on)?\s*(\d+)", v, re.IGNORECASE)
    return f"exon {m.group(1)}" if m else v.upper().removeprefix("P.")


# --------------------------------------------------------------------------- the case

@dataclass(frozen=True)
class Case:
    """What the case states, in the shape the conditions need. Missing = not stated."""

    stage: tuple[int, int] | None = None  # fine-scale interval
    stage_name: str = ""
    metastatic: bool | None = None
    receptors: Mapping[str, str] = field(default_factory=dict)  # HER2/HR/ER/PR -> positive/negative/low
    altered: Mapping[str, frozenset[str]] = field(default_factory=dict)  # gene -> variants (empty: unspecified)
    wild_type: frozenset[str] = frozenset()
    names: Mapping[str, str] = field(default_factory=dict)  # gene -> marker as written, for the reasons
    mmr: str | None = None
    pdl1: tuple[int, int] | None = None  # percentage range: (0, 0) negative, (1, 100) positive, (1, 49) "1-49%"
    pdl1_score: str = ""  # "TPS" / "CPS" / "" (not said)
    pdl1_text: str = ""  # as the marker says, for the reasons
    expression: Mapping[str, str] = field(default_factory=dict)  # CLDN18.2/FRα -> positive/negative/high/low
    unresectable: bool = False  # stated unresectable/inoperable (engine.facts puts it in stage_text)
    invasion: str | None = None  # bladder: "muscle-invasive" / "non-muscle-invasive" (from stage_text too)
    line: str | None = None  # line of therapy: "first" (untreated) / "later" (progressed), engine.facts
    recurrent: bool | None = None  # recurrent/relapsed (True) or newly diagnosed (False), engine.facts
    fitness: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # target -> (fit/unfit, as the note says)
    fitness_stated: bool = False  # the note states a fitness (not only what its treatment history shows)
    age: int | None = None  # years (engine.facts; 90 for a redacted age over 89)
    subsites: frozenset[str] = frozenset()  # oral cavity / larynx sites, Hodgkin types the note names (engine.facts)
    performance: str | None = None  # "good" / "intermediate" / "poor" (``case_performance``); None: unstated
    resected: bool = False  # the note says the tumour was removed ("resected", "after lumpectomy")
    cancer_type: str = ""  # engine.facts' cancer type ("" = none read), for a population's histology
    operation: str | None = None  # the breast operation done: "mastectomy" / "breast-conserving surgery"
    first_line_done: bool = False  # a later-line case past its first line (engine.facts)
    risk: Mapping[str, frozenset[str]] = field(default_factory=dict)  # scale -> risk groups stated (engine.facts)
    child_pugh: str | None = None  # the Child-Pugh class stated (engine.facts)
    statuses: Mapping[str, str] = field(default_factory=dict)  # "castration" -> "resistant", "HPV" -> ... (facts)
    exhausted: Mapping[str, str] = field(default_factory=dict)  # drug class -> what the case had of it, as written
    # drug (or class, engine.facts ``avoid_key``) -> the note's clause that stopped it for toxicity or ruled it out
    avoided: Mapping[str, str] = field(default_factory=dict)
    drugs_named: frozenset[str] = frozenset()  # every drug the note names (engine.facts)
    prior_lines: int | None = None  # lines before the one the case is at (engine.facts), when the note says
    bclc: str | None = None  # hepatocellular carcinoma's BCLC stage ("0", "A" .. "D") when no AJCC stage is stated
    sex: str | None = None  # "female" / "male" (engine.facts)
    menopause: str | None = None  # "pre" / "post" (engine.facts: stated, or a woman of 60 or more)


_STAGE_WORDS_RE = re.compile(r"\bstage\b|metasta", re.IGNORECASE)  # a stage or extent written in words
_DENIED_MARKER_RE = re.compile(r"\s(?:negative|status unknown|pending)$")  # engine.facts' status on a marker
_CASE_SUBSTAGE_RE = re.compile(r"\bstage\s*(iv|iii|ii|i|[0-4])([abc])", re.IGNORECASE)
_CASE_METASTATIC_RE = re.compile(r"metasta|\bmets\b|\bM1|extensive", re.IGNORECASE)
_CASE_UNRESECTABLE_RE = re.compile(r"\bunresectable\b|\binoperable\b|\bnot (?:surgically )?resectable\b",
                                   re.IGNORECASE)


# Cancers whose AJCC 8th edition groups put every node-positive, M0 case in stage III (engine.facts reads any "N1-3
# M0" as III for routing; for breast "T2N1M0" is IIB, pancreas IIB, gastric "T1N1M0" IB, prostate IVA)
_NODE_POSITIVE_IS_III = frozenset({"colon cancer", "rectal cancer", "colorectal cancer", "melanoma", "anal cancer",
                                   "Merkel cell carcinoma"})


# Cancers whose AJCC 8th edition stage IV is exactly M1, so that an M0 case is stage 0 to III whatever its T and N
# (not head and neck, thyroid, kidney, prostate, cervix, esophagus, stomach or bladder: stage IV(A) holds M0 there)
_STAGE_IV_IS_M1 = frozenset({"colon cancer", "rectal cancer", "colorectal cancer", "anal cancer", "breast cancer",
                             "triple-negative breast cancer", "HER2-positive breast cancer",
                             "hormone receptor-positive breast cancer", "male breast cancer",
                             "non-small cell lung cancer",
                             "small cell lung cancer", "lung cancer", "melanoma", "pancreatic adenocarcinoma",
                             "Merkel cell carcinoma"})


def _routing_only_stage(facts: CaseFacts) -> bool:
    """The case's stage is engine.facts' routing approximation from TNM, not the cancer's stage group: not used for
    case fit (the stage is then unknown: stage lines are qualified, never contradicted by a guess). Node-positive
    M0 outside ``_NODE_POSITIVE_IS_III``; bladder and head and neck TNM are read by their own staging
    (``bladder_stage``, ``tnm_staging``: trusted where they give the same group); thyroid cancer's stage is never
    derived (M1 differentiated cancer under 55 is II)."""
    words = facts.stage_text or ""
    if re.search(r"\bstage\b|\bextensive\b", words, re.IGNORECASE):
        return False  # stated
    if facts.cancer_type == "thyroid cancer":
        return True
    m = TNM_RE.search(words)
    if m is None:
        return False  # "metastatic": IV
    if facts.cancer_type == "urothelial carcinoma":
        return bladder_stage(m) != facts.stage
    if staging := tnm_staging(facts.cancer_type, facts.statuses):
        return staging(m) != facts.stage
    return m.group("m") != "1" and facts.cancer_type not in _NODE_POSITIVE_IS_III


def case_from_facts(facts: CaseFacts) -> Case:
    stage: tuple[int, int] | None = None
    name = ""
    metastatic: bool | None = None
    if facts.stage and facts.stage.upper() in _ROMAN and not _routing_only_stage(facts):
        sub = _CASE_SUBSTAGE_RE.search(facts.stage_text or "")
        letter = sub.group(2).upper() if sub and _ROMAN[sub.group(1).upper()] == _ROMAN[facts.stage.upper()] else None
        stage = _fine(facts.stage, letter)
        name = f"stage {facts.stage.upper()}{letter or ''}"
        group = _ROMAN[facts.stage.upper()]
        # stage IVA/IVB is not always distant disease (head and neck, cervix): there it must say "metastatic"
        said = bool(_CASE_METASTATIC_RE.search(facts.stage_text or ""))
        metastatic = group == 4 and (letter not in ("A", "B") or said)
        tnm = TNM_RE.search(facts.stage_text or "")
        if group == 4 and tnm and tnm.group("m") == "0" and not _STAGE_WORDS_RE.search(facts.stage_text or ""):
            metastatic = False  # stage IV from TNM with M0 (bladder T4b: IVA): not metastatic
        elif group == 4 and not metastatic:
            metastatic = None  # unknown, not "no": neither "metastatic" nor "non-metastatic" is judged
        if metastatic:
            name += " (metastatic)"
    if stage is None and metastatic is None and _routing_only_stage(facts) and \
            re.search(r"metasta|\bmets\b", facts.stage_text or "", re.IGNORECASE) and \
            not re.search(r"\bnon-?metasta", facts.stage_text or "", re.IGNORECASE):
        # a stage case fit does not use (thyroid: M1 under 55 is stage II) still has the distant metastases its
        # words state (a QA pass's "radioactive iodine-refractory lung mets" had metastatic lines qualified)
        metastatic, name = True, "metastatic (no stage used)"
    receptors: dict[str, str] = {}
    altered: dict[str, frozenset[str]] = {}
    wild: set[str] = set()
    names: dict[str, str] = {}
    wild_names: dict[str, str] = {}
    mmr: str | None = None
    pdl1: Condition | None = None
    expression: dict[str, str] = {}
    source = [*facts.markers, facts.cancer_type or ""]
    for text in source:
        for c in conditions(text):
            if c.kind == "receptor":
                for key, value in c.receptors:
                    # the IHC score refines "HER2-negative": a plain one does not undo "HER2-negative (IHC 0)"
                    if not (key == "HER2" and value == "negative" and receptors.get(key) in ("low", "zero")):
                        receptors[key] = value
            elif c.kind == "gene" and c.altered and c.variants and _DENIED_MARKER_RE.search(text):
                continue  # "KRAS G12C negative" (engine.facts): that variant is absent, the gene's others unknown
            elif c.kind == "gene" and c.altered:
                for g in c.genes:
                    altered[g] = altered.get(g, frozenset()) | c.variants
                    names.setdefault(g, c.text)
            elif c.kind == "gene":
                wild.update(c.genes)
                for g in c.genes:
                    wild_names.setdefault(g, c.text)
            elif c.kind == "mmr":
                mmr = c.value
            elif c.kind == "pdl1":
                pdl1 = c
            elif c.kind == "expression":
                expression[c.family] = c.value
    for gene in facts.genes:  # facts' altered genes (e.g. a bare "BRCA2"); HER2 there is a receptor, not a driver
        if gene.upper() in ("HER2", "ERBB2"):
            continue
        for g in _GENE_ALIASES.get(gene.upper(), (gene.upper(),)):
            if g not in altered and g not in wild:
                altered[g] = frozenset()
                names.setdefault(g, gene)
    # Germline BRCA1 and BRCA2 are tested together: a negative result for one, with neither stated altered, is read
    # as BRCA1/2 negative ("germline BRCA2 mutation negative" contradicts a "germline BRCA carriers" line)
    brca = {"BRCA1", "BRCA2"}
    if wild & brca and not set(altered) & brca:
        said = wild_names[sorted(wild & brca)[0]]
        for g in brca - wild:
            wild.add(g)
            wild_names[g] = said
    for g, text in wild_names.items():
        names.setdefault(g, text)
    _derive_hormone_receptor(receptors)
    extent = (facts.stage_text or "").translate(DASHES)
    invasion = next((value for value, rx in _INVASION_RES if rx.search(extent)), None)
    if stage is None and "localized" in [e.strip().lower() for e in extent.split(",")]:
        # localized disease without a stage: not metastatic, stage 0 to III (no group within)
        stage, name, metastatic = (0, 39), "localized (no stage given)", False
    said = {e.strip().lower() for e in extent.split(",")}
    if stage is None and "non-metastatic" in said:
        metastatic, name = False, "without distant metastases (no stage given)"
    operable = {"resected", "resectable", "borderline resectable"} & said
    if stage is None and operable and not facts.recurrent and not _CASE_UNRESECTABLE_RE.search(extent):
        # resected or resectable without a stage: the early, operable setting, not metastatic (stage 0 to
        # III); an adjuvant line had been "applies if ... (not stated for this case)" for "pancreatic cancer,
        # resected". A breast cancer's stage 0 is DCIS, which engine.facts reads as such: else stage I to III (the
        # audit's operated BRCA2 carrier had "Stages I, II, and III" lines only qualified)
        low = 10 if facts.cancer_type in BREAST_TYPES else 0
        stage, name, metastatic = (low, 39), f"{sorted(operable)[-1]} (no stage given)", False
    if stage is None and "limited-stage" in [e.strip().lower() for e in extent.split(",")]:
        # SCLC's limited stage: stages I to III, not metastatic (PDQ: "Treatment of Limited-Stage SCLC")
        stage, name, metastatic = (10, 39), "limited-stage (stage I to III)", False
    tnm = TNM_RE.search(extent)
    if stage is None and tnm and tnm.group("m") == "0" and facts.cancer_type in _STAGE_IV_IS_M1:
        # "T2N1M0" breast cancer: no group from TNM here (IIA to IIIC), but M0 where stage IV means M1: not stage IV
        stage, name, metastatic = (0, 39), f"{tnm.group(0)} (M0: stage 0 to III)", False
    if stage is None and invasion == "muscle-invasive":
        # muscle-invasive bladder cancer is T2 or more: stage II or higher (AJCC 8), never 0 or I; no group within
        stage, name = (20, 49), "muscle-invasive (stage II or higher)"
    return Case(stage, name, metastatic, receptors, altered, frozenset(wild - set(altered)), names, mmr,
                (pdl1.lo, pdl1.hi) if pdl1 else None, pdl1.value if pdl1 else "", pdl1.text if pdl1 else "",
                expression=expression,
                unresectable=bool(_CASE_UNRESECTABLE_RE.search(extent)), invasion=invasion, line=facts.line,
                recurrent=facts.recurrent, fitness=_case_fitness(facts.fitness, facts), age=facts.age,
                fitness_stated=bool(facts.fitness), subsites=frozenset(facts.subsites),
                performance=case_performance(facts.performance_status), resected="resected" in said,
                cancer_type=facts.cancer_type or "",
                operation=next((o for o in ("breast-conserving surgery", "mastectomy") if o in said), None),
                first_line_done=facts.first_line_done, child_pugh=facts.child_pugh,
                statuses=dict(x.split(":") for x in facts.statuses),
                risk={scale: frozenset(v.split(":")[1] for v in facts.risk if v.startswith(scale + ":"))
                      for scale in {v.split(":")[0] for v in facts.risk}},
                exhausted=_exhausted(facts.progressed_after),
                avoided={avoid_key(drug): said for drug, said in (x.split(": ", 1) for x in facts.avoided_drugs)},
                drugs_named=frozenset(facts.drugs_named),
                prior_lines=facts.prior_lines,
                bclc=m.group(1).upper() if stage is None and (m := BCLC_RE.search(extent)) else None,
                sex=facts.sex, menopause=facts.menopause)


def _exhausted(given: Sequence[str]) -> dict[str, str]:
    """Checkpoint class (PD-1/PD-L1, CTLA-4), EGFR TKI, ARPI, CDK4/6 inhibitor, ALK TKI generation or frontline
    regimen (R-CHOP, ...) -> what of it the case progressed after, as written (engine.facts ``progressed_after``)."""
    out: dict[str, list[str]] = {}
    for drug in given:  # "CDK4/6 inhibitor" as written is the class; any other checkpoint wording is PD-1/PD-L1
        own = _CLASS_OF.get(drug, CDK46 if drug[:3].upper() == "CDK" else PD1_CLASS)
        for cls in CHEMO_BACKBONES.get(drug) or (own,):
            out.setdefault(cls, []).append(drug)
    return {k: ", ".join(v) for k, v in out.items()}


# What one fitness statement implies for the others: whoever cannot have chemotherapy cannot have intensive,
# transplant or cisplatin-based treatment; whoever is frail or less fit ("general") cannot have intensive therapy or
# a transplant; whoever cannot have intensive therapy or a transplant is less fit (PDQ's myeloma "Less-fit patients"
# are the transplant-ineligible ones). Whoever can have a transplant can have intensive therapy and is fit; intensive
# or cisplatin-based chemotherapy implies chemotherapy. One step only, and implications that disagree imply nothing:
# "not a transplant candidate" does not make a case unfit for intensive induction, and "cisplatin-ineligible" may
# still receive carboplatin.
_FITNESS_IMPLIES = {("chemotherapy", "unfit"): ("intensive", "transplant", "cisplatin", "general"),
                    ("general", "unfit"): ("intensive", "transplant"),
                    ("intensive", "unfit"): ("transplant", "general"),
                    ("transplant", "unfit"): ("general",),
                    ("transplant", "fit"): ("intensive", "chemotherapy", "general"),
                    ("intensive", "fit"): ("chemotherapy", "general"),
                    ("cisplatin", "fit"): ("chemotherapy",)}


# Chemotherapy among a case's prior treatments (engine.facts ``prior_treatments``, the configured keywords): a
# case that has had it was a candidate for chemotherapy
_CHEMO_GIVEN_RE = re.compile(r"chemo|folf|xelox|capox|platin|taxel|gemcitabine|pemetrexed|capecitabine|"
                             r"irinotecan|fluorouracil|\b5-?fu\b|\br-?chop\b|anthracycline|doxorubicin|"
                             r"cytarabine",
                             re.IGNORECASE)
# A population's performance status ("patients with good performance status", "ECOG PS 0-1"), judged against
# the case's (engine.facts ``performance_status``): good is ECOG 0-1 (KPS >= 80), poor ECOG 3-4 (KPS <= 50);
# ECOG 2 is left open. "Older patients with good performance status ... may benefit from combination
# chemotherapy" had been released for an 84-year-old at ECOG 3.
_PERFORMANCE_RES = (
    ("good", re.compile(r"\b(?:good|excellent|adequate|favou?rable)\s+performance(?:\s+status)?\b|"
                        r"\bECOG\s+(?:PS\s+|performance\s+status\s+)?(?:score\s+)?(?:of\s+)?0\s*(?:-|–|to|or)"
                        r"\s*1\b|\b(?:Karnofsky\s+performance\s+status|KPS)\s+(?:score\s+)?(?:of\s+)?"
                        r"(?:at\s+least|≥|>=)\s*(?:70|80)\b", re.IGNORECASE)),
    ("poor", re.compile(r"\b(?:poor|low|impaired|compromised|reduced)\s+performance(?:\s+status)?\b",
                        re.IGNORECASE)))
# A population of neuroendocrine tumours ("Everolimus ... (for patients with unresectable ...
# well-differentiated, nonfunctional, neuroendocrine tumors)" in PDQ's NSCLC options list was offered first to
# a squamous NSCLC case; RADIANT-4's "in patients older than 18 years with advanced, ... neuroendocrine tumors of
# lung or gastrointestinal origin" was released to a QA pass's lung adenocarcinoma) and the cancers that are
# neuroendocrine (small cell lung cancer is one)
_NEUROENDOCRINE_FOR_RE = re.compile(
    r"(?:\b(?:for|in)\s+(?:[\w-]+\s+){0,4}?|^\W*)(?:patients|those|people|adults|children)\b[^.;()]{0,30}?\bwith\s+"
    r"(?:[^.;()]|\([^()]*\)){0,160}?(?P<net>\bneuroendocrine\s+(?:tumou?rs?|carcinomas?|neoplasms?))", re.IGNORECASE)
_NEUROENDOCRINE_TYPE_RE = re.compile(r"neuroendocrine|carcinoid|(?<!non-)(?<!non )small cell|merkel|"
                                     r"pheochromocytoma|paraganglioma|islet|medullary thyroid|\bNET\b",
                                     re.IGNORECASE)
_CASE_PS_RE = re.compile(r"\b(?:ECOG|(?:WHO|Zubrod)\s+PS|PS)\s*(?P<ecog>[0-4])\b|\bKPS\s*(?P<kps>\d{2,3})\b",
                         re.IGNORECASE)


def case_performance(performance_status: str | None) -> str | None:
    """"good" (ECOG 0-1, KPS >= 80), "poor" (ECOG 3-4, KPS <= 50), "intermediate" (ECOG 2, KPS 60-70), or None
    when the note states none."""
    m = _CASE_PS_RE.search(performance_status or "")
    if m is None:
        return None
    if m.group("ecog") is not None:
        return {0: "good", 1: "good", 2: "intermediate"}.get(int(m.group("ecog")), "poor")
    kps = int(m.group("kps"))
    return "good" if kps >= 80 else "poor" if kps <= 50 else "intermediate"


def _case_fitness(statements: Sequence[str], facts: CaseFacts | None = None) -> dict[str, tuple[str, str]]:
    """Target -> (fit/unfit, the statement as written): the stated ones (the last of a target wins), then what they
    imply where they agree. With ``facts``, a case that has had chemotherapy ("after concurrent
    chemoradiation") and states no unfitness, no progression and no poor performance status was a candidate
    for chemotherapy (the audit's unresectable stage IIIB case after chemoradiation was offered "... in
    patients who are not candidates for chemotherapy" first); a progressed or poorly performing case may no
    longer be one, so it stays unstated."""
    stated: dict[str, tuple[str, str]] = {}
    for text in statements:
        for _, _, target, value in fitness_readings(text):
            stated[target] = (value, text)
    implied: dict[str, list[tuple[str, str]]] = {}
    for target, (value, text) in stated.items():
        for other in _FITNESS_IMPLIES.get((target, value), ()):
            implied.setdefault(other, []).append((value, text))
    out = dict(stated)
    for target, found in implied.items():
        if target not in out and len({value for value, _ in found}) == 1:
            out[target] = found[0]
    if facts and case_performance(facts.performance_status) == "poor":
        # ECOG 3-4 (KPS <= 50) rules out intensive therapy, a transplant and cisplatin (Ferrara's and Galsky's
        # criteria) unless the note says otherwise: a QA pass's 87-year-old at ECOG 3 had FOLFIRINOX drafted
        said = f"{facts.performance_status} (poor performance status)"
        for target in ("intensive", "transplant", "cisplatin", "general"):
            out.setdefault(target, ("unfit", said))
    given = [t for t in facts.prior_treatments if _CHEMO_GIVEN_RE.search(t)] if facts else []
    if (given and facts and "chemotherapy" not in out and "unfit" not in {v for v, _ in out.values()}
            and facts.line != "later" and case_performance(facts.performance_status) != "poor"):
        out["chemotherapy"] = ("fit", f"already treated with {given[0]}")
    return out


def _derive_hormone_receptor(r: dict[str, str]) -> None:
    """HR-positive = ER- or PR-positive; HR-negative = ER- and PR-negative (and implies both negative)."""
    if "HR" not in r:
        if "positive" in (r.get("ER"), r.get("PR")):
            r["HR"] = "positive"
        elif r.get("ER") == "negative" and r.get("PR") == "negative":
            r["HR"] = "negative"
    if r.get("HR") == "negative":
        r.setdefault("ER", "negative")
        r.setdefault("PR", "negative")


# --------------------------------------------------------------------------- judging

@dataclass(frozen=True)
class CaseFit:
    verdict: Verdict
    contradicted: tuple[str, ...] = ()  # "states stage I; the case is stage III"
    unknown: tuple[str, ...] = ()  # "stage II–IIIA", conditions the case does not state
    notes: tuple[str, ...] = ()  # an option in the sentence whose own condition contradicts the case

    @property
    def reason(self) -> str:
        if self.verdict == "contradicts":
            return "does not apply to this case: " + "; ".join(self.contradicted)
        if self.verdict == "unknown":
            return "applies if " + " or ".join(self.unknown) + " (not stated for this case)"
        return ""

    @property
    def note(self) -> str:
        """The qualifier for options within the sentence that do not apply ('' when none)."""
        return "; ".join(self.notes)


def _fit(c: Condition, case: Case) -> tuple[Fit, str]:
    """One condition against the case: the fit and, when it contradicts, what the case states instead."""
    if c.kind == "stage":
        if case.stage is None:
            return "unknown", ""
        lo, hi = case.stage
        if c.lo <= lo and hi <= c.hi:
            return "fits", ""
        return ("contradicts", case.stage_name) if hi < c.lo or lo > c.hi else ("unknown", "")
    if c.kind == "stage_class":
        if (c.family.endswith("resection") or c.after_surgery) and case.unresectable:
            return "contradicts", f"{case.stage_name}, unresectable" if case.stage_name else "unresectable"
        if c.before_surgery and case.resected and (c.family == "setting" or not (
                case.recurrent or case.unresectable or case.metastatic or case.line == "later")):
            # the operation is done: treatment before it no longer applies ("Neoadjuvant therapy is
            # particularly favored ..." had been offered first to a case after lumpectomy asking about
            # adjuvant therapy), nor a heading's ("... Resectable Stage III Melanoma > Neoadjuvant therapy":
            # SWOG S1801 offered third to a melanoma after excision and node dissection) unless the disease
            # has come back or spread since (a resected primary's liver metastases may have neoadjuvant therapy)
            return "contradicts", "already resected"
        return _fit_class(c.value, case)
    if c.kind == "surgery":
        return ("contradicts", f"{case.stage_name}, unresectable" if case.stage_name else "unresectable") \
            if case.unresectable else ("fits", "")
    if c.kind == "unresectable":  # only a resected case that has not recurred, spread or progressed is against it
        done = case.resected and not (case.recurrent or case.unresectable or case.metastatic or case.line == "later")
        return ("contradicts", f"{case.stage_name}, resected" if case.stage_name else "resected") if done \
            else ("fits", "")
    if c.kind == "invasion":
        if case.invasion is None:
            return "unknown", ""
        return ("fits", "") if case.invasion == c.value else ("contradicts", case.invasion)
    if c.kind == "receptor":
        fits = [_fit_receptor(k, v, case.receptors) for k, v in c.receptors]
        bad = [f"{k}-{case.receptors.get(k) or _implied(k, case.receptors)}" for (k, _), f in zip(c.receptors, fits)
               if f == "contradicts"]
        if bad:
            return "contradicts", ", ".join(bad)
        return ("fits", "") if all(f == "fits" for f in fits) else ("unknown", "")
    if c.kind == "gene":
        return _fit_gene(c, case)
    if c.kind == "mmr":
        if case.mmr is None:
            return "unknown", ""
        return ("fits", "") if case.mmr == c.value else ("contradicts", f"mismatch repair {case.mmr} "
                                                         f"({'MSI-H/dMMR' if case.mmr == 'deficient' else 'MSS/pMMR'})")
    if c.kind == "pdl1":
        return _fit_pdl1(c, case)
    if c.kind == "expression":
        return _fit_expression(c, case)
    if c.kind == "line":
        if c.implied and case.recurrent and not case.first_line_done:
            return "contradicts", "recurrent"  # PDQ treats a recurrence in its own section
        if case.line is None:
            # a newly diagnosed case has had no treatment for it: a first-line or untreated section applies (the
            # audit's "newly diagnosed AML, FLT3-ITD" had PDQ's "Newly Diagnosed (Untreated; Remission Induction)"
            # lines, the FLT3 inhibitor among them, only qualified and offered last)
            return ("fits", "") if c.value == "first" and case.recurrent is False else ("unknown", "")
        if case.line == c.value:
            return "fits", ""
        # a first-line option for a case that progressed stays open (the progression may have been on adjuvant
        # therapy) unless the case is past its first line; a later-line one does not apply to an untreated case
        if c.value == "later":
            return "contradicts", "untreated"
        return ("contradicts", "past its first line of therapy") if case.first_line_done else ("unknown", "")
    if c.kind == "status":
        name = c.family.split(":")[-1]  # "HPV", or a heading's "section:HPV"
        have = case.statuses.get(name)
        if have is None:
            return "unknown", ""
        return ("fits", "") if have == c.value else ("contradicts", f"{name}-{have}")
    if c.kind == "liver":
        if case.child_pugh is None:
            return "unknown", ""
        return ("fits", "") if case.child_pugh in c.value else ("contradicts", f"Child-Pugh class {case.child_pugh}")
    if c.kind == "risk":
        scale, groups = c.value.split(":")
        have = case.risk.get(scale)
        if not have:
            return "unknown", ""
        return ("fits", "") if have & set(groups.split("|")) else \
            ("contradicts", " or ".join(f"{g}-risk" if scale == "risk" else g for g in sorted(have)))
    if c.kind == "recurrence":
        if c.value == "refractory" and case.recurrent is False and case.line == "later":
            return "fits", ""  # newly diagnosed and already resistant to its first treatment
        if case.recurrent is None:
            # a case that progressed after its treatment is the relapsed one PDQ's "Treatment of Recurrent SCLC"
            # is for (an extensive-stage SCLC case after platinum had those lines qualified "applies if recurrent")
            return ("fits", "") if case.line == "later" else ("unknown", "")
        return ("fits", "") if case.recurrent else ("contradicts", "newly diagnosed")
    if c.kind == "fitness":
        target, want = c.value.split(":")
        if target not in case.fitness:
            return "unknown", ""
        have, said = case.fitness[target]
        return ("fits", "") if have == want else ("contradicts", said)
    if c.kind == "age":
        return _fit_age(c, case.age)
    if c.kind == "menopause":
        # PDQ treats premenopausal women with ovarian suppression "in the same manner as postmenopausal women", and
        # a man's aromatase inhibitor is given with a GnRH agonist: a postmenopausal population qualifies them
        if c.value == "post" and (case.sex == "male" or case.menopause == "pre"):
            return "unknown", ("given with a GnRH agonist (the case is a man)" if case.sex == "male" else
                               "ovarian function is suppressed (the case is premenopausal)")
        if case.sex == "male":
            return "contradicts", "a man"
        if case.menopause is None:
            return "unknown", ""
        return ("fits", "") if case.menopause == c.value else ("contradicts", f"{case.menopause}menopausal")
    if c.kind == "operation":
        if case.operation is None:
            return "unknown", ""
        return ("fits", "") if case.operation == c.value else ("contradicts", f"after {case.operation}")
    if c.kind == "histology":  # a neuroendocrine population: the case's cancer type says whether it is one
        if not case.cancer_type:
            return "unknown", ""
        return ("fits", "") if _NEUROENDOCRINE_TYPE_RE.search(case.cancer_type) else ("contradicts",
                                                                                       case.cancer_type)
    if c.kind == "performance":
        if case.performance in (None, "intermediate"):
            return "unknown", ""
        return ("fits", "") if case.performance == c.value else ("contradicts",
                                                                 f"of {case.performance} performance status")
    if c.kind == "prior":  # had before: stated when the note names one of its drugs
        return ("fits", "") if set(c.value.split()) & case.drugs_named else ("unknown", "")
    if c.kind == "subsite":
        if c.value == NOT_APL:
            return ("contradicts", "APL") if "APL" in case.subsites else ("fits", "")
        if c.value == "APL" and case.cancer_type == "acute myeloid leukemia" and "APL" not in case.subsites:
            return "contradicts", "AML, and its note names no APL"  # APL is always named: PML-RARA, t(15;17)
        if not case.subsites:
            return "unknown", ""
        return ("fits", "") if c.value in case.subsites else ("contradicts", ", ".join(sorted(case.subsites)))
    return "unknown", ""


# The vague ages: "older patients" are 60 and over, "younger patients" under 60 (PDQ's "older" in AML and Hodgkin
# lymphoma; where it means 65 or 70 PDQ usually writes the number, which is read instead)
_OLDER_FROM = 60


def _fit_age(c: Condition, age: int | None) -> tuple[Fit, str]:
    if age is None:
        return "unknown", ""
    said = "over 89 years old" if age >= 90 else f"{age} years old"
    if c.value in ("older", "younger"):
        fit: Fit = "fits" if (age >= _OLDER_FROM) == (c.value == "older") else "contradicts"
    elif age >= 90 and c.hi >= 90:
        fit = "fits" if c.lo <= 90 else "unknown"  # "over 89": under a 95 bound or not, it cannot say
    else:
        fit = "fits" if c.lo <= age <= c.hi else "contradicts"
    return fit, said if fit == "contradicts" else ""


# stage class -> (groups it fits, groups it contradicts)
_CLASS_SETS: dict[str, tuple[set[int], set[int]]] = {
    "early": ({0, 1, 2}, {3, 4}), "locally advanced": ({2, 3}, {0, 1}), "advanced": ({4}, {0, 1, 2}),
    "advanced-stage": ({3, 4}, {0, 1, 2}),
    "limited-stage": ({1, 2, 3}, {4}), "extensive-stage": ({4}, {0, 1, 2, 3}),
    "metastatic": (set(), {0, 1, 2, 3}), "non-metastatic": ({0, 1, 2, 3}, set()),
    "localised": ({0, 1, 2, 3}, set()), "resectable": ({0, 1, 2, 3}, set())}


# What a BCLC stage is, as the guidelines' stage classes: 0/A early (resection, transplant, ablation: PDQ's
# "Localized Primary Liver Cancer"); B intermediate (TACE, under "Locally Advanced or Metastatic"); C advanced
# (vascular invasion, or spread: metastatic unsettled); D end-stage. A class missing from a stage's row is unknown.
_BCLC_CLASSES: dict[str, dict[str, Fit]] = {
    "early": dict.fromkeys(("early", "localised", "resectable", "non-metastatic"), "fits") | dict.fromkeys(
        ("locally advanced", "advanced", "advanced-stage", "metastatic", "extensive-stage"), "contradicts"),
    "intermediate": dict.fromkeys(("locally advanced", "non-metastatic"), "fits") | dict.fromkeys(
        ("early", "localised", "resectable", "metastatic", "advanced"), "contradicts"),
    "advanced": dict.fromkeys(("locally advanced", "advanced", "advanced-stage"), "fits") | dict.fromkeys(
        ("early", "localised", "resectable"), "contradicts"),
    "end-stage": dict.fromkeys(("advanced", "advanced-stage"), "fits") | dict.fromkeys(
        ("early", "localised", "resectable"), "contradicts")}
_BCLC_GROUP = {"0": "early", "A": "early", "B": "intermediate", "C": "advanced", "D": "end-stage"}


def _fit_class(value: str, case: Case) -> tuple[Fit, str]:
    """A stage class against the case's stage: fits when every stage group the case may be in fits, contradicts
    when every one is against it (muscle-invasive bladder cancer, "stage II or higher", is neither early nor
    metastatic for sure: "early" and "metastatic" lines are qualified, a "localised" one too). Without one, a
    BCLC stage decides (``_BCLC_CLASSES``)."""
    if case.stage is None and case.bclc:
        group = _BCLC_GROUP[case.bclc]
        fit = _BCLC_CLASSES[group].get(value, "unknown")
        return fit, f"BCLC {case.bclc} ({group})" if fit == "contradicts" else ""
    if case.stage is None:
        if case.metastatic is False and value in ("metastatic", "non-metastatic", "localised"):
            # "no distant metastases", no stage: the metastatic lines do not apply, the others stay unknown
            return ("contradicts", case.stage_name) if value == "metastatic" else ("fits", "")
        if case.metastatic and value in ("metastatic", "advanced", "non-metastatic", "localised", "resectable"):
            # distant metastases without a stage used (thyroid): metastatic and advanced lines fit
            return ("fits", "") if value in ("metastatic", "advanced") else ("contradicts", case.stage_name)
        return "unknown", ""
    groups = set(range(case.stage[0] // 10, case.stage[1] // 10 + 1))
    if len(groups) > 1:
        fits, against = _CLASS_SETS[value]
        return ("fits", "") if groups <= fits else ("contradicts", case.stage_name) if groups <= against \
            else ("unknown", "")
    group = case.stage[0] // 10
    fits, against = _CLASS_SETS[value]
    if value in ("metastatic", "non-metastatic", "localised", "resectable") and group == 4:
        if case.metastatic is None:  # stage IVA/IVB without "metastatic" (head and neck): may be either
            return "unknown", ""
        return ("fits", "") if case.metastatic == (value == "metastatic") else ("contradicts", case.stage_name)
    if value == "locally advanced" and group == 4 and case.metastatic:
        return "contradicts", case.stage_name
    if group in fits:
        return "fits", ""
    return ("contradicts", case.stage_name) if group in against else ("unknown", "")


def _implied(key: str, r: Mapping[str, str]) -> str:
    return "negative" if key in ("ER", "PR") and r.get("HR") == "negative" else r.get(key, "")


def _fit_receptor(key: str, want: str, r: Mapping[str, str]) -> Fit:
    have = r.get(key)
    if key in ("ER", "PR") and have is None and r.get("HR") == "negative":
        have = "negative"
    if have is None:
        return "unknown"
    if key == "HER2":  # HER2-low is HER2-negative in the classic sense; "HER2-negative" may or may not be low
        # "zero": IHC 0, which is neither positive nor low; a plain "HER2-negative" may be zero or low
        table = {("positive", "positive"): "fits", ("negative", "negative"): "fits", ("low", "low"): "fits",
                 ("negative", "low"): "fits", ("low", "negative"): "unknown", ("negative", "zero"): "fits",
                 ("zero", "zero"): "fits", ("zero", "negative"): "unknown"}
        return table.get((want, have), "contradicts")  # type: ignore[return-value]
    if want == "low":
        return "fits" if have == "low" else "unknown"
    if have == "low":  # ER-low (1-10%) is "low positive": neither clearly positive nor negative for a sentence
        return "unknown"
    return "fits" if want == have else "contradicts"


def _covers(wanted: str, have: str) -> bool:
    """Variant ``wanted`` includes ``have``: the same, or a codon and a substitution at it ("V600" and "V600E")."""
    return wanted == have or (re.fullmatch(r"[A-Z]\d+", wanted) is not None
                              and re.fullmatch(re.escape(wanted) + r"[A-Z]", have) is not None)


def _fit_gene(c: Condition, case: Case) -> tuple[Fit, str]:
    if not c.altered:  # wild-type: every named gene must be wild-type
        hit = [g for g in c.genes if g in case.altered]
        if hit:
            return "contradicts", case.names.get(hit[0], hit[0])
        return ("fits", "") if all(g in case.wild_type for g in c.genes) else ("unknown", "")
    verdicts: list[Fit] = []
    whys: list[str] = []  # one per contradicted gene: a list ("BRCA1, BRCA2 or PALB2") is contradicted by all
    for g in c.genes:  # altered: any of the named genes
        if g in case.altered:
            have = case.altered[g]
            if not c.variants:
                verdicts.append("fits")
            elif not have:
                verdicts.append("unknown")
            elif any(_covers(w, h) for w in c.variants for h in have):
                verdicts.append("fits")
            elif any(_covers(h, w) for w in c.variants for h in have):  # the case names only the codon
                verdicts.append("unknown")
            else:
                verdicts.append("contradicts")
                whys.append(case.names.get(g, g))
        elif g in case.wild_type:
            verdicts.append("contradicts")
            whys.append(case.names.get(g) or f"{g} wild-type/negative")
        else:
            other = [d for d in case.altered if d in DRIVERS and d != g]
            if g in DRIVERS and c.exclusive and other:
                verdicts.append("contradicts")
                whys.append(f"its driver {case.names.get(other[0], other[0])}")
            else:
                verdicts.append("unknown")
    if "fits" in verdicts:
        return "fits", ""
    if all(v == "contradicts" for v in verdicts):
        return "contradicts", ", ".join(dict.fromkeys(whys))
    return "unknown", ""


def _fit_pdl1(c: Condition, case: Case) -> tuple[Fit, str]:
    """Ranges: the case's range inside the sentence's fits, outside it contradicts, overlapping is unknown ("PD-L1
    positive" for a ">= 50%" line). TPS and CPS are different scores: one against the other is unknown."""
    if case.pdl1 is None or c.value and case.pdl1_score and c.value != case.pdl1_score:
        return "unknown", ""
    lo, hi = case.pdl1
    if c.lo <= lo and hi <= c.hi:
        return "fits", ""
    return ("contradicts", case.pdl1_text) if hi < c.lo or lo > c.hi else ("unknown", "")


# A tumour antigen's expression: which case readings fit a sentence's (high is positive; low is positive but not high,
# and positive may not be high, so those are unknown)
_EXPRESSION_FITS = {"positive": {"positive", "high"}, "high": {"high"}, "negative": {"negative"}, "low": {"low"}}
_EXPRESSION_AGAINST = {"positive": {"negative"}, "high": {"negative", "low"}, "negative": {"positive", "high"},
                       "low": {"negative", "high"}}


def _fit_expression(c: Condition, case: Case) -> tuple[Fit, str]:
    said = case.expression.get(c.family)
    if said in _EXPRESSION_FITS[c.value]:
        return "fits", ""
    if said in _EXPRESSION_AGAINST[c.value]:
        return "contradicts", f"{c.family}-{said}"
    return "unknown", ""


def _plain(text: str) -> str:
    """ "Stage I" -> "stage I", "Early tumours" -> "early tumours"; acronyms ("HER2", "TNBC") and names ("Child-Pugh")
    stay as written."""
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if len(text) > 1 and text[1].islower() and first[1:].islower() else text


# Conditions that are not the sentence's own (``_roles``) ("particularly favored in patients with
# triple-negative or HER2-positive disease" is no list of examples: the adverb qualifies the verb, and the
# population is the sentence's own)
_EXAMPLES_RE = re.compile(
    r"\b(?:(?:notably|especially|particularly)(?!\s+(?:\w+ed|useful|important|relevant|appropriate|effective|"
    r"beneficial|helpful|common|suitable|valuable|indicated)\b)|such as|including|e\.g\.)\s", re.IGNORECASE)
_TARGET_RE = re.compile(r"\btest(?:s|ed|ing)?\s+for\s", re.IGNORECASE)
_REGION_END_RE = re.compile(r"[;:.]\s|[;:]|\)|,\s+(?:which|as|and|but|while|whereas)\b|$")
_CLAUSE_SEP_RE = re.compile(r",\s+(?:and|or|while|whereas|but)\s+|;\s+")
_FOR_RE = re.compile(r"([\w/-]+)\)?\s+\(?for\s+(?:[a-z][\w-]*\s+){0,2}$")
_POPULATION_RE = re.compile(r"\)?\s+\(?for\s+(?:patients|people|women|men|adults|individuals|those)\b",
                            re.IGNORECASE)
_OR_FOR_RE = re.compile(r"\bor,?\s+for\s+(?:[a-z][\w-]*\s+){0,2}\Z")  # "... (bevacizumab) or, for RAS wild-type ..."
_THERAPY_WORDS = frozenset("inhibitor inhibitors chemotherapy immunotherapy therapy therapies antibody antibodies "
                           "agent agents conjugate conjugates combination combinations blockade".split())


def _region(text: str, start: int) -> tuple[int, int]:
    m = _REGION_END_RE.search(text, start)
    return start, m.start() if m else len(text)


# Another option beside "<therapy> for <condition>": a list separator before it or after its condition ("endocrine
# therapy, or trastuzumab for HER2-positive disease"; "PARP inhibitors for BRCA carriers, and chemotherapy
# otherwise"). Alone, its condition is the sentence's: "Trastuzumab for HER2-positive disease is standard".
_LIST_SEP_RE = re.compile(r",\s|;|\bor\b")


def _other_option(text: str, start: int, end: int) -> bool:
    return bool(_LIST_SEP_RE.search(text, 0, start) or _LIST_SEP_RE.search(text, end))


def _roles(text: str, found: list[tuple[int, int, Condition]], parallel: bool) -> tuple[list[int], list[int]]:
    """Indices of ``found`` that are the sentence's own conditions (main) and those that only qualify one option
    in a list (options). Dropped altogether: examples ("notably younger patients, TNBC or a family history":
    indications listed for testing advice, not requirements, when two or more are listed) and test targets
    ("tested for ... BRAF alterations": what to look for)."""
    skip: list[tuple[int, int]] = []
    for m in _EXAMPLES_RE.finditer(text):
        a, b = _region(text, m.end())
        if re.search(r",|\bor\b|\band\b", text[a:b]):
            skip.append((a, b))
    for m in _TARGET_RE.finditer(text):  # to the end of the clause, parentheses included
        end = re.compile(r"[;.](?:\s|$)|,\s+(?:which|as|but|while|whereas)\b").search(text, m.end())
        skip.append((m.end(), end.start() if end else len(text)))
    ends = {e for _, e, _ in found}
    main: list[int] = []
    options: list[int] = []
    for k, (a, b, c) in enumerate(found):
        if any(x <= a < y for x, y in skip):
            continue
        if c.family in _STAGE_LIKE:
            main.append(k)
            continue
        # (a) in parentheses right after an option's name: "elacestrant (ESR1 mutation)", "olaparib (for germline
        # BRCA carriers)"; not after a condition: "HER2 amplification (RAS wild-type)" is the sentence's own
        before = text[:a]
        paren = before.rfind("(")
        if paren > before.rfind(")") and paren > 0:
            head = text[:paren].rstrip()
            close = text.find(")", b)
            # an options list's item that is this one option ("mTOR inhibitors (for patients with ...
            # neuroendocrine tumors)."): its parenthesis says whom the whole sentence is for
            alone = close >= 0 and not text[close + 1:].strip(" .;:*") and \
                not re.search(r",|\bor\b|\band\b|\+", head)
            if head and (head[-1].isalnum() or head[-1] in "-/") and len(head) not in ends and not alone:
                options.append(k)
                continue
        # (b) "<therapy> for <condition>" inside a list of options: "pembrolizumab for PD-L1-positive tumours",
        # "PARP inhibitors for germline BRCA carriers" (not "is used for ...", not in a clause-by-clause sentence)
        # "... chemotherapy for patients with HER2-negative ... disease was evaluated" names the population the
        # whole sentence is about, not one option's
        f = _FOR_RE.search(before)
        if f and _POPULATION_RE.match(before, f.end(1)):
            f = None
        if not parallel and (_OR_FOR_RE.search(before) or f and (f.group(1).lower() in _THERAPY_WORDS
                                                                   or drug_names(f.group(1)))
                             and _other_option(text, f.start(), b)):
                options.append(k)
                continue
        main.append(k)
    return main, options


def _clauses(text: str, found: list[tuple[int, int, Condition]]) -> list[tuple[int, int]]:
    """Coordinated clauses (", and" / "; " / ", while" ...) of at least three words besides their conditions."""
    cuts = [0] + [x for m in _CLAUSE_SEP_RE.finditer(text) for x in (m.start(), m.end())] + [len(text)]
    parts = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]
    out: list[tuple[int, int]] = []
    for a, b in parts:
        rest = re.sub(r"\([^)]*\)", " ", "".join(
            ch if not any(x <= a + i < y for x, y, _ in found) else " " for i, ch in enumerate(text[a:b])))
        if out and _last_alternative(text, found, out[-1], a):
            out[-1] = (out[-1][0], b)
        elif len(re.findall(r"[A-Za-z][\w/-]*", rest)) >= 3 or not out:
            out.append((a, b))
        else:
            out[-1] = (out[-1][0], b)  # a list item ("and triple-negative"), not a clause: joins the one before
    return out


# the start of a list's last item after ", or": "stage M1 status ...", "metastatic biliary tract cancer"
_ITEM_START_RE = re.compile(r"(?:(?:an?|the|stage|with|those\s+with|patients\s+with)\s+)?", re.IGNORECASE)


def _last_alternative(text: str, found: list[tuple[int, int, Condition]], before: tuple[int, int], start: int
                      ) -> bool:
    """The part from ``start`` is a list's last item, not a clause: it follows ", or" and opens with a condition of a
    family the part ``before`` states ("... with previously untreated and unresectable locally advanced, recurrent,
    or metastatic biliary tract cancer"; "stage III disease or higher, regional lymph node metastases, or stage M1
    status with no evidence of disease after resection"). Judged as clauses, the first had ruled out TOPAZ-1 for a
    metastatic case and the second KEYNOTE-564 for a resected one."""
    if not re.search(r",\s+or\s+\Z", text[:start]):
        return False
    lead = _ITEM_START_RE.match(text, start)
    first = next((c for a, _, c in found if a == (lead.end() if lead else start)), None)
    return first is not None and any(before[0] <= a < before[1] and c.family == first.family for a, _, c in found)


# the disease's extent, not a subgroup; the line of therapy ("nivolumab for previously treated patients" is the
# sentence's own condition, not one option's); and a risk group ("ATRA plus chemotherapy, followed by ATO-based
# consolidation therapy for high-risk disease": the item's population)
_STAGE_LIKE = ("stage", "setting", "resection", "surgery", "invasion", "line", "fitness", "age", "menopause", "risk",
               "liver", *STATUSES)


# Line-of-therapy headings ("Second-line systemic therapy", "Treatment of Progressive Stage IV ... NSCLC",
# "EGFR-directed therapy after first-line chemotherapy" (later, though it says first-line), "Treatment Options for
# Newly Diagnosed ... (First-Line Therapy)"). Not "relapsed"/"recurrent" alone (first-line treatment of recurrent
# disease), nor "refractory" alone ("Refractory anemia" is a disease).
_LATER_SECTION_RE = re.compile(
    r"\b(?:second|third|fourth|later|subsequent)(?:-?\s+(?:and|or|to)\s+(?:second|third|fourth|later|subsequent))?"
    r"[- ]line\b|\bprogressive (?:stage|disease)\b|\bafter (?:first[- ]line|"
    r"progression|prior)\b|\bpreviously treated\b|\bpretreated\b|\b(?:platinum|chemotherapy)[- ]refractory\b|"
    r"\brefractory to\b|\b(?:relapsed|recurrent)\s+(?:or|and|/)\s+refractory\b|"
    r"\brefractory\s+(?:or|and|/)\s+(?:relapsed|recurrent)\b", re.IGNORECASE)
_FIRST_SECTION_RE = re.compile(r"\bfirst[- ]line\b|\bnewly diagnosed\b|\b(?:previously )?untreated\b|"
                               r"\bfront[- ]?line\b|\btreatment[- ]na[iï]ve\b|"
                               r"\binitial\s+(?:TKI|systemic|targeted)\s+therapy\b", re.IGNORECASE)


# The line of therapy a sentence states (family "line"; the sentence's own, so it overrides its section's). PDQ
# writes it in the sentence ("in patients whose disease progressed after first-line chemotherapy", "for patients
# who had received prior anti-PD-1 therapy", "as second-line therapy", "in previously untreated patients") or as a
# list item's label ("1. **Previously treated patients.** One study included ...": ``sentence_labels``).
# Later: "second-/third-/later-line", "previously treated", "pretreated", "progressed on/after/during ..." and
# "progression on/after ..." (not after surgery, resection, radiation or (neo)adjuvant therapy: no line of systemic
# therapy), "after failure of", "refractory to", "platinum-refractory", "relapsed or refractory", "prior/previous
# <systemic therapy>" (not "prior adjuvant therapy", "prior surgery"), "previously received", and "first-line" after
# "after", "following", "progressed on", "failure of", "prior" ("after first-line chemotherapy" is later). First:
# "first-line", "frontline", "previously untreated", "treatment-naive", "untreated patients"/"untreated for
# metastatic disease" (not "untreated brain metastases": a lesion, not a patient), "newly diagnosed", and a negated
# prior therapy ("no prior therapy", "had not received prior systemic therapy", "not previously treated").
# Not lines: "relapsed"/"recurrent" alone (first-line treatment of recurrent disease), a bare "after" ("after
# resection"), "adjuvant". Trial narrative is read as any sentence (a later-line trial's population and results do
# not apply to an untreated case; a first-line trial's fit it), except a sentence about eligibility or a share of
# the patients ("one previous treatment was allowed", "patients who had received prior therapy were excluded",
# "53% had received prior therapy": a mixed or other population), which states no line; nor does a line after
# "regardless of" / "with or without".
_NOT_A_LINE_AFTER = (r"(?!\s+(?:(?:with|by)\s+)?(?:(?:the|an?|initial|primary|their|prior)\s+)?(?:surgery|surgical|"
                     r"resection|radiation|radiotherapy|EBRT|RT|SBRT|chemoradiation|chemoradiotherapy|local|definitive|"
                     r"curative|(?:neo-?)?adjuvant|cystectomy|prostatectomy|transplant\w*)\b)")
_SYSTEMIC = (r"(?:therapy|therapies|treatments?|chemotherapy|chemotherapies|regimens?|lines?|immunotherapy|"
             r"inhibitors?|TKIs?|agents?|anti-PD-?1|anti-PD-?L1|anti-CTLA-?4)")
_LINE_LATER_RE = re.compile(
    r"\b(?:second|third|fourth|later|subsequent)(?:-?\s+(?:and|or|to)\s+(?:second|third|fourth|later|subsequent))?"
    r"[- ]line\b|"
    r"\b(?:previously|heavily|extensively)[- ]treated\b" + _NOT_A_LINE_AFTER +
    r"(?!\s+(?:[\w-]+\s+)?(?:metastases|lesions)\b)|\b(?:heavily[- ])?pre-?treated\b|"
    r"(?<!time to )\bprogress(?:ed|ion|ing)\s+(?:of\s+(?:the\s+|their\s+)?disease\s+)?"
    r"(?:on|after|during|following|despite|through|while\s+(?:on|receiving))\b"
    + _NOT_A_LINE_AFTER + r"|"
    r"\bafter\s+(?:the\s+)?failure\s+of\b|\bfailed\s+(?:prior|previous|first-line)\b|"
    r"(?<!relatively )(?<!inherently )(?<!generally )\brefractory\s+to\b|"
    r"\b(?:platinum|chemotherapy|chemo|cisplatin|oxaliplatin|fluoropyrimidine|taxane|anthracycline|imatinib|"
    r"sorafenib|rituximab|lenalidomide|bortezomib|multiply|double|triple)[- ]refractory\b|"
    r"\brelapsed\s*(?:/|or|and)\s*refractory\b|\brefractory\s*(?:/|or|and)\s*relapsed\b|"
    r"\b(?:disease\s+)?relapse\s+(?:during\s+or\s+after|during(?!\s+or\s+after)|after|within\s+\d+\s+months\s+of)\b"
    + _NOT_A_LINE_AFTER + r"|"
    r"\b(?:prior|previous)\s+(?!to\b)"
    r"(?:(?!(?:neo-?)?adjuvant\b|perioperative\b|surgical\b|local\b|radiation\b)[\w-]+\s+){0,3}?" + _SYSTEMIC
    + r"\b(?!\s+for\s+(?:an?\s+|another\s+|childhood\s+|(?:a\s+)?prior\s+)?(?:cancer|malignanc))|"
    r"\bpreviously\s+received\b", re.IGNORECASE)
_LINE_FIRST_RE = re.compile(
    r"\bfirst[- ]line\b|\bfirst-(?=\s*(?:and|or|/)\s*(?:second|later)[- ]line)|\bfront[- ]?line\b|"
    r"\bpreviously\s+untreated\b|\b(?:treatment|therapy|chemotherapy|chemo|systemic|immunotherapy|TKI)[- ]na[iï]ve\b|"
    r"\buntreated\s+for\s+(?=(?:metastatic|advanced|recurrent|unresectable)\b)|"
    r"\buntreated(?=,?\s+(?:(?!metasta|lesion|brain|CNS)[\w-]+,?\s+){0,3}?(?:patients|disease|cancers?|carcinomas?|"
    r"melanoma|NSCLC|tumou?rs)\b)|\bnewly\s+diagnosed\b", re.IGNORECASE)
# A first-line mention after one of these is a later line ("after first-line chemotherapy", "progressed on
# first-line immunotherapy", "failure of first-line therapy", "prior first-line treatment"; not "who received
# first-line ..."). Not across "disease control on" / "response to" nor in a sentence about maintenance ("olaparib
# maintenance after disease control on first-line platinum" belongs to the first line).
_AFTER_FIRST_RE = re.compile(
    r"\b(?:after|following|beyond|failure\s+of|fail(?:s|ed|ing)?|"
    r"progress(?:ed|ion|ing)\s+(?:on|after|during|following)|refractory\s+to|resistant\s+to|prior|previous|"
    r"intolerant\s+(?:of|to)|previously\s+treated\s+with)"
    r"(?:\s+(?!control\b|response\b|responding\b|completion\b|induction\b|stable\b)[\w-]+){0,3}?\s+\Z",
    re.IGNORECASE)
_MAINTENANCE_RE = re.compile(r"\bmaintenance\b", re.IGNORECASE)
# a progression after a first-line mention in the same clause: "responded to first-line chemotherapy but had their
# disease progress", "received first-line platinum and then relapsed"
_THEN_PROGRESSED_RE = re.compile(r"[^.;]{0,60}?\b(?:but|and|then|subsequently|later|before)\b[^.;]{0,40}?"
                                 r"\b(?:progress(?:ed|ion|ing)?|relaps(?:ed|e)|recurred)\b(?![- ]free)", re.IGNORECASE)
# "no prior therapy", "had not received previous chemotherapy", "not previously treated"; not "did not respond to
# previous imatinib" (a later line)
_LINE_NEGATED_RE = re.compile(r"\b(?:(?:no|without|nor)\s+|(?:not|never)\s+(?:yet\s+)?(?:been\s+|had\s+|received\s+|"
                              r"undergone\s+)?)(?:any\s+)?\Z", re.IGNORECASE)
# Eligibility ("was allowed", "were excluded"; not "cisplatin-ineligible", a patient's fitness) or a share of the
# patients ("53% had received", "(76%) had progressed", "zero to one prior therapy"): no line read in the sentence
_LINE_SKIP_RE = re.compile(
    r"\b(?:allowed|permitted|excluded|exclusion|did\s+not\s+enroll)\b|"
    r"(?<![\w-])(?<!cisplatin )(?<!platinum )(?<!transplant )(?:in)?eligib(?:le|ility)\b|"
    r"\b\d+(?:\.\d+)?\s?%\)?\s+(?:of\s+(?:the\s+|all\s+)?(?:patients|participants)\s+)?"
    r"(?:had|have|were|was|received)\b|\bby\s+(?:approximately\s+)?\d+(?:\.\d+)?\s?%\s+of\b|"
    r"\b(?:zero|0)\s*(?:to|or|-)\s*(?:one|two|1|2)\s+(?:prior|previous)\b", re.IGNORECASE)


# what every eligible patient had ("Eligible patients had (1) disease progression during initial therapy for
# metastatic breast cancer ..., or (2) disease relapse during or after adjuvant therapy ...", postMONARCH): the
# population's line, not a share of it (a QA pass's untreated case was released that trial's design)
_ELIGIBLE_HAD_RE = re.compile(r"^\W*(?:all\s+)?eligible\s+patients\s+(?:had|were\s+required\s+to\s+have|must\s+have)\b",
                              re.IGNORECASE)


def _line_spans(text: str) -> list[tuple[int, int, Condition]]:
    """The line of therapy ``text`` states, as conditions of family "line" ("first" / "later"); both are
    alternatives ("first-line or for previously treated patients")."""
    skip = _LINE_SKIP_RE.search(text)
    if skip and not (skip.group(0).lower() == "eligible" and _ELIGIBLE_HAD_RE.match(text)):
        return []
    out: list[tuple[int, int, Condition]] = []
    for m in _LINE_LATER_RE.finditer(text):
        before = text[max(0, m.start() - 40):m.start()]
        if EITHER_WAY_RE.search(before):
            continue  # "regardless of prior therapy"
        if _LINE_NEGATED_RE.search(before):
            # "no prior therapy", "had not received prior systemic therapy": untreated; a negated progression or
            # second line says nothing
            if re.match(r"(?:prior|previous)", m.group(0), re.IGNORECASE):
                out.append((m.start(), m.end(), Condition("line", "line", text[m.start():m.end()], value="first")))
            continue
        out.append((m.start(), m.end(), Condition("line", "line", m.group(0), value="later")))
    for m in _LINE_FIRST_RE.finditer(text):
        if any(a <= m.start() < b for a, b, _ in out) or EITHER_WAY_RE.search(text, max(0, m.start() - 40), m.start()):
            continue
        cue = None if _MAINTENANCE_RE.search(text) else \
            _AFTER_FIRST_RE.search(text, max(0, m.start() - 60), m.start())
        if cue is None and (then := _THEN_PROGRESSED_RE.match(text, m.end())):
            # "patients who responded to first-line chemotherapy but had their disease progress": a later line
            out = [x for x in out if not (m.start() <= x[0] < then.end())]
            out.append((m.start(), then.end(), Condition("line", "line", text[m.start():then.end()].strip(),
                                                         value="later")))
            continue
        if cue and _LINE_NEGATED_RE.search(text, max(0, cue.start() - 30), cue.start()):
            cue = None  # "whose cancer had not progressed after 16 weeks of first-line platinum": the first line
        start = cue.start() if cue else m.start()  # "after first-line chemotherapy" is read, and shown, whole
        out = [x for x in out if not (start <= x[0] < m.end())]  # "progressed after" is in it
        out.append((start, m.end(), Condition("line", "line", text[start:m.end()].strip(),
                                              value="later" if cue else "first")))
    return sorted(out, key=lambda x: x[0])


# A guideline's section for a stage ("Treatment of Stage IV Prostate Cancer", "... of Extensive-Stage SCLC", "...
# of Aggressive, Noncontiguous Stage II/III/IV B-Cell Non-Hodgkin Lymphoma", "... of Advanced-Stage Ovarian ...")
# that names no recurrence or later disease: PDQ treats recurrent and progressive disease in its own section, so
# this one is about the initial treatment
_STAGE_SECTION_RE = re.compile(r"^Treatment\s+(?:of|Options?\s+for)\b.*\bstages?\b", re.IGNORECASE)
_NOT_INITIAL_RE = re.compile(r"\b(?:recurr\w*|relaps\w*|progress\w*|refractory|persistent|resistant)\b",
                             re.IGNORECASE)


def _line_condition(parts: Sequence[str]) -> Condition | None:
    """The line of therapy the deepest heading that names one states (family "section:line"). A list's lead-in
    (a part ending in ":", ``sentence_context``) is read as a label is (family "label:line"): judged only for a
    case that states its own line, as ``assess`` judges a label's. The audit's glioblastoma and CLL cases, whose
    notes name no line, had their options lists ("Treatment options for patients with newly diagnosed glioblastoma
    include:", "The following regimens are considered first-line treatment approaches ...:") offered last.
    Without one, a stage's section implies the first line (``implied``), judged only for a case past its first
    line: a QA pass's castration-resistant case after abiraterone and docetaxel was answered from "Treatment of
    Stage IV Prostate Cancer" ("The cornerstone of hormonal therapy ... is medical or surgical castration"), an
    extensive-stage SCLC case after platinum-etoposide-atezolizumab was offered first-line combinations."""
    for p in reversed(parts):
        value = "later" if _LATER_SECTION_RE.search(p) else "first" if _FIRST_SECTION_RE.search(p) else None
        if value:
            family = "label:line" if p.rstrip().endswith(":") else "section:line"
            return Condition(family=family, kind="line", text=p, value=value)
    if parts and _STAGE_SECTION_RE.search(parts[0]) and not _NOT_INITIAL_RE.search(parts[0]):
        return Condition(family="section:line", kind="line", text=parts[0], value="first", implied=True)
    return None


# A treatment section for recurrent disease only ("Treatment of Recurrent Bladder Cancer", "Treatment Options for
# Relapsed CML", or a heading that names the disease so under one: "Treatment Options for Papillary and Follicular
# Thyroid Cancer > Recurrent papillary and follicular thyroid cancer"), not one that lists it among alternatives
# ("Newly Diagnosed Stage IV, Relapsed, and Recurrent NSCLC", "Stage IV and Recurrent Colon Cancer", "Metastatic or
# Recurrent ...", "Relapsed or Refractory ...") nor another kind of section ("Locoregional recurrence", "Detection
# of Recurrence"): a new diagnosis contradicts it, a case that states neither is qualified.
_RECURRENT_SECTION_RE = re.compile(
    r"^Treatment\b.*(?:\b(?:recurrent|relapsed)\b|\b(?:for|of)\s+(?:[\w-]+\s+)?(?:recurrence|relapse)\b)|"
    r"^(?:Recurrent|Relapsed)\b",
    re.IGNORECASE)
_RECURRENT_ALTERNATIVES_RE = re.compile(
    r"\bstage\b|(?<!non)metasta|\badvanced\b|\bprogressive\b|\bnewly diagnosed\b|\bfirst[- ]line\b|"
    r"\bunresectable\b|\binoperable\b|\bpersistent\b|\brefractory\b|\bchemoresistant\b", re.IGNORECASE)


def _recurrence_condition(parts: Sequence[str]) -> Condition | None:
    """The recurrence a treatment section is for (family "section:recurrence"); "Treatment of Refractory or
    Recurrent AML" is for disease that recurred or resisted its first treatment (value "refractory"): a newly
    diagnosed case that has not been treated yet is neither (a QA pass's new AML case was released its option)."""
    for p in parts:
        if _RECURRENT_SECTION_RE.search(p) and not _RECURRENT_ALTERNATIVES_RE.search(p):
            return Condition(family="section:recurrence", kind="recurrence", text=p, value="recurrent")
        rest = _REFRACTORY_SECTION_RE.sub("", p)
        if rest != p and not _RECURRENT_ALTERNATIVES_RE.search(rest):
            return Condition(family="section:recurrence", kind="recurrence", text=p, value="refractory")
    return None


_REFRACTORY_SECTION_RE = re.compile(r"^Treatment\b.*\b(?:refractory\s+(?:or|and|/)\s+(?:recurrent|relapsed)|"
                                    r"(?:recurrent|relapsed)\s+(?:or|and|/)\s+refractory)\b", re.IGNORECASE)


# AML's treatment sections that name no APL ("Treatment of Newly Diagnosed AML", "Treatment of AML in Remission",
# "Treatment of Refractory or Recurrent AML") are for AML other than APL (family "section:subsite")
NOT_APL = "AML other than APL"
_AML_TREATMENT_RE = re.compile(r"^Treatment\s+(?:of|Options?\s+for)\b.*(?:\bAML\b|\bacute\s+myeloid\b)", re.IGNORECASE)


def section_conditions(section: str) -> list[Condition]:
    """The conditions a passage's section path names, each with the heading that names it as its text. Stage and
    setting ("Treatment by Stage > Advanced or Metastatic Disease": advanced or metastatic) are one family of
    alternatives, "section". Every other condition keeps its family as "section:<family>" ("Resected/Resectable",
    "HER2-Positive Breast Cancer", "Germline BRCA1 and BRCA2 Variants", "for patients with EGFR variants"); a
    receptor keeps its own, so "HER2-Negative Hormone Receptor-Positive" requires both. Markdown emphasis
    ("*BRCA1*") is ignored. [] when the path names none."""
    parts = [re.sub(r"^#+\s*", "", part.strip()).replace("*", "") for part in (section or "").split(" > ")]
    out: list[Condition] = []
    for depth, p in enumerate(parts):
        for c in conditions(p):
            if c.kind == "line" or c.kind == "age":
                # a heading's line is read by _line_condition below; its age is one alternative of several
                # ("Less-fit patients with significant comorbidities or advanced age (aged ≥80 years)")
                continue
            if c.family in ("stage", "setting"):
                out.append(replace(c, family="section", text=p, heading=(0, depth)))
            else:
                key = f":{c.receptors[0][0]}" if c.kind == "receptor" and len(c.receptors) == 1 else ""
                out.append(replace(c, family=f"section:{c.family}{key}", text=p))
    # a site within the oral cavity or larynx ("... Small Lesions of the Floor of the Mouth", "Supraglottis"):
    # alternatives when a heading names two ("Upper Gingiva and Hard Palate")
    out += [Condition(family="section:subsite", kind="subsite", text=p, value=site) for p in parts
            for site in subsite_readings(p)]
    # a heading for unresectable disease ("Treatment of Unresectable Stage III, Stage IV, and Recurrent Melanoma"):
    # not for a case whose tumour was resected (a QA pass's resected stage IIIC melanoma was offered its items)
    out += [Condition(family="section:unresectable", kind="unresectable", text=p) for p in parts[:1]
            if _CASE_UNRESECTABLE_RE.search(p)]
    if not any(c.value == "APL" for c in out):
        out += [Condition(family="section:subsite", kind="subsite", text=p, value=NOT_APL) for p in parts[:1]
                if _AML_TREATMENT_RE.search(p)]
    return out + [c for c in (_line_condition(parts), _recurrence_condition(parts)) if c]


def _inherited(sections: Sequence[str], own: set[str]) -> list[Condition]:
    """The section conditions a sentence inherits: a family its passage's section names and the sentence itself
    does not (a sentence's own "HER2-positive" or "stage I" overrides its section's). For a claim citing several
    passages, only a family every one of their sections names, as alternatives across them."""
    per = [[replace(c, heading=(i, c.heading[1])) for c in section_conditions(sec)] for i, sec in enumerate(sections)]
    # A sentence's own setting ("adjuvant", "postoperative") speaks for it under a section named by its extent in
    # words ("Advanced or Metastatic Disease"), not under a stage group ("Treatment of Stage I Bladder Cancer": the
    # item "TUR ... followed by an immediate postoperative instillation ..." is still a stage I option).
    if "stage" not in own and own & {"setting", "resection"}:
        per = [[c for c in cs if c.family != "section" or c.kind == "stage"] for cs in per]
    out: list[Condition] = []
    for family in dict.fromkeys(c.family for cs in per for c in cs):
        base = family.split(":")[1] if ":" in family else "stage"
        own_parts = {f for o in own for f in o.split("+")}  # "BRCA+PALB2" states BRCA
        stated = "stage" in own if family == "section" else bool(set(base.split("+")) & own_parts)
        if not stated and all(any(c.family == family for c in cs) for cs in per):
            out += [c for cs in per for c in cs if c.family == family]
    return out


Judged = tuple[Condition, Fit, str]


def _section_verdict(entries: list[Judged]) -> tuple[Fit, list[Judged]]:
    """The stage or setting of a section path, and the entries that decide it. The headings of one path hold
    together, a deeper one narrowing the one above ("Treatment of Stage II Colon Cancer > Adjuvant chemotherapy" is
    stage II, not "stage II or resected"); a heading's own readings are alternatives, and so are the paths of the
    passages a claim cites."""
    paths: dict[int, dict[int, list[Judged]]] = {}
    for e in entries:
        paths.setdefault(e[0].heading[0], {}).setdefault(e[0].heading[1], []).append(e)
    verdicts: list[tuple[Fit, list[Judged]]] = []
    for headings in paths.values():
        per = {d: ("fits" if any(f == "fits" for _, f, _ in es) else "contradicts"
                   if all(f == "contradicts" for _, f, _ in es) else "unknown") for d, es in headings.items()}
        bad = [e for d, es in headings.items() if per[d] == "contradicts" for e in es]
        unsure = [e for d, es in headings.items() if per[d] == "unknown" for e in es]
        verdicts.append(("contradicts", bad) if bad else ("unknown", unsure) if unsure else ("fits", []))
    if any(v == "fits" for v, _ in verdicts):
        return "fits", []
    if all(v == "contradicts" for v, _ in verdicts):
        return "contradicts", [e for _, es in verdicts for e in es]
    return "unknown", [e for v, es in verdicts if v == "unknown" for e in es]


def _judge(items: list[Condition], case: Case) -> tuple[list[str], list[str]]:
    """(contradicted, unknown) reasons of conditions combined as families (alternatives within, conjunction across;
    a section's stage or setting by ``_section_verdict``)."""
    families: dict[str, list[Judged]] = {}
    for c in items:
        fit, why = _fit(c, case)
        families.setdefault(c.family, []).append((c, fit, why))
    contradicted: list[str] = []
    unknown: list[str] = []
    for family, entries in families.items():
        if family == "section":
            verdict, entries = _section_verdict(entries)
            if verdict == "fits":
                continue
        fits = [f for _, f, _ in entries]
        if "fits" in fits:
            continue
        texts = list(dict.fromkeys(c.text if c.family.startswith("section") else _plain(c.text).lower()
                                   if c.family == "setting" else _plain(c.text) for c, f, _ in entries))
        if all(f == "contradicts" for f in fits):
            why = entries[0][2]
            if family == "setting":
                contradicted.append(f"states the early, operable setting ({', '.join(texts)}); the case is {why}")
            elif family == "resection":
                contradicted.append(f"states resected or resectable disease; the case is {why}")
            elif family == "surgery":
                contradicted.append(f"names surgery as the treatment ({', '.join(texts)}); the case is {why}")
            elif family == "menopause":
                contradicted.append(f"states a menopausal status ({', '.join(texts)}); the case is {why}")
            elif family == "line":
                which = "a first" if entries[0][0].value == "first" else "a later"
                contradicted.append(f"states {which} line of therapy ({', '.join(texts)}); the case is {why}")
            elif family == "label:line":
                which = "a first" if entries[0][0].value == "first" else "a later"
                contradicted.append(f"comes under the label \u201c{entries[0][0].text}\u201d ({which} line of "
                                    f"therapy); the case is {why}")
            elif family == "section:line" and all(c.implied for c, _, _ in entries):
                contradicted.append(f"comes from the section \u201c{' > '.join(texts)}\u201d, about a stage's initial "
                                    f"treatment; the case is {why}")
            elif family == "section" and all(t.startswith(STAGE_PART) for t in texts):
                contradicted.append(f"{texts[0]} (the case is {why})")
            elif family == "section:subsite" and all(t.startswith(SITE_PART) for t in texts):
                contradicted.append(f"{texts[0]} (the case's site is {why})")
            elif family.startswith("section"):
                whose = f"'s driver is {why[11:]}" if why.startswith("its driver ") else f" is {why}"
                contradicted.append(f"comes from the section \u201c{' > '.join(texts)}\u201d; the case{whose}")
            else:
                contradicted += [f"states {_plain(c.text)}; the case"
                                 + (f"'s driver is {w[11:]}" if w.startswith("its driver ") else f" is {w}")
                                 for c, _, w in entries]
        else:
            named = [c.text if family.startswith("section") else _plain(c.text) for c, f, _ in entries
                     if f == "unknown"]
            label = " or ".join(dict.fromkeys(named))
            if family in ("line", "section:line", "label:line") and case.line == "later":
                # the case progressed, but not (it says) on a first line for advanced disease: perhaps on adjuvant
                # therapy. Not "(not stated for this case)" about a line the case states
                where = f"its section \u201c{' > '.join(dict.fromkeys(named))}\u201d" if family == "section:line" \
                    else f"its label \u201c{entries[0][0].text}\u201d" if family == "label:line" \
                    else f"it says \u201c{label}\u201d"
                unknown.append(f"no first line of therapy for advanced disease was given yet ({where})")
                continue
            if family == "menopause":
                label = next((w for _, f, w in entries if f == "unknown" and w), label)
            elif family == "setting":
                label = f"early, operable setting ({label.lower()})"
            elif family == "section":
                label = f"the setting of its section \u201c{' > '.join(dict.fromkeys(named))}\u201d"
            elif family == "section:recurrence":
                label = f"recurrent disease, as its section \u201c{' > '.join(dict.fromkeys(named))}\u201d"
            elif family == "section:line":
                label = f"the line of therapy of its section \u201c{' > '.join(dict.fromkeys(named))}\u201d"
            elif family == "line":
                label = f"the line of therapy it states ({label})"
            elif family == "prior":
                label = f"the case had what its population had before ({label})"
            elif family == "label:line":
                label = f"the line of therapy of its label \u201c{entries[0][0].text}\u201d"
            elif family.startswith("section"):
                label = f"the subgroup of its section \u201c{' > '.join(dict.fromkeys(named))}\u201d"
            unknown.append(label)
    return list(dict.fromkeys(contradicted)), unknown


# Endocrine (hormone) therapy of breast cancer: judged against a case that states hormone receptor-negative disease
# only (a prostate case states no receptor, and its "hormone therapy" is androgen deprivation)
_ENDOCRINE_RE = re.compile(
    r"\b(?:hormone|hormonal|endocrine)\s+therap\w*|\btamoxifen\b|\baromatase\s+inhibitors?\b|\b(?:letrozole|"
    r"anastrozole|exemestane|fulvestrant|elacestrant|palbociclib|ribociclib|abemaciclib)\b|\bCDK4/6\b|"
    r"\bovarian\s+(?:function\s+)?suppression\b", re.IGNORECASE)


# Treatments a case's fitness rules out even where the sentence does not say whom they are for: cisplatin (unless
# carboplatin is named beside it, the substitute), intensive induction or combination chemotherapy ("7 + 3", an
# anthracycline, "intensive induction chemotherapy", FOLFIRINOX) and a stem cell transplant or high-dose therapy
_NEEDS_FITNESS: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    ("cisplatin", re.compile(r"\bcisplatin\b", re.IGNORECASE), re.compile(r"\bcarboplatin\b", re.IGNORECASE)),
    ("intensive", re.compile(r"\b7\s*\+\s*3\b|\banthracyclines?\b|\bdaunorubicin\b|\bidarubicin\b|\bCPX-351\b|"
                             r"\b(?:m|modified\s+)?FOLFIRINOX\b|\bFOLFOXIRI\b|\bNALIRIFOX\b|"
                             r"\bintensive\s+(?:induction|remission[- ]induction|chemotherapy)\b", re.IGNORECASE),
     None),
    ("transplant", re.compile(r"\b(?:autologous|allogeneic)\s+(?:[\w-]+\s+){0,3}?(?:transplant\w*|HCT|SCT|HSCT)\b|"
                              r"\btransplant(?:s|ation)?\b|\b(?:ASCT|HSCT|allo-?HCT|auto-?HCT)\b|"
                              r"\bhigh[- ]dose\s+(?:chemotherapy|melphalan|therapy)\b", re.IGNORECASE), None),
)


# Radioactive iodine as a treatment ("RAI", "131I", "radioiodine therapy"), for an iodine-refractory case
_RAI_RE = re.compile(r"\b(?:radioactive[- ]iodine|radio-?iodine|RAI|I-?131|131I)\b(?![- ]?(?:refractory|resistant|"
                     r"non-?avid|sensitive|avid))", re.IGNORECASE)


# A treatment named as what is set aside ("for older patients with AML who decline traditional 7 + 3 induction",
# "Unlike a succinct course of 7 + 3 induction, these less-intensive therapies ...") is not offered
_SET_ASIDE_RE = re.compile(
    r"\b(?:declin\w*|refus\w*|unlike|instead\s+of|rather\s+than|in\s+place\s+of|alternatives?\s+to|unfit\s+for|"
    r"ineligible\s+for|too\s+frail\s+for|not\s+(?:\w+\s+)?(?:candidates?|eligible|fit|suitable)\s+for|cannot\s+"
    r"(?:tolerate|receive|undergo)|unable\s+to\s+(?:tolerate|receive|undergo))\s+(?:[\w-]+\s+){0,4}\Z", re.IGNORECASE)


def assess(text: str, case: Case, sections: Sequence[str] = (), label: str = "") -> CaseFit:
    """Whether the sentence's conditions apply to the case (see the module docstring for the rules). ``sections``:
    the section paths of the passages the sentence comes from (one for a passage sentence, the cited passages'
    for a claim); their stage or setting is inherited when the sentence states none. ``label``: the label of the
    list item or paragraph the sentence is under ("Previously treated patients.", ``sentence_labels``); its line
    of therapy is inherited when the sentence states none (and overrides the section's)."""
    found = spans(text)
    clauses = _clauses(text, found)
    by_clause = [[k for k, (a, _, _) in enumerate(found) if x <= a < y] for x, y in clauses]
    families = [{found[k][2].family for k in ks} for ks in by_clause]
    parallel = any(families[i] & families[j] for i in range(len(families)) for j in range(i + 1, len(families))
                   if by_clause[i] and by_clause[j])
    main, options = _roles(text, found, parallel)
    own = {found[k][2].family for k in main}
    # the label's line, closer to the sentence than its section's: inherited when the sentence states none
    labelled = [] if "line" in own or not label else \
        [replace(c, family="label:line", text=" ".join(label.split())) for _, _, c in _line_spans(label)]
    inherited = _inherited(sections, own | ({"line"} if labelled else set())) if sections else []
    inherited += labelled
    # A condition the case does not state, stage included, is qualified ("applies if stage III"), not dropped.
    groups = ([[found[k][2] for k in ks if k in main] for ks in by_clause] if parallel
              else [[found[k][2] for k in main]])
    if case.line is None:
        # the line a sentence or its label states is judged only for a case that states its own: many notes name
        # none, and a qualifier on every "first-line ..." / "after prior therapy" sentence would only push them down
        # the list ("MSI-H/dMMR: first-line pembrolizumab" still fits an MSI-H case). A heading's line still qualifies.
        groups = [[c for c in g if c.family not in ("line", "label:line")] for g in groups]
        inherited = [c for c in inherited if c.family != "label:line"]
    if not (case.first_line_done or case.recurrent):
        # a stage section's initial treatment rules out only a case past its first line or a recurrence
        inherited = [c for c in inherited if not c.implied]
    # likewise fitness ("for patients who are not candidates for intensive chemotherapy") and age ("older
    # patients"): judged for a case that states its own; a heading's fitness ("Less-fit patients ...") still qualifies
    unstated = {f for f, known in (("fitness", case.fitness_stated), ("age", case.age is not None),
                                   ("menopause", case.menopause is not None or case.sex == "male"),
                                   ("performance", case.performance is not None),
                                   ("operation", case.operation is not None), ("risk", bool(case.risk)),
                                   ("liver", case.child_pugh is not None),
                                   *((name, name in case.statuses) for name in STATUSES))
                if not known}
    # likewise a status (castration, HPV, platinum), the heading's too
    inherited = [c for c in inherited if not (c.family.startswith("section:") and c.family[8:] in STATUSES
                                              and c.family[8:] not in case.statuses)]
    if not case.risk:
        # a risk group, the sentence's or its heading's, is judged only for a case that states one: PDQ writes
        # "high-risk" in many places, and most notes name no risk group
        inherited = [c for c in inherited if c.family != "section:risk"]
    if not case.unresectable:  # surgery as the treatment is judged only against unresectability, never a fit
        unstated.add("surgery")
        inherited = [c for c in inherited if c.family != "surgery"]
    if unstated:
        # a fitness the treatment history shows (``_case_fitness``) is judged for its own target only
        groups = [[c for c in g if c.family not in unstated
                   or c.family == "fitness" and c.value.split(":")[0] in case.fitness] for g in groups]
    # a Child-Pugh class that fits says no more than that the trial had the usual patients (PDQ's HCC trials were of
    # class A): it rules out, it does not put "Eligibility criteria included intact liver function (Child-Pugh
    # class A) ..." before the trials' own sentences for a class A case
    groups = [[c for c in g if c.kind != "liver" or _fit(c, case)[0] != "fits"] for g in groups]
    groups = [g for g in groups if g]
    contradicted: list[str] = []
    unknown: list[str] = []  # alternatives: the clauses' unstated conditions
    for g in groups:
        bad, unsure = _judge(g, case)
        contradicted += bad
        if unsure:
            unknown.append(" and ".join(unsure))
    if inherited:  # the section's and label's conditions hold for every clause: "A and S", "(A or B) and S"
        groups.append(inherited)
        bad, unsure = _judge(inherited, case)
        contradicted += bad
        if unsure:
            own = (unknown[0] if len(unknown) == 1 else f"({' or '.join(unknown)})") if unknown else ""
            unknown = [" and ".join([own, *unsure] if own else unsure)]
    notes: list[str] = []
    for k in options:
        c = found[k][2]
        fit, why = _fit(c, case)
        if fit == "contradicts":
            why = why[11:] if why.startswith("its driver ") else why
            notes.append(f"the option for {_plain(c.text)} does not apply (the case is {why})")
    # the kinds of condition the sentence states or inherits: a treatment rule below holds only where none says whom
    kinds = {c.kind for _, _, c in found} | {c.kind for c in inherited}
    families_stated = {c.family for _, _, c in found}
    if case.receptors.get("HR") == "negative" and _ENDOCRINE_RE.search(text) and "receptor" not in kinds:
        # endocrine therapy is for hormone receptor-positive disease whether or not the sentence says so (the audit's
        # ER/PR-negative metastatic case was offered "Hormone therapy (tamoxifen, aromatase inhibitors, ...)")
        contradicted.append("names an endocrine therapy, which is for hormone receptor-positive disease; the case is "
                            "hormone receptor-negative")
    if "fitness" not in kinds:
        # likewise a treatment the case is unfit for, unless the sentence states whom it is for (the audit's
        # cisplatin-ineligible case was offered "... neoadjuvant multiagent cisplatin-based chemotherapy followed by
        # radical cystectomy" first, its AML case unfit for intensive induction "Cytarabine plus anthracycline plus
        # midostaurin")
        for target, names, unless in _NEEDS_FITNESS:
            have, said = case.fitness.get(target, ("", ""))
            if have != "unfit" or unless and unless.search(text):
                continue
            named = [m for m in names.finditer(text) if not _SET_ASIDE_RE.search(text, 0, m.start())]
            # or its section does ("Consolidation Therapy > Tandem autologous transplant": "There was no
            # difference in OS ..." is that treatment's result; a QA pass's ECOG 3 myeloma case had it released)
            heads = [next((m for part in sec.split(" > ") if not fitness_readings(part)
                           and (m := names.search(part))), None) for sec in sections]
            if named:
                contradicted.append(f"names {named[0].group(0)}; the case is {said}")
            elif heads and all(heads):
                contradicted.append(f"comes from a section about {heads[0].group(0)}; the case is {said}")
    if case.statuses.get("iodine") == "resistant" and "iodine" not in {c.family.removeprefix("section:")
                                                                       for c in inherited} | families_stated:
        # radioactive iodine for disease that no longer takes it up, unless the sentence says whom it is for (a QA
        # pass's iodine-refractory case was offered "RAI is the second treatment ...")
        named = [m for m in _RAI_RE.finditer(text) if not _SET_ASIDE_RE.search(text, 0, m.start())]
        if named:
            contradicted.append(f"names {named[0].group(0)}; the case is iodine-refractory")
    if contradicted:
        return CaseFit("contradicts", tuple(dict.fromkeys(contradicted)), notes=tuple(notes))
    if unknown:
        return CaseFit("unknown", unknown=tuple(dict.fromkeys(unknown)), notes=tuple(notes))
    if groups:
        return CaseFit("fits", notes=tuple(notes))
    return CaseFit("none", notes=tuple(notes))


# What a sentence does, for the order evidence-locked candidates are offered in (``sentence_kind``). A
# recommendation: "Treatment options for ... include", "X is a standard treatment option", "X is recommended",
# "X should be offered", "the FDA approved X for ...". Trial narrative and statistics: a trial's design or
# results ("randomly assigned", "phase III", "[NCT...]", "HR, 0.78", "95% CI", "P = .003", "median OS ... months",
# "n = 389", "Evidence (...)").
_RECOMMEND_RE = re.compile(
    r"\b(?:treatment|therapy|management|therapeutic)\s+(?:options?|approach(?:es)?)\b[^.;]*\binclude|"
    # present tense only: "the Roswell Park regimen became the preferred adjuvant regimen", "For many years,
    # cisplatin-based chemotherapy was the standard" tell history (it had been offered first to a stage III
    # colon case)
    r"\b(?:is|are|remains?|becomes|has\s+become|have\s+become)\s+"
    r"(?:(?:a|an|the|one|now|also|considered|often|"
    r"generally|widely|currently|particularly|usually|typically|strongly)\s+)*(?:standard|preferred|recommended|"
    r"reasonable|acceptable|appropriate|accepted|established|first-line|second-line|frontline|indicated|approved|"
    r"favou?red)\b|"
    r"\b(?:standard|preferred)\s+(?:of\s+care|treatment|therapy|option|approach|regimen)|"
    r"\b(?:treatment|therapy|therapeutic)\s+option\b|"
    r"\brecommend(?:s|ed|ation)?\b|"
    # not in a relative clause: "expanded the population of patients who can receive pembrolizumab" (a result)
    r"(?<!who )(?<!which )(?<!that )"
    r"\b(?:should|may|can|could)\s+(?:also\s+)?(?:be\s+)?(?:offered|considered|used|given|treated|receive|recommended|"
    r"preferred|combined|an\s+option)\b|\bshould\s+(?:\w+\s+)?consider\b|"
    r"\b(?:is|are)\s+(?:\w+ly\s+)?treated\s+with\b(?!\s+(?:palliative|curative)\s+intent)|"
    r"\b(?:FDA|EMA|Food\s+and\s+Drug\s+Administration)\b[^.;]{0,40}\bapprov|\bapproved\s+(?:for|as|in)\b|"
    r"\bis\s+an?\s+(?:\w+\s+){0,3}option\b",
    re.IGNORECASE)
_NARRATIVE_RE = re.compile(
    r"\brandomly\s+assigned\b|\brandomi[sz]ed\b|\bphase\s+(?:I{1,3}|[1-3])(?:/I{1,3}|/[1-3])?\b|\bNCT\d{6,}|"
    r"\btrials?\b|\bstud(?:y|ies)\b|\bmeta-analys[ie]s\b|\bretrospective\b|\bcohort\b|\benrolled\b|"
    r"\b(?:included|enrolled|of)\s+[\d,]+\s+patients\b|\bn\s*=\s*\d|\bHR\b[,:=]?\s*\d|\bhazard\s+ratio\b|"
    r"\b\d+(?:\.\d+)?%\s*CI\b|\bconfidence\s+interval\b|(?<![\w])P\s*[=<>]\s*\.?\d|"
    r"\bmedian\s+(?:OS|PFS|DFS|EFS|RFS|overall\s+survival|progression-free\s+survival|follow-up|survival|duration)\b|"
    r"\b\d+(?:\.\d+)?\s+months\b|\bobjective\s+response\s+rate\b|\badverse\s+events?\s+occurred\b|"
    r"\b(?:the|each|both)\s+(?:\w+[\s-]+){0,3}arms?\b|^\s*Evidence\s*\(|\bLevel\s+of\s+evidence\b|"
    # a trial's design: its end points, crossover, blinded review, stratification
    r"\b(?:co-?)?primary\s+(?:efficacy\s+)?end\s*-?points?\b|\bsecondary\s+end\s*-?points?\b|\bcrossover\b|"
    r"\bblinded\b|\bindependent\s+(?:central\s+)?review\b|\breview\s+committee\b|\bwere\s+stratified\b|"
    r"\bintention-to-treat\b|(?-i:\b(?:PFS|DFS|EFS|ORR)\b)|"
    # a trial population's make-up ("65% of patients were male", "present in 22% of patients", "the median age"),
    # not a prevalence ("5% of patients with NSCLC have ...")
    r"\b\d+(?:\.\d+)?%\s+(?:of\s+(?:the\s+)?)?patients\s+(?:had|were|received)\b|"
    r"\b(?:present|observed|seen|found)\s+in\s+\d+(?:\.\d+)?%\s+of\s+(?:the\s+)?patients\b|\bmedian\s+age\b|"
    # what a trial's patients were given, in the past tense ("All patients received an autologous SCT and ..."),
    # and a comparison of its groups ("Serious adverse events were similar in the two groups")
    r"^\s*(?:all\s+|the\s+)?patients\s+(?:then\s+|also\s+|subsequently\s+)?(?:received|were\s+given|underwent)\b|"
    # a counted group's treatment ("Twenty-seven previously untreated patients older than 60 years ... received")
    r"^\s*(?:\d[\d,]*|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-\w+)?|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|eleven|twelve|\w+teen)\s+(?:[\w-]+\s+){0,4}patients\b[^.;]*?\b(?:received|were\s+"
    r"treated|underwent)\b|"
    r"\b(?:in|between)\s+(?:the\s+)?(?:two|both|treatment)\s+groups\b|\bin\s+both\s+groups\b|"
    # what was done in the past ("Before 2000, fluorouracil (5-FU) was the only useful cytotoxic chemotherapy ...":
    # offered first to a stage III colon case, ahead of what replaced it)
    r"^\s*(?:before|until|prior\s+to|through|by)\s+(?:the\s+)?(?:19|20)\d\d(?:s)?\b|^\s*historically\b|"
    r"^\s*in\s+the\s+(?:past|(?:19|20)\d0s)\b|"
    # and how a therapy came to be ("Antibody therapy ... has been used since the 1990s and has revolutionized ...":
    # drafted among a long note's first five, ahead of the options)
    r"\b(?:has|have)\s+been\s+(?:used|available|studied|in\s+use)\s+since\b|\brevolutioni[sz]ed\b|"
    # a trial's eligibility ("At least four pathologically confirmed positive lymph nodes were required for ...
    # patients": offered to a node-negative case as if advice)
    r"\b(?:were|was)\s+(?:required|eligible|ineligible|excluded)\b|\beligibility\s+criteria\b|"
    r"\binclusion\s+criteria\b|\b(?:was|were)\s+(?:not\s+)?(?:allowed|permitted)\b|"
    # its analyses, definitions and results in words (a QA pass's consults had "Chemotherapy consisted of ...",
    # "HER2 positivity was defined as ...", "There was no difference in OS ..." offered among the first five)
    r"\bconsisted\s+of\b|\b(?:was|were)\s+defined\s+as\b|\bstatistical\s+analysis\b|"
    r"\b(?:pre-?specified|multivariable|multivariate|subgroup|exploratory|post[- ]hoc)\s+analys[ie]s\b|"
    r"\bno\s+(?:statistically\s+)?(?:significant\s+)?difference\s+in\b|\bnot\s+significantly\s+different\b|"
    r"\bdid\s+not\s+show\s+superiority\b|\bexperienced\s+no\s+benefit\b|\bwere\s+compared\s+with\b|"
    r"^\s*(?:it|the\s+(?:trial|study))\s+included\b|^\s*of\s+the\s+[\d,]+\b|"
    r"\bpercent\s+of\s+(?:the\s+)?(?:patients|women|men|participants)\b|"
    r"^\s*(?:the\s+)?patients\s+had\s+[^.;]*\band\s+received\b|"
    # a trial population in the past tense at a sentence's start ("Patients had measurable disease.": drafted among
    # a long note's five by the tiny model, ahead of the answer)
    r"^\s*(?:all\s+|the\s+|most\s+|eligible\s+)?patients\s+had\b|\b(?:was|were)\s+amended\b|\bsample\s+size\b|"
    r"\b(?:was|were|has\s+been|have\s+been)\s+tested\s+in\b|"
    r"\b\d+(?:\.\d+)?%\s+of\s+(?:the\s+)?patients\b[^.;]{0,60}?\b(?:had|were)\s+(?:previously\s+)?"
    r"(?:received|treated)\b",
    re.IGNORECASE)
# Heavy statistics or a trial's design: a sentence with these is narrative even when it names its drug "approved"
_STATISTICS_RE = re.compile(
    r"\brandomly\s+assigned\b|\bNCT\d{6,}|\bn\s*=\s*\d|\bHR\b[,:=]?\s*\d|\bhazard\s+ratio\b|"
    r"\b\d+(?:\.\d+)?%\s*CI\b|(?<![\w])P\s*[=<>]\s*\.?\d|\b(?:included|enrolled)\s+[\d,]+\s+patients\b|"
    r"^\s*Evidence\s*\(|\bcrossover\b|\bat the discretion of the investigators?\b|"
    # a trial's design ("The trial compared carboplatin doublets ... as standard treatment for ...": its arms)
    r"\b(?:trial|study)\s+(?:compared|evaluated|tested|assessed|examined|investigated)\b", re.IGNORECASE)


# The recommendation itself negated, not a clause near it ("... previously treated with a regimen that did not
# include ...", "... is a viable option" after "masses do not grow" stay recommendations)
_ADVISED_AGAINST_RE = re.compile(
    r"\b(?:not|never)\s+(?:\w+\s+){0,2}?(?:recommended|indicated|approved|advised|preferred|standard|considered|"
    r"an?\s+(?:\w+\s+)?option)\b|\b(?:should|must)\s+not\b|\bdo(?:es)?\s+not\s+recommend|\bno\s+role\b|"
    r"\bcontraindicated\b|\bnot\s+be\s+(?:used|given|offered)\b", re.IGNORECASE)


def sentence_kind(text: str) -> int:
    """0: a recommendation ("X is a standard treatment option", "Treatment options ... include", "X is recommended",
    "the FDA approved X for ..."); 1: neither; 2: trial narrative or statistics ("In the phase III ... trial, 1,171
    patients were randomly assigned", "median OS was 16.4 months (HR, 0.78)", "Evidence (pembrolizumab):"). A
    recommendation that also gives a trial's statistics, or advises against ("is not recommended"), is 1. Link
    targets and citation markers are not read."""
    plain = plain_sentence(text)
    recommends = bool(_RECOMMEND_RE.search(plain))
    if recommends:  # advice against ("is not routinely recommended") is not what to do: other
        return 1 if _STATISTICS_RE.search(plain) or _ADVISED_AGAINST_RE.search(plain) else 0
    return 2 if _NARRATIVE_RE.search(plain) else 1


def _offered_units(p: Passage) -> list[tuple[str, str, list[str], list[str]]]:
    """(kind, text, offered sentences, list headers) of each unit of ``p`` (``unit_sentences``), the sentences
    numbered in order as ``passage_sentences`` numbers them."""
    return [(kind, unit, [x for x in pieces if not list_header(x)], [x for x in pieces if list_header(x)])
            for kind, unit, pieces in unit_sentences(p.text)]


def recommended_items(passages: Sequence[Passage]) -> set[str]:
    """Sentence ids (as ``passage_sentences`` numbers them) of list items under a recommendation's list header
    ("Treatment options for stage IV disease include:" then "1. Surgery with chemotherapy."): the header is not
    offered (it says nothing alone), so its items are the recommendation. Items under another header ("Evidence
    (pembrolizumab):" then the trials) are not."""
    out: set[str] = set()
    for p in passages:
        j, under = 0, False  # sentence number; under a recommendation's header
        for kind, _, sentences, headers in _offered_units(p) or ():
            for _ in sentences:
                j += 1
                if under and kind == "list":
                    out.add(f"{p.id}.s{j}")
            if headers:
                under = bool(OPTIONS_HEADER_RE.search(headers[-1]) or _RECOMMEND_RE.search(headers[-1]))
            elif kind != "list":
                under = False
    return out


# A list item's or paragraph's bold label ("1. **Previously treated patients.** One study included ...")
_LABEL_RE = re.compile(r"^(?:(?:[-*+\u2022]|\d+[.)])\s+)?\*\*(?P<label>[^*\[]{3,120}?)\*\*")  # not a link
_NUMBERED_RE = re.compile(r"^\d+[.)]\s")


def trial_sentences(passages: Sequence[Passage]) -> set[str]:
    """Sentence ids of trial narrative by where they stand (``trial_stories``)."""
    return set(trial_stories(passages))


def trial_stories(passages: Sequence[Passage]) -> dict[str, str]:
    """Sentence ids (as ``passage_sentences`` numbers them) of trial narrative by where they stand, whatever their own
    words: a sentence after a trial's narrative (``sentence_kind`` 2 that names a trial, its design or results) in
    its paragraph, list item or run of bullets, or in a bullet under a numbered item that holds one. PDQ tells a trial
    over several sentences, and those that name no trial read as advice when offered alone: the audit's dMMR
    endometrial case was offered "Afterwards, patients received up to 14 cycles of maintenance therapy with
    pembrolizumab or placebo." and "No other predetermined subgroup benefitted from adding pembrolizumab." among
    the first, and the model quoted both. Each id maps to the sentence that began its story (the first trial
    narrative of its paragraph, item or run of bullets), whose population it shares."""
    out: dict[str, str] = {}
    for p in passages:
        j, item_trial, run_trial, in_run = 0, "", "", False
        for kind, unit, sentences, _ in _offered_units(p) or ():
            bullet = kind == "list" and bool(_BULLET_RE.match(unit))
            if kind == "heading" or (kind == "list" and not bullet):
                item_trial = ""  # a numbered item or a heading starts another story
            if not (bullet and in_run):
                run_trial = ""
            told = ""  # the sentence of this paragraph or item that began its trial narrative so far
            # a paragraph that goes on with the numbered trial item above it ("1. The phase III FRESCO-2 trial ..."
            # then its arms in bullets, then "All patients received best supportive care." and "A total of 461
            # patients received fruquintinib ..."): of that trial when it opens as trial narrative and no trial of its
            # own (a conclusion, "Results were significant because ...", stands alone)
            goes_on = kind == "text" and bool(item_trial) and bool(sentences) and sentence_kind(sentences[0]) == 2 \
                and not _OWN_TRIAL_RE.search(sentences[0])
            for sentence in sentences:
                j += 1
                sid = f"{p.id}.s{j}"
                narrative = sentence_kind(sentence) == 2
                if goes_on:
                    out[sid] = item_trial
                    continue
                if bullet and (item_trial or run_trial) or not bullet and told:
                    out[sid] = (item_trial or run_trial) if bullet else told
                if not told and narrative and (_RESULTS_RE.search(sentence) or _TRIAL_RE.search(sentence)):
                    told = sid
                # a bullet that only names a trial ("- Pembrolizumab (KEYNOTE-775 trial).") may be an option
                if not run_trial and bullet and narrative and _RESULTS_RE.search(sentence):
                    run_trial = sid
            if kind == "list" and not bullet:
                item_trial = told
            in_run = bullet
    return out


# A trial's eligibility ("Eligibility criteria included ...", "Patients were required to have ...", "eligible
# patients had ...")
_ELIGIBILITY_RE = re.compile(r"\beligib(?:le|ility)\b|\binclusion\s+criteri(?:a|on)\b|\bwere\s+required\s+to\b",
                             re.IGNORECASE)
# A trial, its design or its results, not history ("Before 2000, 5-FU was the only ..."): what makes the sentences after
# it trial narrative too (``trial_sentences``)
_RESULTS_RE = re.compile(
    r"\bmedian\s+(?:OS|PFS|DFS|EFS|RFS|overall\s+survival|progression-free\s+survival|follow-up|survival)\b|"
    r"\b\d+(?:\.\d+)?\s*%|\b\d+(?:\.\d+)?\s+months\b|\bHR\b|\bhazard\s+ratio\b|(?<![\w])P\s*[=<>]|"
    r"\brandomly\s+assigned\b|\bNCT\d{6,}", re.IGNORECASE)
# one trial or study, not the literature ("Studies have shown that ... radioiodine ... decreased recurrence" is followed
# by advice: "RAI treatment is optimal after total thyroidectomy ...")
_TRIAL_RE = re.compile(r"\b(?:trial|study)\b", re.IGNORECASE)


def sentence_labels(passages: Sequence[Passage]) -> dict[str, str]:
    """Sentence id (as ``passage_sentences`` numbers them) -> the label that names a line of therapy and that the
    sentence is under, for ``assess``. PDQ labels a trial by its population ("1. **Previously treated patients.**
    One study included 173 patients ...") and writes the trial's design and results after it, in the same item,
    in bullets ("- The median age was 61 years") and in paragraphs; the label holds until the next numbered item,
    heading or label, within the passage (a chunk that starts inside the item does not see it)."""
    out: dict[str, str] = {}
    for p in passages:
        j, label = 0, ""
        for kind, unit, sentences, _ in _offered_units(p) or ():
            m = _LABEL_RE.match(unit)
            if kind == "heading" or m or _NUMBERED_RE.match(unit):
                label = m.group("label").strip() if m and _line_spans(m.group("label")) else ""
            for _ in sentences:
                j += 1
                if label:
                    out[f"{p.id}.s{j}"] = label
    return out


_BULLET_RE = re.compile(r"^[-*+\u2022]\s")
_LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def sentence_parents(passages: Sequence[Passage]) -> dict[str, str]:
    """Sentence id (as ``passage_sentences`` numbers them) -> the numbered list item a bullet sits under, as plain
    text, for ``select`` to read as the sentence's deepest heading. PDQ nests an option's drugs under it:
    "8. ROS1 inhibitors (for patients with ROS1 rearrangements)." then "- Repotrectinib (for both ROS1 TKI-naive and
    ROS1 TKI-treated patients)."; the drug's line holds only for ROS1-rearranged disease, as a heading's would."""
    out: dict[str, str] = {}
    for p in passages:
        j, parent = 0, ""
        for kind, unit, sentences, _ in _offered_units(p) or ():
            nested = kind == "list" and not _NUMBERED_RE.match(unit)
            if not nested:
                parent = _LINK_RE.sub(r"\1", _NUMBERED_RE.sub("", unit)).replace(" > ", " ") if kind == "list" else ""
            for _ in sentences:
                j += 1
                if nested and parent and _BULLET_RE.match(unit):
                    out[f"{p.id}.s{j}"] = parent
    return out


def list_lead_ins(passages: Sequence[Passage]) -> dict[str, str]:
    """Sentence id (as ``passage_sentences`` numbers them) -> the lead-in of the list its item is in, verbatim
    ("Features in patients with stage II colon cancer that are associated with an increased risk of recurrence
    include:" then "- Inadequate lymph node sampling."). The lead-in is never offered (it says nothing alone), yet
    its item says little without it: the item is read, judged and shown under it. Items of a list whose lead-in is
    outside the passage (a chunk that starts inside the list) have none. Empty for a passage whose units do not
    split as it does."""
    out: dict[str, str] = {}
    for p in passages:
        j, lead = 0, ""
        for kind, _, sentences, headers in _offered_units(p) or ():
            for _ in sentences:
                j += 1
                if lead and kind == "list":
                    out[f"{p.id}.s{j}"] = lead
            if headers:
                lead = headers[-1]
            elif kind != "list":
                lead = ""
    return out


# How ``sentence_context`` writes a paragraph's site as a part of the section path (``_judge`` words its reason)
SITE_PART = "its paragraph is about the "


def paragraph_sites(passages: Sequence[Passage]) -> dict[str, str]:
    """Sentence id -> the oral cavity or larynx sites (``subsite_readings``) its paragraph is about there: those the
    sentence names, else those the nearest earlier sentence of its paragraph or list item names ("upper gingiva or
    hard palate"). PDQ's lip and oral cavity summary runs through the sites paragraph by paragraph: "Early lesions
    of the upper gingiva or hard palate ... can be treated ..." then "Advanced infiltrative and ulcerating lesions
    should be treated by a combination of radiation therapy and surgery.", which the audit's oral tongue case was
    offered first."""
    out: dict[str, str] = {}
    for p in passages:
        j = 0
        for _, _, sentences, _ in _offered_units(p) or ():
            sites: list[str] = []
            for sentence in sentences:
                j += 1
                sites = subsite_readings(_LINK_RE.sub(r"\1", sentence)) or sites
                if sites:
                    out[f"{p.id}.s{j}"] = " or ".join(sites)
    return out


# How ``sentence_context`` writes the stage a paragraph's first sentence names, as a part of the section path
STAGE_PART = "its paragraph is about "


def paragraph_heads(passages: Sequence[Passage]) -> dict[str, str]:
    """Sentence id -> the id of its paragraph's first sentence, for a paragraph's later sentences (not a list's)."""
    out: dict[str, str] = {}
    for p in passages:
        j = 0
        for kind, _, sentences, _ in _offered_units(p):
            head = f"{p.id}.s{j + 1}"
            for k, _ in enumerate(sentences):
                j += 1
                if kind == "text" and k > 0:
                    out[f"{p.id}.s{j}"] = head
    return out


def paragraph_stages(passages: Sequence[Passage]) -> dict[str, str]:
    """Sentence id -> the stage its paragraph's first sentence names, for the paragraph's later sentences: "The
    potential value of adjuvant chemotherapy for patients with stage II colon cancer is controversial. Pooled
    analyses ... have suggested a 2% to 4% improvement in OS ..." (a QA pass's stage I colon case was offered the
    second while the first was dropped). Only a paragraph (not a list) whose first sentence names one stage."""
    out: dict[str, str] = {}
    for p in passages:
        j = 0
        for kind, _, sentences, _ in _offered_units(p) or ():
            stages = [c.text for c in conditions(sentences[0]) if c.kind == "stage"] if sentences else []
            for k, _ in enumerate(sentences):
                j += 1
                if kind == "text" and k > 0 and len(stages) == 1:
                    out[f"{p.id}.s{j}"] = stages[0]
    return out


def sentence_context(passages: Sequence[Passage], *, sites: bool = False) -> dict[str, str]:
    """Sentence id -> what a sentence stands under inside its passage, as more of its section path: its list's
    lead-in, then the numbered item it is nested under (``list_lead_ins``, ``sentence_parents``). A stage II
    colon lead-in ("Features in patients with stage II colon cancer ... include:") makes its items stage II, as a
    heading would: the audit's stage III colon case had been offered "Inadequate lymph node sampling." alone.
    With ``sites`` (for a case that names its site within the oral cavity or larynx), the site its paragraph is
    about there (``paragraph_sites``), written as ``SITE_PART`` + the sites; last the stage its paragraph's first
    sentence names (``paragraph_stages``), as ``STAGE_PART`` + the stage."""
    leads, parents = list_lead_ins(passages), sentence_parents(passages)
    places = paragraph_sites(passages) if sites else {}
    stages = paragraph_stages(passages)
    out = {}
    for sid in leads.keys() | parents.keys() | places.keys() | stages.keys():
        lead = _LINK_RE.sub(r"\1", leads.get(sid, "")).replace(" > ", " ")
        place = SITE_PART + places[sid] if sid in places else ""
        stage = STAGE_PART + stages[sid] if sid in stages else ""
        out[sid] = " > ".join(x for x in (lead, parents.get(sid, ""), place, stage) if x)
    return out


def bullets_under(passage: Passage, sentence_id: str) -> list[str]:
    """The bullets (without their marks) under the numbered list item that sentence ``sentence_id`` of ``passage``
    is, when that item is under a recommendation's list header (``recommended_items``): an options list's drugs
    ("6. ALK inhibitors (for patients with ALK translocations)." then "- Alectinib." "- Lorlatinib."), too short to be
    offered as sentences. Empty for any other sentence, and for an item of another list (a trial's results in
    bullets under "1. The phase III CROWN trial ...")."""
    if sentence_id not in recommended_items([passage]):
        return []
    text = passage_sentences([passage]).get(sentence_id, ("", ""))[1]
    units = text_units(passage.text)
    for i, (kind, unit) in enumerate(units):
        if kind == "list" and _NUMBERED_RE.match(unit) and text and text in unit:
            out = []
            for kind, bullet in units[i + 1:]:
                if kind != "list" or not _BULLET_RE.match(bullet):
                    break
                out.append(_BULLET_RE.sub("", bullet).strip())
            return out
    return []


# A pointer to another section or summary ("For more information, see the [Treatment of Stage III Colon Cancer](...)
# section.", "[Go to Patient Version](...)"): no guidance of its own, yet its words fit the case (the audit's stage
# III colon case was offered one fourth, and the model picked it)
_POINTER_RE = re.compile(r"^\W*(?:for\s+(?:more\s+)?information\b[^.;]{0,200}?,\s+(?:see|visit|refer\s+to)\b|"
                         r"see\s+the\s+\[[^\]]+\]\([^)]*\)\s+(?:section|summary)\W*$|"
                         r"\[?go\s+to\s+(?:the\s+)?(?:patient|health\s+professional)\s+version\b|"
                         # "Table 5 shows the standard treatment options for HCC." (the table is not quoted: a QA
                         # pass's HCC case had it released first)
                         r"(?:see\s+)?table\s+\d+\s+(?:shows|lists|summari[sz]es|describes|provides|presents|"
                         r"outlines|below)\b)", re.IGNORECASE)
POINTER_REASON = "only points to another section, summary or table; it gives no guidance of its own"
# A row of a staging table ("Any T, N0, M1, any PSA, any Gleason.", "- T1–3, N1, M0") or one of its rules
# ("Extraprostatic extension ... (T4) is included with T3a."): how a stage is defined, not what to do. A QA pass's
# newly diagnosed mHSPC case was released both as recommendations, from "Treatment of Stage IV Prostate Cancer".
_STAGING_ROW_RE = re.compile(
    r"^\W*(?:(?i:any)\s+T|[pcy]?T(?:is|a|[0-4X])[a-d]?(?:\s*[-\u2013]\s*T?[0-4]?[a-d]?)?)\s*,\s*"
    r"(?:(?i:any)\s+N|[pc]?N[0-3X])|"
    r"\b(?:is|are)\s+(?:included|grouped|classified)\s+(?:with|as|in)\s+(?:stage\s+)?[pc]?T[0-4]")
STAGING_ROW_REASON = "is a row or rule of a staging table (how the stage is defined); it gives no guidance of its own"
# The lead-in of a list of factors ("Treatment selection depends on the following factors:", "The primary factors
# that influence prognosis are:"): its items ("Age.", "The presence of distant metastases ... only.") say what a
# choice depends on, not what to choose; ranked with trial narrative unless one recommends
_FACTORS_LEAD_RE = re.compile(r"(?<!growth )\bfactors?\b[^:]*:\s*$", re.IGNORECASE)


def select(sentences: Mapping[str, tuple[str, str]], facts: CaseFacts,
           sections: Mapping[str, str] | None = None,
           recommended: set[str] | frozenset[str] = frozenset(),
           labels: Mapping[str, str] | None = None,
           parents: Mapping[str, str] | None = None,
           trials: set[str] | frozenset[str] = frozenset(),
           follow_up: bool = False,
           relevance: Mapping[str, float] | None = None,
           setting_asked: str = "",
           unstated: frozenset[str] = frozenset()) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """Evidence-locked candidates: (kept, dropped). Kept sentences are ordered by kind: recommendations first, other
    sentences next and trial narrative or statistics last (``sentence_kind``: a small model tends to pick the first
    sentence it is offered); those whose condition the case does not state go after all others, and of those, the
    ones from a section for recurrent disease (the case says neither recurrent nor newly diagnosed) last. Within a
    kind, sentences that fit the case (by their own words first, then by their section) come before those without
    conditions, then those naming more of the case's markers, then passage order. Nothing is dropped for its kind.
    Dropped maps a sentence id to the reason; a pointer to another section is dropped too. ``sections``: passage
    id -> section path, for the stage a sentence inherits from its section. ``recommended``: ids of list items under
    a recommendation's header (``recommended_items``), ranked as recommendations. ``labels``: sentence id -> the
    label it is under (``sentence_labels``), for its line of therapy. ``parents``: sentence id -> its list's lead-in,
    the list item it is nested under and its paragraph's site (``sentence_context``), read as the deepest part of
    its section.
    ``trials``: ids of sentences that are trial narrative by where they stand (``trial_sentences``), ranked as
    narrative. ``follow_up``: the question asks about follow-up; sentences of a follow-up section go first.
    ``setting_asked``: "before" or "after" surgery, as the question asks (``asked_setting``); a sentence of the
    other setting only (by its own words or its section) goes after the rest, as a follow-up question's others do.
    ``unstated``: ids ranked as if their condition were not stated for the case (a trial whose population sentence
    is not: ``_unstated_stories``).
    ``relevance``: sentence id -> how well it answers the question (``sentence_relevance``); when given, the order
    above is fused with it (``_fused``). A trial's design detail (``_DESIGN_RE``) goes after the other sentences
    of its tier."""
    case = case_from_facts(facts)
    kept: list[tuple[int, int, int, int, int, int, int, str]] = []
    dropped: dict[str, str] = {}
    earlier_unknown: dict[str, bool] = {}  # passage id -> its last kept sentence is unstated for the case
    for i, (sid, (pid, text)) in enumerate(sentences.items()):
        section = (sections or {}).get(pid)
        if parent := (parents or {}).get(sid):
            section = f"{section} > {parent}" if section else parent
        label = (labels or {}).get(sid, "")
        if _POINTER_RE.match(text):
            dropped[sid] = POINTER_REASON
            continue
        if _STAGING_ROW_RE.search(text):
            dropped[sid] = STAGING_ROW_REASON
            continue
        fit = assess(text, case, (section,) if section else (), label)
        if fit.verdict == "contradicts":
            dropped[sid] = fit.reason
        else:
            own = fit if not section else assess(text, case, label=label)
            fits = "fits" in (own.verdict, fit.verdict)
            unknown = fit.verdict == "unknown" and own.verdict != "fits" or sid in unstated
            back = _points_back(text)
            # "This drug has shown activity ..." goes with the sentence before it: after it, whatever its tier
            unknown = unknown or back and earlier_unknown.get(pid, False)
            earlier_unknown[pid] = unknown
            # a section for recurrent disease, for a case that does not say it recurred, after the other unstated
            # conditions: a note that names no recurrence is most often about the disease as it presents (the
            # audit's 2 cm papillary thyroid carcinoma had "Local and regional recurrences ... can be treated with
            # 131I ablation ..." first, above the localized disease's lines)
            recurrence = unknown and case.recurrent is None and any(
                c.family == "section:recurrence" for c in section_conditions(section or ""))
            # a guideline's recommendation comes before trial narrative that fits by naming the case's marker or
            # population (the audit's RCC case had "Almost all patients with stage IV ... have incurable disease"
            # before the first-line options item "Ipilimumab plus nivolumab (for ...)"; its ovarian BRCA1 case had
            # GOG-0218's arms, under "stage III or IV disease", before PDQ's PARP inhibitor options item); only a
            # sentence whose condition the case does not state goes after every other; within one kind, one that
            # fits comes first, by its own words before by its section
            elsewhere = follow_up and not _FOLLOW_UP_SECTION_RE.search(section or "") or \
                bool(setting_asked) and _setting_of(text, section) == _OTHER_SETTING[setting_asked]
            factor = any(_FACTORS_LEAD_RE.search(part) for part in (parent or "").split(" > "))
            kind = 0 if sid in recommended and not _STATISTICS_RE.search(text) else \
                2 if (sid in trials or factor) and sentence_kind(text) == 1 else sentence_kind(text)
            kept.append((int(elsewhere), int(unknown) + int(recurrence), int(bool(_DESIGN_RE.search(text))),
                         max(kind, 2) if back else kind,
                         0 if fits else 1, 0 if own.verdict == "fits" else 1, -_markers_fitting(text, case), i, sid))
    order = [k[-1] for k in sorted(kept)]
    if relevance:
        order = _fused(order, {k[-1]: k[:3] for k in kept}, relevance)
    return {sid: sentences[sid] for sid in order}, dropped


def _unstated_stories(stories: Mapping[str, str], sentences: Mapping[str, tuple[str, str]],
                      kept: Mapping[str, tuple[str, str]], case: Case) -> frozenset[str]:
    """The kept sentences of each trial whose second sentence gives a population the case does not state, by a
    condition of a kind the first does not state ("FRESCO-2 ... included 691 patients with metastatic colorectal
    cancer" then "Patients had disease progression during, or were intolerant of, trifluridine-tipiracil,
    regorafenib, or both."): as a contradicted population drops the whole story, an unstated one puts it with the
    other unstated sentences (a QA pass's colon cancer after FOLFOX and FOLFIRI had FRESCO-2's opening drafted
    first)."""
    members: dict[str, list[str]] = {}
    for sid, head in stories.items():
        members.setdefault(head, []).append(sid)
    out: set[str] = set()
    for head, told in members.items():
        second = told[0]
        if head not in kept or second not in kept:
            continue
        stated = {c.kind for c in conditions(sentences[head][1])}
        if any(c.kind not in stated and _fit(c, case)[0] == "unknown" for c in conditions(sentences[second][1])):
            out |= {sid for sid in (head, *told) if sid in kept}
    return frozenset(out)


# A sentence that opens a trial of its own ("In a randomized trial of 500 patients", "(NCT01234567)"), not one that
# goes on with the trial before it ("The study enrolled women ...")
_OWN_TRIAL_RE = re.compile(r"\b(?:a|an|another|one|second)\s+(?:[\w-]+\s+){0,4}(?:trial|study)\b|\bNCT\d{6,}",
                           re.IGNORECASE)


# A trial's design detail: its end points, stratification, who was permitted, the follow-up ("The primary end point
# was OS.", "Patients were stratified by MMR status."): it answers no clinician's question, yet the cross-encoder
# scores one that names the case's marker high; offered after the other sentences of its tier (six had been among
# the first five of 114 questions)
_DESIGN_RE = re.compile(
    r"^\W*(?:the\s+)?(?:(?:co-?)?primary|secondary|sequential\s+primary|main)\s+(?:efficacy\s+)?end\s*-?points?\b|"
    r"\bwere\s+stratified\b|^\W*(?:all\s+)?(?:[\w-]+\s+){0,3}were\s+(?:permitted|allowed)\b|"
    r"^\W*(?:the\s+)?median\s+(?:duration\s+of\s+)?follow-up\b|^\W*the\s+follow-up\s+(?:period|time)\s+was\b|"
    r"^\W*(?:exclusion|inclusion)\s+criteria\b",
    re.IGNORECASE)


# Reciprocal rank fusion's constant: a sentence's score is 1/(K + its rank by fit and kind) + 1/(K + its rank by
# relevance to the question). 10 was best of 5, 10, 20 and 40 on the 114 questions with answer terms (kb/EVAL.md
# round 20), and flat around it.
_FUSION_K = 10


def _fused(order: list[str], tier: Mapping[str, tuple[int, ...]], relevance: Mapping[str, float]) -> list[str]:
    """``order`` (by fit and kind, ``select``) fused with the order of the sentences' relevance to the question:
    the tiny model drafts the first five sentences offered, and the one that answers the question ("A phase Ib
    trial ... tucatinib was combined with trastuzumab and capecitabine") had been offered 7th, behind trial
    background that fits as well. The tiers stay as they are (a follow-up section's sentences first for a follow-up
    question; a sentence whose condition the case does not state after the others; a trial's design detail after
    the rest of its tier); within a tier neither order wins alone: the cross-encoder judges words, not fit (it put
    "second-line chemotherapy with the OFF regimen ..." first for a first-line question)."""
    by_relevance = sorted(order, key=lambda sid: -relevance.get(sid, -math.inf))
    rank = {sid: r for r, sid in enumerate(by_relevance)}
    score = {sid: 1 / (_FUSION_K + r) + 1 / (_FUSION_K + rank[sid]) for r, sid in enumerate(order)}
    return sorted(order, key=lambda sid: (tier[sid], -score[sid]))


def sentence_relevance(passages: Sequence[Passage],
                       sentences: Mapping[str, tuple[str, str]] | None = None) -> dict[str, float]:
    """Sentence id -> its cross-encoder logit against the question (``Passage.sentence_scores``, set by Corrective
    RAG), for the passages that have one per sentence. ``sentences``: ``passage_sentences(passages)`` when the caller
    has it already (not split again)."""
    counts: dict[str, int] = {}
    for pid, _ in (sentences if sentences is not None else passage_sentences(
            [p for p in passages if p.sentence_scores])).values():
        counts[pid] = counts.get(pid, 0) + 1
    return {f"{p.id}.s{j}": score for p in passages if p.sentence_scores and counts.get(p.id) == len(p.sentence_scores)
            for j, score in enumerate(p.sentence_scores, 1)}


# a sentence that points back to what its passage named before ("This drug has shown activity ...", "This strategy
# was tested ...", "These agents ..."): meaningless drafted alone (a clinician QA pass found three), so offered after
# the others, with the trial narrative
_BACK_POINTER_RE = re.compile(r"^\W*(?:this|these|such|that|both)\s+(?:\w+\s+)?(?:drugs?|agents?|strateg(?:y|ies)|"
                              r"regimens?|combinations?|approach(?:es)?|therap(?:y|ies)|treatments?|compounds?|"
                              r"medications?|doses?)\b", re.IGNORECASE)


def _points_back(text: str) -> bool:
    """``_BACK_POINTER_RE``, naming no drug or drug class itself ("These treatment options include CDK4/6 inhibitors,
    ..." says what it means)."""
    return bool(_BACK_POINTER_RE.match(text)) and not drug_names(text) and \
        not re.search(r"\binhibitors?\b|\bantibod(?:y|ies)\b", text, re.IGNORECASE)


_MARKER_KINDS = ("gene", "receptor", "mmr", "pdl1", "expression")


def _markers_fitting(text: str, case: Case) -> int:
    """How much of the case's markers the sentence itself names and fits (a driver, receptor or MMR status 2 each, a
    PD-L1 level 1): among recommendations that fit, "pembrolizumab for dMMR/MSI-H ..." comes before "FOLFOX or
    FOLFIRI ..." for an MSI-H case (both fit its stage and line; the marker-specific one is the more specific
    answer)."""
    kinds = {c.kind for _, _, c in spans(text) if c.kind in _MARKER_KINDS and _fit(c, case)[0] == "fits"}
    # a PD-L1 level counts half: an actionable driver, a receptor or MMR status is the more specific answer (the
    # audit's EGFR exon 19 case with PD-L1 60% had "pembrolizumab ... PD-L1 (>1%)" first)
    return sum(1 if kind == "pdl1" else 2 for kind in kinds)


def other_cancer(passage: Passage, facts: CaseFacts) -> bool:
    """The passage is about another cancer than the case's: the governor's rule (``engine.ledger.on_case``)."""
    return not on_case(passage, case_words(facts.cancer_type))


def misfit_filter(facts: CaseFacts) -> Callable[[Any], bool]:
    """A test for a retrieved passage (anything with ``title``, ``section`` and ``text``: ``kb.store.Hit``) that
    cannot apply to the case whatever it says: its section names another stage or receptor status than the case's
    ("Metastatic HER2-Low Breast Cancer" for a stage IIA case, "Stages I, II, and III HER2-Positive Breast Cancer"
    for HER2-low), or it is about another cancer. For retrieval to prefer the others
    (``kb.store.RetrievalParams.demote``); ``select`` would drop its sentences anyway."""
    case, terms = case_from_facts(facts), case_words(facts.cancer_type)

    def misfit(hit: Any) -> bool:
        if not on_case(Passage("", "", hit.title, "", hit.section, None, hit.text, 0.0, None), terms):
            return True
        if hit.section and unusable_section(hit.section, case):
            return True  # a section of drugs the case cannot have ("... > Immunotherapy > Nivolumab")
        return bool(hit.section) and assess("", case, (hit.section,)).verdict == "contradicts"
    return misfit


def section_fits(facts: CaseFacts) -> Callable[[str], bool]:
    """A test for a passage's section path: its headings state conditions (stage, receptor status, line, setting,
    ...) and they fit the case (``assess`` says "fits"). For Corrective RAG's grading (``rag.fit_margin``)."""
    case = case_from_facts(facts)
    return lambda section: bool(section) and assess("", case, (section,)).verdict == "fits"


# a question about follow-up ("What surveillance schedule (CEA, CT, colonoscopy) is recommended?") and the
# sections that answer it: their sentences come first, before the treatment options list's items (a stage II
# colon case two years after surgery had "Adjuvant chemotherapy (under clinical evaluation)." first)
_FOLLOW_UP_ASKED_RE = re.compile(r"\b(?:surveillance|follow[- ]?up|monitoring|survivorship)\b", re.IGNORECASE)
_FOLLOW_UP_SECTION_RE = re.compile(
    r"\b(?:surveillance|follow[- ]?up|monitoring|survivorship|posttreatment)\b", re.IGNORECASE)


# a question that asks for treatment before surgery ("Should he receive systemic therapy before surgery rather than
# going straight to dissection?") or after it ("what adjuvant systemic therapy?"): the other setting's sentences go
# after the rest (a long note's melanoma asking about neoadjuvant therapy had four adjuvant sentences among its five)
_BEFORE_ASKED_RE = re.compile(r"\bneo-?adjuvant\b|\bpre-?operative\b|\bbefore\s+(?:\w+\s+)?(?:surgery|resection|"
                              r"dissection|the\s+operation|cystectomy|mastectomy|lobectomy)\b", re.IGNORECASE)
_AFTER_ASKED_RE = re.compile(r"(?<![\w-])adjuvant\b|\bpost-?operative\b|\bafter\s+(?:\w+\s+)?(?:surgery|resection|"
                             r"dissection|the\s+operation)\b", re.IGNORECASE)
_OTHER_SETTING = {"before": "after", "after": "before"}


def asked_setting(question: str) -> str:
    """"before" or "after" surgery when the case's question sentences ask for one of them only; else ""."""
    asked = " ".join(asked_sentences(question))
    before, after = bool(_BEFORE_ASKED_RE.search(asked)), bool(_AFTER_ASKED_RE.search(asked))
    return "before" if before and not after else "after" if after and not before else ""


def _setting_of(text: str, section: str | None) -> str:
    """"before" or "after" surgery when every setting the sentence states (else its section's headings) is that
    one; else ""."""
    own = [c for _, _, c in spans(text) if c.family == "setting"]
    found = own or [c for c in section_conditions(section or "") if c.family == "section" and c.kind == "stage_class"
                    and (c.before_surgery or c.after_surgery)]
    sides = {"before" if c.before_surgery else "after" if c.after_surgery else "" for c in found}
    return sides.pop() if len(sides) == 1 else ""


def asks_about_follow_up(question: str) -> bool:
    """The case's question sentences (``engine.facts.asked_sentences``) ask about follow-up."""
    return any(_FOLLOW_UP_ASKED_RE.search(s) for s in asked_sentences(question))


# a trial's arms: what its patients were assigned to ("randomly assigned 1:1 to receive pembrolizumab or placebo")
_ASSIGNED_RE = re.compile(r"\b(?:randomly\s+)?assigned\b|\brandomi[sz]ed\b[^.;]{0,40}?\bto\b|\bto\s+receive\b",
                          re.IGNORECASE)


def locked_candidates(passages: Sequence[Passage], facts: CaseFacts, question: str = ""
                      ) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """``select`` over the sentences of ``passages`` (the Specialist offers the kept ones, the Critic checks).
    Sentences of a passage about another cancer than the case's are dropped first (the governor would block
    them). ``question``: the case text; when it asks about follow-up, sentences of a follow-up section come
    first. Remembered for the last few inputs: the Specialist and the Critic ask for the same ones on every
    attempt (copies are returned, so a caller's changes stay its own)."""
    kept, dropped = _locked_candidates(tuple(passages), facts, question)
    return dict(kept), dict(dropped)


@functools.lru_cache(maxsize=8)
def _locked_candidates(passages: tuple[Passage, ...], facts: CaseFacts, question: str
                       ) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    off = {p.id for p in passages if other_cancer(p, facts)}
    sentences = passage_sentences(passages)
    items = recommended_items(passages)
    stories = trial_stories(passages)
    args = ({sid: v for sid, v in sentences.items() if v[0] not in off}, facts, {p.id: p.section for p in passages},
            items, sentence_labels(passages), sentence_context(passages, sites=bool(facts.subsites)), set(stories))
    options = {"follow_up": asks_about_follow_up(question), "relevance": sentence_relevance(passages, sentences),
               "setting_asked": asked_setting(question)}
    kept, dropped = select(*args, **options)
    if unstated := _unstated_stories(stories, sentences, kept, case_from_facts(facts)):
        kept, dropped = select(*args, **options, unstated=unstated)
    for sid, (pid, _) in sentences.items():
        if pid in off:
            dropped[sid] = (f"does not apply to this case: its passage {pid} is about another cancer than the "
                            f"case's ({facts.cancer_type})")
    case = case_from_facts(facts)
    by_id = {p.id: p for p in passages}
    # a section of drugs the case cannot have ("... > ALK-directed TKIs > Crizotinib" for an ALK-negative case):
    # none of its sentences apply, not even "The primary end point was PFS."
    off_section = {p.id: f"comes from the section \u201c{p.section}\u201d, which {why}" for p in passages
                   if p.section and (why := unusable_section(p.section, case))}
    unusable: set[str] = set()  # sentences whose drugs the case cannot have
    for sid, (pid, text) in list(kept.items()):  # only an options item has bullets (bullets_under re-reads)
        bullets = bullets_under(by_id[pid], sid) if sid in items else []
        if why := off_section.get(pid) or unusable_targets(
                text, bullets, case, offers=sid in items or sentence_kind(text) == 0) or \
                unusable_drugs(text, bullets, case) or unusable_lines(text, case):
            del kept[sid]
            dropped[sid] = why
            unusable.add(sid)
    if had := treated_before_surgery(question):  # "For patients who undergo surgery first, ..." is not for it,
        # nor the rest of the paragraph it opens
        heads = paragraph_heads(passages)
        first = {sid for sid, (_, text) in kept.items()
                 if _SURGERY_FIRST_RE.search(text) and not _BEFORE_SURGERY_RE.search(text)}
        for sid in [sid for sid in kept if sid in first or heads.get(sid) in first]:
            del kept[sid]
            dropped[sid] = (f"does not apply to this case: {'states' if sid in first else 'its paragraph opens with'}"
                            f" patients who had surgery first; the case had treatment before surgery "
                            f"(\u201c{had}\u201d)")
    # a trial's later sentences share the population of the one that began its story: a trial the case is not of
    # ("DESTINY-Breast06 ... included patients with HR-positive ..." for an HR-negative case) has none offered
    # ("These patients previously received ... endocrine-based therapy", its PFS figures had been released)
    for sid in list(kept):
        if (head := stories.get(sid)) in dropped and dropped[head] != POINTER_REASON:
            del kept[sid]
            why = dropped[head].removeprefix("does not apply to this case: ")
            dropped[sid] = f"tells the trial begun in {head}, which {why}"
    # and the sentence right after a trial's first may give the population the first left out ("FIGHT-202 enrolled
    # 147 patients with disease progression ..." then "... with FGFR2 fusions or rearrangements"): when it does not
    # apply by a condition of a kind the first does not state, neither does the rest (a QA pass's FGFR2-negative
    # case had been offered FIGHT-202's lead and dosing)
    members: dict[str, list[str]] = {}
    for sid, head in stories.items():
        members.setdefault(head, []).append(sid)
    for head, told in members.items():
        second = told[0]
        if head not in kept or second not in dropped or not dropped[second].startswith("does not apply"):
            continue
        stated = {c.kind for c in conditions(sentences[head][1])}
        if any(c.kind not in stated and _fit(c, case)[0] == "contradicts" for c in conditions(sentences[second][1])):
            why = dropped[second].removeprefix("does not apply to this case: ")
            for sid in [head, *told[1:]]:
                if sid in kept:
                    del kept[sid]
                    dropped[sid] = f"tells the trial whose population {second} gives, which {why}"
    # likewise a trial's eligibility, wherever in its story ("Eligibility criteria included intact liver function
    # (Child-Pugh class A)", IMbrave150's third sentence): a case it excludes is offered none of the trial (a QA
    # pass's Child-Pugh B8 case had IMbrave150's results offered once that sentence was dropped)
    for head, told in members.items():
        rule = next((sid for sid in told if sid in dropped and dropped[sid].startswith("does not apply")
                     and _ELIGIBILITY_RE.search(sentences[sid][1])), None)
        if rule is None:
            continue
        why = dropped[rule].removeprefix("does not apply to this case: ")
        for sid in [head, *told]:
            if sid in kept:
                del kept[sid]
                dropped[sid] = f"tells the trial whose eligibility {rule} states, which {why}"
    # and a trial whose arms the case cannot have ("Patients ... were randomly assigned 1:1 to receive pembrolizumab
    # or placebo" for a case that progressed on pembrolizumab): KEYNOTE-826's population, design and results had been
    # released to such a case (a long note's cervical cancer after chemotherapy with pembrolizumab)
    for head, told in members.items():
        arm = next((sid for sid in dict.fromkeys([head, *told]) if sid in unusable
                    and _ASSIGNED_RE.search(sentences[sid][1])), None)
        if arm is None:
            continue
        for sid in dict.fromkeys([head, *told]):
            if sid in kept:
                del kept[sid]
                dropped[sid] = f"tells the trial whose arms {arm} gives, which {dropped[arm]}"
    # PDQ repeats a statement in its overview and in the stage's section ("Before 2000, fluorouracil (5-FU) was the
    # only ..." / "Before 2000, 5-FU was the only ..."): offered twice, the model picked both
    seen: list[tuple[str, frozenset[str]]] = []
    for sid, (_, text) in list(kept.items()):
        words = _statement_words(text)
        same = next((first for first, other in seen if len(words) >= 8 and len(other) >= 8
                     and len(words & other) >= 0.85 * len(words | other)), None)
        if same is None:
            seen.append((sid, words))
        else:
            del kept[sid]
            dropped[sid] = f"repeats {same} (the same statement in another passage)"
    # a trial's later sentence is offered after the one that began its story: "The study enrolled women ... who had
    # disease progression after a platinum-based regimen" had been drafted first for a long note's endometrial case
    # and KEYNOTE-775's opening, which names lenvatinib and pembrolizumab, offered 12th. Not a recommendation (it
    # stands alone, before the trial that supports it) nor a sentence that opens a trial of its own ("In a randomized
    # trial of 500 patients ...")
    order: list[str] = []
    for sid, (_, text) in kept.items():
        if (head := stories.get(sid)) in kept and head not in order and sentence_kind(text) != 0 \
                and not _OWN_TRIAL_RE.search(plain_sentence(text)):
            order.append(head)
        if sid not in order:
            order.append(sid)
    kept = {sid: kept[sid] for sid in order}
    return kept, dict(sorted(dropped.items(), key=lambda x: list(sentences).index(x[0])))


# What a targeted drug needs: "BRAF inhibitor", "ALK tyrosine kinase inhibitors", or a drug of that class by
# name. MEK inhibitors are given with a BRAF inhibitor for BRAF-mutant disease here. EGFR is left out: anti-EGFR
# antibodies (cetuximab, panitumumab) are a class of their own (``ANTI_EGFR``), for RAS wild-type colorectal cancer,
# not EGFR-mutant disease: a KRAS- or NRAS-mutant colorectal case is not offered them (a QA pass's KRAS G12D case had
# five cetuximab and panitumumab passages kept). The checkpoint inhibitors are
# classes too: PD-1/PD-L1 ("anti-PD-1", "PD-L1-blocking antibody", "immune checkpoint inhibitors", a drug by name;
# not "PD-L1 expression") is not offered again to a case that progressed after it; CTLA-4 (ipilimumab) is
# another class, so "nivolumab plus ipilimumab" stays.
EGFR_TKI = "EGFR TKI"
ARPI = "androgen receptor pathway inhibitor"
CDK46 = "CDK4/6"
ANTI_EGFR = "anti-EGFR antibody"
ANTI_CD38 = "anti-CD38 antibody"
_COLORECTAL = frozenset({"colon cancer", "rectal cancer", "colorectal cancer"})
ALK_EARLY = "ALK TKI other than lorlatinib"
ALK_ALL = "ALK TKI"
# generations laid over a driver's drugs: for a case that progressed on one, a drug of it is that generation first,
# whatever else it acts on (crizotinib after alectinib is an ALK TKI other than lorlatinib, not an ALK, ROS1 or MET
# drug); for any other case they say nothing
_GENERATIONS = frozenset({ALK_EARLY, ALK_ALL})
# engine.facts' ``progressed_after`` name -> the class or regimen a case that progressed on it is done with
_CLASS_OF = {**{r: r for r in FRONTLINE_REGIMENS.values()}, **dict.fromkeys(CTLA4_DRUGS, "CTLA-4"),
             **dict.fromkeys(EGFR_TKIS, EGFR_TKI), **dict.fromkeys(ARPI_DRUGS, ARPI),
             **dict.fromkeys(CDK46_DRUGS, CDK46), **dict.fromkeys(ALK_SECOND_GEN, ALK_EARLY), ALK_LAST_GEN: ALK_ALL,
             LENALIDOMIDE: LENALIDOMIDE, POMALIDOMIDE: POMALIDOMIDE, **dict.fromkeys(ANTI_CD38_DRUGS, ANTI_CD38),
             **{drug: drug for drug in HER2_ADCS.values()}, "bevacizumab": "bevacizumab", **CYTOTOXICS}
_CLASS_RE = re.compile(r"\banti[-\u2013 ]?PD-?L?1\b|\bPD-?L?1[-\u2013 ]?(?:inhibitors?|blockade|blocking|directed|"
                       r"antibod(?:y|ies))|\b(?:immune[- ])?checkpoint[- ](?:inhibitors?|inhibition|blockade)",
                       re.IGNORECASE)
# "immunotherapy" in a sentence offers a checkpoint inhibitor where one is the class at stake ("Adjuvant immunotherapy
# for patients with resected stage IB to IIIA NSCLC ...": a QA pass's EGFR case had it released); not in a heading
# ("Immunotherapy > Interleukin-2" is no PD-1 inhibitor)
_IO_WORD_RE = re.compile(r"\b(?:chemo-?)?immunotherapy\b", re.IGNORECASE)
_TARGETED_CLASS_RE = re.compile(
    r"\b(BRAF|ALK|ROS1|RET|MET|NTRK|TRK|FLT3|IDH1|IDH2|KRAS[ ]G12C|CDK4/6)(?:/\w+)?[- ](?:(?:directed|targeted)[- ])?"
    r"(?:(?:tyrosine[ ]kinase[ ])?inhibitors?|TKIs?)\b")
# drug -> the drivers it acts on (crizotinib: ALK, ROS1 and MET; entrectinib: NTRK and ROS1)
_TARGETED_DRUGS = {
    "BRAF": "dabrafenib vemurafenib encorafenib trametinib cobimetinib binimetinib",
    "ALK": "alectinib brigatinib lorlatinib ceritinib crizotinib", "RET": "selpercatinib pralsetinib",
    "ROS1": "crizotinib entrectinib repotrectinib lorlatinib", "MET": "capmatinib tepotinib crizotinib",
    "NTRK": "larotrectinib entrectinib repotrectinib", "KRAS": "sotorasib adagrasib",
    "FLT3": "midostaurin gilteritinib quizartinib", "IDH1": "ivosidenib olutasidenib", "IDH2": "enasidenib",
    PD1_CLASS: " ".join(PD1_DRUGS), "CTLA-4": " ".join(CTLA4_DRUGS), EGFR_TKI: " ".join(EGFR_TKIS),
    ARPI: " ".join(ARPI_DRUGS), CDK46: " ".join(CDK46_DRUGS), LENALIDOMIDE: LENALIDOMIDE,
    ALK_EARLY: " ".join(("crizotinib", *ALK_SECOND_GEN)),
    ALK_ALL: " ".join(("crizotinib", ALK_LAST_GEN, *ALK_SECOND_GEN)),
    "EGFR-MET": "amivantamab",  # amivantamab: another class, kept beside lazertinib
    ANTI_EGFR: "cetuximab panitumumab", POMALIDOMIDE: POMALIDOMIDE, "bevacizumab": "bevacizumab",
    ANTI_CD38: " ".join(ANTI_CD38_DRUGS),
    # the chemotherapy backbones a case that progressed on them is done with (engine.facts ``CHEMO_BACKBONES``)
    "irinotecan": "irinotecan folfiri mfolfiri capiri xeliri folfirinox mfolfirinox folfoxiri nalirifox",
    "oxaliplatin": "oxaliplatin folfox mfolfox capox xelox folfirinox mfolfirinox folfoxiri nalirifox",
    # the cytotoxics a case progressed on or within six months of (engine.facts ``CYTOTOXICS``)
    **{cls: " ".join(d for d, c in CYTOTOXICS.items() if c == cls) for cls in set(CYTOTOXICS.values())}}
_HER2_ADC_NAMES = frozenset(HER2_ADCS.values())  # two words each: read by ``drug_spans``
_ONLY_WHEN_HAD = frozenset({"irinotecan", "oxaliplatin", ANTI_CD38, POMALIDOMIDE, "bevacizumab", *_HER2_ADC_NAMES,
                            *CYTOTOXICS.values()})
_CYTOTOXIC_CLASSES = frozenset(CYTOTOXICS.values())
_DRUG_TARGETS = {drug: frozenset(g for g, drugs in _TARGETED_DRUGS.items() if drug in drugs.split())
                 for drug in " ".join(_TARGETED_DRUGS.values()).split()}


# ... or after it ("lenalidomide-refractory myeloma", "anti-PD-1-pretreated", "osimertinib-resistant")
_HAD_AFTER_RE = re.compile(r"[-\u2013 ](?:refractory|resistant|exposed|pretreated|intolerant|na[iï]ve)\b",
                           re.IGNORECASE)
# a drug named as what patients had before ("in patients who progressed after pembrolizumab", "refractory to
# R-CHOP"): the population's history, not what the sentence offers
_HAD_BEFORE_RE = re.compile(
    r"\b(?:after|following|refractory\s+to|resistant\s+to|progress\w*\s+(?:on|after|during)|relaps\w*\s+(?:after|on)|"
    r"within\s+\d+\s+months\s+of|"
    r"failure\s+of|failed|fail\w*|prior|previous(?:ly)?|pretreated\s+with|exposed\s+to|intolerant\s+(?:of|to)|"
    r"beyond)\b[^.;,]{0,40}\Z", re.IGNORECASE)


# a drug a trial compared with ("eribulin versus dacarbazine", "olaparib or physician's choice of enzalutamide or
# abiraterone"): not what the sentence offers
_COMPARATOR_RE = re.compile(r"\b(?:versus|vs\.?|compared\s+(?:with|to)|rather\s+than|instead\s+of|than|"
                            r"(?:physician|investigator|treating\s+physician)[\u2019']?s\s+choice\s+of)\s+"
                            r"(?:[\w-]+\s+){0,3}\Z", re.IGNORECASE)


def _class_gene(m: re.Match[str]) -> str:
    """The driver a ``_TARGETED_CLASS_RE`` match names ("TRK inhibitors": NTRK, "KRAS G12C inhibitor": KRAS)."""
    return m.group(1).split()[0].upper().replace("TRK", "NTRK").replace("NNTRK", "NTRK")


def _class_genes(text: str) -> set[str]:
    """The drivers (or checkpoint) the drug classes ``text`` names act on ("ALK-directed TKIs": ALK)."""
    return {_class_gene(m) for m in _TARGETED_CLASS_RE.finditer(text)} | \
        ({PD1_CLASS} if _CLASS_RE.search(text) else set())


def _targets(text: str, sentence: bool = True, history: bool = False) -> list[frozenset[str]]:
    """The drivers (or checkpoint, or frontline regimen) each targeted drug, drug class or regimen ``text`` offers
    acts on ("Dabrafenib plus trametinib": [{BRAF}, {BRAF}]; "crizotinib": [{ALK, ROS1, MET}]); not one named as
    the patients' history ("docetaxel in patients who progressed after pembrolizumab": []), which ``history``
    gives instead. A ``sentence``'s "immunotherapy" is a checkpoint inhibitor (``_IO_WORD_RE``), a heading's is
    not."""
    def offered(start: int, end: int) -> bool:
        if _COMPARATOR_RE.search(text, max(0, start - 40), start):
            return False  # a trial's control arm: neither offered nor the population's history
        had = _HAD_BEFORE_RE.search(text, max(0, start - 60), start) or _HAD_AFTER_RE.match(text, end)
        return (had is None) != history

    named = [frozenset({_class_gene(m)}) for m in _TARGETED_CLASS_RE.finditer(text) if offered(*m.span())]
    named += [frozenset({PD1_CLASS}) for m in _CLASS_RE.finditer(text) if offered(*m.span())]
    named += [frozenset({PD1_CLASS}) for m in _IO_WORD_RE.finditer(text) if sentence and offered(*m.span())
              and not any(a <= m.start() < b for a, b in ((x.start(), x.end()) for x in _CLASS_RE.finditer(text)))]
    named += [_DRUG_TARGETS[m.group(0)] for m in re.finditer(r"[a-z]+", text.lower())
              if m.group(0) in _DRUG_TARGETS and offered(*m.span())]
    named += [frozenset({drug}) for a, b, drug in drug_spans(text) if drug in _HER2_ADC_NAMES and offered(a, b)]
    return named + [frozenset({FRONTLINE_REGIMENS[re.sub(r"[^a-z]", "", m.group(0).lower())]})
                    for m in FRONTLINE_REGIMEN_RE.finditer(text) if offered(*m.span())]


def _section_targets(section: str) -> list[frozenset[str]]:
    """What the deepest heading that names a targeted drug or class aims at, a drug read as its ancestors' class
    ("ALK-directed TKIs > ... > Crizotinib": crizotinib as an ALK inhibitor, not for ROS1 or MET)."""
    found: list[frozenset[str]] = []
    context: set[str] = set()
    for part in section.split(" > "):
        named = [(n & context) | (n & _GENERATIONS) if n & context else n for n in _targets(part, sentence=False)]
        found = named or found
        context = _class_genes(part) or context
    return found


# Oncogene-driven NSCLC: checkpoint inhibitors are not its first treatment (little benefit, and pneumonitis with
# a TKI after them); before its first line is behind it (afterwards a chemo-immunotherapy may still be weighed),
# an EGFR or ALK case is not offered them (the audit's EGFR exon 19 case and a QA pass's adjuvant one had
# first-line and adjuvant pembrolizumab and atezolizumab released)
_IO_NOT_FOR_DRIVERS = frozenset({"EGFR", "ALK"})


def _io_ruled_out(case: Case) -> str:
    """The driver for which the case's NSCLC is not offered PD-1/PD-L1 inhibitors, or ""."""
    if case.cancer_type != "non-small cell lung cancer" or case.first_line_done:
        return ""
    return next((case.names.get(g, g) for g in sorted(_IO_NOT_FOR_DRIVERS) if g in case.altered), "")


def _ruled_out(aimed: list[list[frozenset[str]]], case: Case, offers: bool = True) -> str:
    driver = _io_ruled_out(case) if offers else ""
    # drivers are mutually exclusive, as ``_fit_gene`` reads them: crizotinib's results are not for an EGFR L858R
    # case that names no ALK (a QA pass's case after osimertinib had them offered)
    own = [d for d in case.altered if d in DRIVERS]
    others = DRIVERS - set(case.altered) if own else frozenset()
    ras = [g for g in ("KRAS", "NRAS") if g in case.altered] if case.cancer_type in _COLORECTAL else []
    ruled = case.wild_type | set(case.exhausted) | others | ({PD1_CLASS} if driver else set()) | \
        ({ANTI_EGFR} if ras else set())
    # a chemotherapy backbone, an anti-CD38 antibody, pomalidomide or a HER2 conjugate counts only for a case that
    # progressed on it ("FOLFOX plus panitumumab" is an anti-EGFR offer for a KRAS-mutant case, "daratumumab plus
    # lenalidomide" a lenalidomide one for a lenalidomide-refractory case)
    aimed = [[genes for genes in named if genes & set(case.exhausted) or not genes <= _ONLY_WHEN_HAD]
             for named in aimed]
    aimed = [[genes & set(case.exhausted) or genes - _GENERATIONS or genes for genes in named] for named in aimed]
    # a regimen built on a cytotoxic the disease progressed on or soon after is ruled out whatever it adds to it
    # (liposomal doxorubicin with durvalumab after liposomal doxorubicin)
    chemo = set(case.exhausted) & _CYTOTOXIC_CLASSES
    resisted = [[genes for genes in named if genes and genes <= chemo] for named in aimed]
    if not ruled or not aimed or not all(named and (all(genes <= ruled for genes in named) or done)
                                         for named, done in zip(aimed, resisted)):
        return ""
    genes = sorted(set().union(*(g for named, done in zip(aimed, resisted) for g in (done or named))))
    if ras and ANTI_EGFR in genes:
        return (f"names an {ANTI_EGFR} (cetuximab, panitumumab), which is for RAS wild-type colorectal cancer; the "
                f"case is {case.names.get(ras[0], ras[0] + ' mutated')}")
    if driver and genes == [PD1_CLASS] and PD1_CLASS not in case.exhausted:
        return (f"names {PD1_CLASS} therapy; the case's NSCLC is driven by {driver} (checkpoint inhibitors are not "
                "for EGFR- or ALK-driven NSCLC before its targeted therapy)")
    said = [case.names.get(g, g + " wild-type") for g in genes if g in case.wild_type]
    said += [f"driven by {case.names.get(own[0], own[0])}"] if any(g in others and g not in case.wild_type
                                                                   for g in genes) else []
    had = [case.exhausted[g] for g in genes if g in case.exhausted and g not in case.wild_type]
    if not said:  # a class or regimen the case progressed after, no driver
        return f"names {', '.join(genes)} therapy; the case progressed after {', '.join(had)}"
    return (f"names therapy targeted at {', '.join(genes)}; the case is {', '.join(said)}"
            + (f" and progressed after {', '.join(had)}" if had else ""))


def unusable_targets(text: str, bullets: Sequence[str], case: Case, offers: bool = True) -> str:
    """Why a sentence (or the options item whose bullets are ``bullets``) cannot apply to the case: every targeted
    drug it names, or every bullet under the item, acts only on drivers the case is stated wild-type for or is of
    a class the case progressed after ("Combination therapy with signal transduction inhibitors", listing only
    BRAF/MEK inhibitors, had been released for BRAF wild-type melanoma; nivolumab offered after pembrolizumab;
    crizotinib stays for an ALK-negative case of unknown ROS1). ``offers``: the sentence recommends what it names
    (a recommendation or an options item): only then are checkpoint inhibitors ruled out for a driver
    (``_io_ruled_out``; "driver-positive tumours gain less from checkpoint inhibitors" stays). "" otherwise."""
    if set().union(*_targets(text, history=True)) & set(case.exhausted):
        return ""  # its population progressed on the class too ("abemaciclib ... after progression on a CDK4/6
        # inhibitor", postMONARCH, for a case after palbociclib): it is about this case
    return _ruled_out([_targets(b) for b in bullets] if bullets else [_targets(text)], case, offers)


def unusable_section(section: str, case: Case) -> str:
    """``unusable_targets`` for a section's headings (``_section_targets``), or ``unusable_drugs`` for the deepest
    heading that names a drug ("... > Trastuzumab deruxtecan" after T-DXd pneumonitis)."""
    if why := _ruled_out([_section_targets(section)], case):
        return why
    named = next((part for part in reversed(section.split(" > ")) if drug_spans(part)), "") if case.avoided else ""
    return unusable_drugs(named, [], case) if named else ""


# A population counted in prior lines ("after two or more prior anti-HER2-based regimens", "at least two prior
# therapies"): not for a case at an earlier line (engine.facts ``prior_lines``)
_MIN_PRIOR_RE = re.compile(
    r"\b(?:(?P<n1>two|three|four|[2-4])\s+or\s+more|at\s+least\s+(?P<n2>two|three|four|[2-4]))\s+"
    r"(?:(?:prior|previous)\s+)?(?:[\w/\u2013-]+\s+){0,3}?(?:lines?|regimens?|therap(?:y|ies)|treatments?)\b",
    re.IGNORECASE)
_NUMBERS = {"two": 2, "three": 3, "four": 4}


def unusable_lines(text: str, case: Case) -> str:
    """Why a sentence whose population had more prior lines than the case does not apply to it, or ""."""
    if case.prior_lines is None or (m := _MIN_PRIOR_RE.search(text)) is None:
        return ""
    word = (m.group("n1") or m.group("n2")).lower()
    need = int(word) if word.isdigit() else _NUMBERS[word]
    if case.prior_lines >= need:
        return ""
    return (f"does not apply to this case: states patients after {m.group(0)}; the case is at line "
            f"{case.prior_lines + 1} ({case.prior_lines} prior)")


def _offered_avoided(text: str, case: Case) -> dict[str, str]:
    """The drugs ``text`` offers that the case avoids, each -> its key in ``case.avoided`` (itself or its class): not
    one named as the population's history ("in patients intolerant of capecitabine") or a trial's comparator."""
    found = {drug: key for a, b, drug in drug_and_class_spans(text) if (key := avoid_key(drug)) in case.avoided
             and not _HAD_BEFORE_RE.search(text, max(0, a - 60), a) and not _HAD_AFTER_RE.match(text, b)
             and not _COMPARATOR_RE.search(text, max(0, a - 40), a)}
    if PD1_CLASS in case.avoided and PD1_CLASS not in found.values() and any(PD1_CLASS in t for t in _targets(text)):
        found["PD-1/PD-L1 therapy"] = PD1_CLASS  # "immune checkpoint inhibitors"
    return found


def unusable_drugs(text: str, bullets: Sequence[str], case: Case) -> str:
    """Why a sentence (or the options item whose bullets are ``bullets``: each of them) offers a drug the note
    stopped for a toxicity or ruled out ("ifosfamide was avoided because of his solitary kidney"), or "". Among
    alternatives too: a clinician QA pass graded "Agents such as ifosfamide or gemcitabine may be used" unsafe for
    that case (safety fails closed; the other agents come in other sentences)."""
    if not case.avoided:
        return ""
    found = [_offered_avoided(t, case) for t in (bullets or [text])]
    if not all(found):
        return ""
    named = {drug: key for f in found for drug, key in f.items()}
    shown = ", ".join(drug if key in (drug, PD1_CLASS) else f"{drug} ({key})" for drug, key in named.items())
    said = case.avoided[next(iter(named.values()))]
    said = said if len(said) <= 160 else said[:159].rstrip() + "\u2026"
    return f"names {shown}, which the note rules out for this case (\u201c{said}\u201d)"


def _statement_words(text: str) -> frozenset[str]:
    """A sentence's words without its links' targets and citation markers, for telling repeats apart."""
    plain = re.sub(r"\[\[[^\]]*\]\([^)]*\)\]|\]\([^)]*\)", " ", text)
    return frozenset(w.lower() for w in re.findall(r"\w+", plain))


def no_fit_issue(dropped: Mapping[str, str]) -> str:
    """The Critic's issue when every retrieved sentence contradicts the case (the consult is refused)."""
    grouped: dict[str, list[str]] = {}
    for sid, why in dropped.items():
        grouped.setdefault(why, []).append(sid)
    items = list(grouped.items())
    shown = "; ".join(f"{', '.join(sids)} {why}" for why, sids in items[:3])
    more = f" (and {sum(len(s) for _, s in items[3:])} more)" if len(items) > 3 else ""
    return f"case fit: no retrieved guideline sentence applies to this case ({shown}{more})"
