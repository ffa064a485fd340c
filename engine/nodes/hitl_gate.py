"""HITL gate: decides whether a reviewer must sign off. Side-effect free, so re-running it is harmless;
the engine persists the approval item and halts, and ``resume(thread_id, decision)`` continues.

A case the router scores Tier 2 always waits for a reviewer, whichever tier ran it: a clinician may force Tier 1
(a smaller model), never the sign-off away."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from engine.casefit import recommended_items, sentence_kind
from engine.context import NodeContext
from engine.facts import asked_sentences, statement_text
from engine.governor import review_reasons as deferred_claims
from engine.safety import drug_names, instruction_like, instruction_passages
from engine.state import ConsultState

# A question about what to do; and words that name something to do. A released answer to the first with none of
# the second (staging prose, trial demographics) may be verbatim and "supported" yet not answer the question.
_TREATMENT_QUESTION_RE = re.compile(
    r"\b(?:treat\w*|therap\w*|options?|regimens?|(?:first|second|third)[- ]line|adjuvant|neoadjuvant|manage\w*|"
    r"next steps?|indicated|systemic|recommend\w*|what should)\b", re.IGNORECASE)
_TREATMENT_TERM_RE = re.compile(
    r"\b(?:\w*therap(?:y|ies)|chemo\w*|radiat\w*|radiosurg\w*|surg\w*|resect\w*|\w+ectomy|transplant\w*|"
    r"ablat\w*|emboli[sz]\w*|surveillance|observation|watchful|watch and wait|inhibitors?|maintenance|"
    r"regimens?|trastuzumab\w*|tamoxifen|aromatase|hormon\w*)\b", re.IGNORECASE)
# the registry's name is no surveillance of a patient: five epidemiology claims citing "the Surveillance,
# Epidemiology, and End Results (SEER) program" had passed as an answer to a treatment question
_SEER_RE = re.compile(r"\bSurveillance,?\s+Epidemiology,?\s+and\s+End\s+Results\b", re.IGNORECASE)


def answers_no_treatment(state: ConsultState) -> bool:
    """A treatment question whose released claims name no treatment at all."""
    released = [c.text for c in (state.ledger.claims if state.ledger else ()) if c.state in ("supported", "qualified")]
    if not released or not _TREATMENT_QUESTION_RE.search(state.case_text):
        return False
    text = _SEER_RE.sub(" ", " ".join(released))
    return not (_TREATMENT_TERM_RE.search(text) or drug_names(text))


# A question that asks for a drug ("which agent?", "what targeted treatment?", "systemic therapy before surgery, and
# with what?"), and the words that name one or its class. A clinician QA pass of the long notes found such answers
# released: the history of neoadjuvant therapy, "Elective regional lymph node dissection has no proven benefit ...",
# radiation and surgery prose for an adjuvant-systemic question (kb/EVAL.md round 19)
_DRUG_QUESTION_RE = re.compile(
    r"\b(?:systemic|targeted|drugs?|agents?|medications?|regimens?|immunotherap\w*|chemotherap\w*|"
    r"cellular\s+therap\w*|combinations?|with\s+what)\b", re.IGNORECASE)
_DRUG_CLASS_RE = re.compile(
    r"\b(?:\w*inhibitors?|immunotherap\w*|chemo\w*|antibod(?:y|ies)|conjugates?|endocrine|hormon\w*|"
    r"CAR[- ]?T|(?:cell|targeted|radioligand)\s+therap\w*|regimens?|\w*platin\w*|taxanes?|anthracyclines?)\b",
    re.IGNORECASE)


def answers_no_drug(state: ConsultState) -> bool:
    """A question that asks for a drug whose released claims name no drug or drug class."""
    released = [c.text for c in (state.ledger.claims if state.ledger else ()) if c.state in ("supported", "qualified")]
    asked = " ".join(s for s in asked_sentences(state.case_text) if s.rstrip().endswith("?"))
    if not released or not _DRUG_QUESTION_RE.search(asked):
        return False
    text = " ".join(released)
    return not (drug_names(text) or _DRUG_CLASS_RE.search(text))


def answers_with_trial_results_only(state: ConsultState) -> bool:
    """A treatment question whose released claims hold no recommendation and are mostly trial narrative or
    statistics ("In the phase III ... trial, patients were randomly assigned", "median PFS was 25.7 months (HR,
    0.50)", "the primary end point was PFS"): what trials found, not what the guideline recommends, so a person
    should say what it means for this case (``casefit.sentence_kind``: 0 recommendation, 2 trial narrative). A
    claim quoting an item of a treatment options list ("6. ALK inhibitors (for patients with ALK translocations)."
    under "Treatment options ... include:", ``casefit.recommended_items``) is a recommendation."""
    released = [c for c in (state.ledger.claims if state.ledger else ()) if c.state in ("supported", "qualified")]
    if not released or not _TREATMENT_QUESTION_RE.search(state.case_text):
        return False
    listed = recommended_items(state.retrieval.passages) if state.retrieval else set()
    kinds = [0 if c.sentence_ids and set(c.sentence_ids) <= listed else sentence_kind(c.text) for c in released]
    return 0 not in kinds and 2 * kinds.count(2) >= len(kinds)


# What the question asks for, by the words before "drug", "therapy", "regimen", ...: "Which antihypertensive
# drug should be started?" asks about antihypertensives. Words that say when or how (first-line, adjuvant,
# preferred) or join the phrase are not its subject.
_ASKED_RE = re.compile(
    r"\b(?:which|what)\s+(?P<mod>(?:[\w/-]+\s+){1,3}?)(?P<head>drugs?|medications?|medicines?|agents?|"
    r"treatments?|therap(?:y|ies)|regimens?|options?|doses?|antibiotics?|vaccines?)\b", re.IGNORECASE)
_NOT_A_SUBJECT = frozenset(
    "is are was were the a an his her their its this that these of for to in class kind type types best "
    "preferred primary recommended standard usual management first second third first-line second-line "
    "third-line later later-line next initial further other additional new treatment therapy systemic "
    "targeted adjuvant neoadjuvant perioperative postoperative preoperative maintenance consolidation "
    "induction reinduction salvage palliative curative definitive local appropriate available approved "
    "possible current should would could can line dose doses dosing schedule duration length course cycles "
    "number sequence combination drug drugs agent agents option options regimen regimens does do did overall "
    "plan".split())


# "How should febrile neutropenia be managed?", "How do we treat her hypercalcemia?", "What is the management
# of tumor lysis syndrome?": what is to be managed is the question's subject
_MANAGED_RE = re.compile(
    r"\bhow\s+(?:should|would|can|could|is|are|do|does)\s+(?P<a>[^?.;:]{3,60}?)\s+be\s+(?:best\s+)?"
    r"(?:managed|treated|handled|controlled|prevented)\b|"
    r"\bhow\s+(?:should|do|does|can|would|to)\s+(?:(?:we|i|you|one)\s+)?(?:best\s+)?"
    r"(?:manage|treat|handle|control|prevent)\s+(?P<b>[^?.;:]{3,60}?)\s*(?:[?.;:]|$)|"
    r"\b(?:management|treatment|prevention)\s+of\s+(?P<c>[^?.;:]{3,60}?)\s*\?", re.IGNORECASE)
_NOT_A_TOPIC = _NOT_A_SUBJECT | frozenset(
    "her his their this that these those patient patient's patients case disease cancer cancers tumor tumour "
    "tumors tumours condition symptoms symptom problem issue now currently best".split())


def _subject_words(phrase: str, case_words: set[str]) -> list[str]:
    """The words of a question's subject that say what it is about: not a phase, manner or pronoun, nor a word
    of the case's own cancer (a compound's parts count on their own)."""
    return [part for w in phrase.lower().split() if w not in _NOT_A_TOPIC
            for part in re.split(r"[/-]+", w.strip("()'\"")) if part not in _NOT_A_TOPIC and len(part) > 3
            and part not in case_words]


def asks_about_something_unretrieved(state: ConsultState) -> str:
    """The subject of a "which X drug/therapy" question when no retrieved passage mentions it, or of a "how
    should X be managed" question when one of its words is in none, else "". A released answer to it answers
    something else: the QA pass's "stage IV NSCLC, EGFR exon 19 ... new uncontrolled hypertension. Which
    antihypertensive drug should be started?" released EGFR TKIs, and "Patient on FOLFOX for colon cancer ...
    How should febrile neutropenia be managed?" FOLFOX's adoption as adjuvant therapy, both unreviewed."""
    if not state.retrieval or not state.retrieval.passages:
        return ""
    passages = " ".join(p.text for p in state.retrieval.passages).lower()

    for m in _ASKED_RE.finditer(state.case_text):
        words = _subject_words(m.group("mod"), set())
        if words and not any(_mentions(passages, w) for w in words):
            return f"{m.group('mod').strip()} {m.group('head')}"
    for subject, words in _managed_subjects(state):
        # all of them: FOLFOX's trials name neutropenia, not "febrile neutropenia"
        if words and not all(_mentions(passages, w) for w in words):
            return subject
    return ""


def _mentions(text: str, word: str) -> bool:
    """``text`` (lower case) holds ``word`` or another form of it (its stem: "hypercalcemi" for "hypercalcemia")."""
    return word[:max(5, len(word) - 3)] in text


def _managed_subjects(state: ConsultState) -> list[tuple[str, list[str]]]:
    """(subject as written, its words: ``_subject_words``) of each "how should X be managed" the case asks."""
    cancer = set((state.facts.cancer_type or "").lower().split())
    subjects = [next(g for g in m.group("a", "b", "c") if g) for m in _MANAGED_RE.finditer(state.case_text)]
    return [(s.strip(), _subject_words(s, cancer)) for s in subjects]


# Words that say how something is handled, for a released claim about a "how should X be managed" subject
_HANDLING_RE = re.compile(
    r"\b(?:treat\w*|manag\w*|prevent\w*|prophyla\w*|hydrat\w*|administ\w*|dos(?:e|es|ed|ing)|given|give|infus\w*|"
    r"transfus\w*|antibiotic\w*|antimicrobial\w*|\w*steroids?|supportive|bisphosphonates?|reduc\w*|revers\w*|"
    r"correct\w*|control\w*|relie\w*|palliat\w*|plasmapheresis|exchange|vaccinat\w*)\b", re.IGNORECASE)
# The cancer's own extent is no subject to be handled apart from it ("How should metastatic disease be managed?")
_EXTENT_WORDS = frozenset(
    "stage early advanced metastatic metastases metastasis localized locally recurrent recurrence relapsed relapse "
    "refractory progressive progression newly diagnosed resected unresectable high-risk low-risk risk grade "
    "low-grade high-grade residual persistent".split())


def manages_nothing_asked(state: ConsultState) -> str:
    """The subject of a "how should X be managed" question when the released claims that name it (all its
    words) say nothing of handling it, else "". The QA pass's "newly diagnosed myeloma ... serum calcium 13.4 ...
    How should hypercalcemia be managed?" released the IMWG criteria ("Hypercalcemia greater than 1 mg/dL higher
    than reference range.") as its answer: the subject is in the passages, so ``asks_about_something_unretrieved``
    let it pass."""
    released = [c.text.lower() for c in (state.ledger.claims if state.ledger else ())
                if c.state in ("supported", "qualified")]
    if not released:
        return ""
    for subject, words in _managed_subjects(state):
        words = [w for w in words if w not in _EXTENT_WORDS]
        naming = [c for c in released if words and all(_mentions(c, w) for w in words)]
        handled = [c for c in naming if _HANDLING_RE.search(_SEER_RE.sub(" ", c)) or _TREATMENT_TERM_RE.search(c)
                   or drug_names(c)]
        if words and not handled:
            return subject
    return ""


# a pregnant patient: a guideline's treatment is judged differently
# Not a molar or ectopic pregnancy, a pregnancy test, gestational trophoblastic disease or "gravida 2 para 2" (an
# obstetric history); a denied or past one does not count either
_PREGNANT_RE = re.compile(r"\b(?:(?<!molar )(?<!ectopic )pregnan\w*(?!\s+tests?\b)|gestation\w*(?![\s-]+trophoblastic)|"
                          r"gravid\b|trimester)\b", re.IGNORECASE)
_NOT_PREGNANT_RE = re.compile(r"\b(?:not|no|denies|negative|prior|previous|past|after|history\s+of)\s+(?:\w+\s+){0,2}"
                              r"(?:pregnan\w*)", re.IGNORECASE)


def pregnancy_reason(state: ConsultState) -> str:
    """Why a pregnant patient's answer waits, or "" when the note does not say she is pregnant. Always: a
    guideline's treatment may harm the fetus, and which drug, when, is a person's call. The QA pass's stage II Hodgkin
    lymphoma at 22 weeks was released general Hodgkin statements; its HER2-positive breast cancer at 18 weeks was
    released "chemotherapy and HER2-targeted therapy" from the non-pregnant section, though a retrieved passage said
    trastuzumab is contraindicated in pregnancy."""
    text = state.case_text
    if not _PREGNANT_RE.search(text):
        return ""
    denied = len(_NOT_PREGNANT_RE.findall(text))
    if denied and len(_PREGNANT_RE.findall(text)) <= denied:  # "not pregnant": every mention is denied
        return ""
    passages = state.retrieval.passages if state.retrieval else ()
    if not any(_PREGNANT_RE.search(p.text) for p in passages):
        return ("The patient is pregnant, and no retrieved guideline passage mentions pregnancy: a person should "
                "judge whether the answer applies")
    return ("The patient is pregnant: a person should judge which of these treatments are safe in pregnancy, and "
            "when (a guideline's treatment may harm the fetus)")


# Oncologic emergencies a note may describe: urgent management (dexamethasone and decompression for cord
# compression, antibiotics within the hour for febrile neutropenia) is rarely what a treatment guideline's passages
# say, and a released answer may read as if it were. Not when denied, past, a risk or prophylaxis ("no cord
# compression", "history of febrile neutropenia", "TLS prophylaxis"), nor inside a question.
_EMERGENCY_RE = re.compile(
    r"\b(?:(?:malignant\s+|metastatic\s+|epidural\s+)?(?:spinal\s+)?cord\s+compression|MSCC|cauda\s+equina|"
    r"superior\s+vena\s+cava\s+(?:syndrome|obstruction)|SVC\s+(?:syndrome|obstruction)|"
    r"febrile\s+neutropenia|neutropenic\s+(?:fever|sepsis)|tumou?r\s+lysis\s+syndrome|leukostasis|"
    r"(?:cardiac|pericardial)\s+tamponade|hyperviscosity\s+syndrome|(?:brain|cerebral)\s+herniation)\b",
    re.IGNORECASE)
_EMERGENCY_NOT_NOW_RE = re.compile(
    r"\b(?:no|not|without|denies|denied|ruled\s+out|negative\s+for|history\s+of|prior|previous|risk\s+of|"
    r"prevent\w*)\s+(?:[\w-]+\s+){0,3}\Z", re.IGNORECASE)
_EMERGENCY_AFTER_RE = re.compile(r"\s+(?:prophylaxis|risk|prevention)\b", re.IGNORECASE)


def emergency_named(state: ConsultState) -> str:
    """The oncologic emergency the note describes, as written, or "". The QA pass's metastatic prostate cancer with
    thoracic cord compression, asking how to manage it urgently, was released bisphosphonates and hormone therapy
    (no steroids, no decompression or radiation: the guidelines' passages do not cover it)."""
    said = statement_text(state.case_text)
    for m in _EMERGENCY_RE.finditer(said):
        if not _EMERGENCY_NOT_NOW_RE.search(said, max(0, m.start() - 40), m.start()) \
                and not _EMERGENCY_AFTER_RE.match(said, m.end()):
            return " ".join(m.group(0).split())
    return ""


def guidelines_of_an_unnamed_cancer(state: ConsultState) -> tuple[str, ...]:
    """The guidelines the released claims quote when the case names no cancer the system recognises and they are
    more than one: the other-cancer check needs a cancer type, so nothing stopped claims from several cancers'
    summaries being released together (the audit's gallbladder case, before its type was read, was answered from
    the esophageal, hypopharyngeal and endometrial summaries). () otherwise."""
    if state.facts.cancer_type or not state.ledger or not state.retrieval:
        return ()
    titles = {p.id: p.title for p in state.retrieval.passages}
    cited = dict.fromkeys(titles[e] for c in state.ledger.claims if c.state in ("supported", "qualified")
                          for e in c.evidence if e in titles)
    return tuple(cited) if len(cited) > 1 else ()


# the population a guideline is written for, by its title ("Adult Acute Lymphoblastic Leukemia Treatment",
# "Childhood Hodgkin Lymphoma Treatment") or, where the title does not say, its source's name (PDQ's adult
# summaries are titled "Acute Lymphoblastic Leukemia Treatment (PDQ®)" from "types-leukemia-hp-adult-all-...":
# the title alone never flagged the QA pass's 8-year-old), and a note that says the patient is a child without
# giving an age
_ADULT_TITLE_RE = re.compile(r"^\s*adults?\b", re.IGNORECASE)
_CHILD_TITLE_RE = re.compile(r"^\s*(?:childhood|pediatric|paediatric)\b", re.IGNORECASE)
_ADULT_SOURCE_RE = re.compile(r"(?:^|[-_/\\])adults?[-_]", re.IGNORECASE)
_CHILD_SOURCE_RE = re.compile(r"(?:^|[-_/\\])(?:child(?:hood)?|pediatric|paediatric)[-_]", re.IGNORECASE)
# (not the Child-Pugh score: the audit's HCC case "Child-Pugh A" was held as a child's)
_CHILD_NOTE_RE = re.compile(r"\b(?:child(?![- ](?:pugh|turcotte))|boy|girl|infant|toddler|pediatric|paediatric|"
                            r"childhood)\b", re.IGNORECASE)


def guidelines_of_another_age_group(state: ConsultState) -> tuple[bool, tuple[str, ...]]:
    """Whether the patient is a child (under 18, or a note without an age that says "child", "boy", ...), and
    the titles of the guidelines released claims quote that are written for the other age group: adults' for a
    child, children's for an adult. The QA pass's 8-year-old with newly diagnosed B-ALL was released "ongoing
    treatment with a BCR::ABL1 tyrosine kinase inhibitor" from the adult ALL summary, unreviewed."""
    age = state.facts.age
    child = age < 18 if age is not None else bool(_CHILD_NOTE_RE.search(state.case_text))
    if not state.ledger or not state.retrieval or (age is None and not child):
        return child, ()
    title_re, source_re = (_ADULT_TITLE_RE, _ADULT_SOURCE_RE) if child else (_CHILD_TITLE_RE, _CHILD_SOURCE_RE)
    others = {p.id: p.title for p in state.retrieval.passages
              if title_re.search(p.title) or source_re.search(Path(p.source).name)}
    released = [c for c in state.ledger.claims if c.state in ("supported", "qualified")]
    return child, tuple(dict.fromkeys(others[e] for c in released for e in c.evidence if e in others))


def review_reasons(state: ConsultState, confidence_floor: float) -> tuple[str, ...]:
    reasons: list[str] = []
    r = state.routing
    if r and r.tier == 2:
        if r.override and r.auto_tier != 2:  # the clinician forced the tier: say so, and what the router said
            reasons.append(f"Tier 2 chosen by the clinician (tier override; complexity score "
                           f"{r.score:.2f} would route to Tier {r.auto_tier})")
        else:
            reasons.append(f"Tier 2 case (complexity score {r.score:.2f})")
    elif r and r.auto_tier == 2:  # forcing a lower tier runs a smaller model; it must not also skip the reviewer
        reasons.append(f"Tier 2 case (complexity score {r.score:.2f}): router scored Tier 2; Tier {r.tier} forced "
                       "by the clinician")
    if instruction_like(state.case_text):
        # the text was passed to the model as data, but someone tried to steer the system: a person should look
        reasons.append("The case text contains instruction-like text (a possible prompt injection; it was treated "
                       "as data)")
    poisoned = instruction_passages(state.retrieval.passages) if state.retrieval else ()
    if poisoned:  # its instruction sentences were dropped, but someone may have tampered with the knowledge base
        reasons.append(f"Retrieved passage {', '.join(poisoned)} contains instructions to the system (a possibly "
                       "poisoned guideline; those sentences were dropped, not used)")
    if answers_no_treatment(state):
        reasons.append("The question asks what to do, but no released claim names a treatment or approach (the "
                       "quoted passages may not answer it)")
    elif answers_no_drug(state):
        reasons.append("The question asks for a drug or regimen, but no released claim names one (the quoted "
                       "passages answer another part of the question or give background)")
    elif answers_with_trial_results_only(state):
        reasons.append("The question asks what to do, but the released claims mostly report trials' results and "
                       "none is a guideline recommendation (a person should judge what they mean for this case)")
    if asked := asks_about_something_unretrieved(state):
        reasons.append(f"The question asks about \u201c{asked}\u201d, which no retrieved guideline passage "
                       "mentions: the answer may be about something else (a question outside these "
                       "guidelines?)")
    elif handled := manages_nothing_asked(state):
        reasons.append(f"The question asks how to manage \u201c{handled}\u201d, but no released claim says how "
                       "(a claim that names it only as a criterion or a finding does not answer it)")
    if pregnant := pregnancy_reason(state):
        reasons.append(pregnant)
    if emergency := emergency_named(state):
        reasons.append(f"The note describes an oncologic emergency (\u201c{emergency}\u201d): its urgent management "
                       "is a person's call, and the guideline passages may not cover it")
    child, elsewhere = guidelines_of_another_age_group(state)
    if elsewhere:
        patient, group = ("a child", "adults") if child else ("an adult", "children")
        reasons.append(f"The patient is {patient}, but released claims quote a guideline written for {group} "
                       f"({'; '.join(elsewhere)}): a person should judge whether it applies")
    if mixed := guidelines_of_an_unnamed_cancer(state):
        reasons.append(f"The case names no cancer type the system recognises, and the released claims quote "
                       f"{len(mixed)} different guidelines ({'; '.join(mixed)}): a person should confirm which, if "
                       "any, is about this patient's cancer")
    confidence = state.retrieval.rag_confidence if state.retrieval else 0.0
    if confidence < confidence_floor:
        reasons.append(f"Low retrieval confidence ({confidence:.2f} < {confidence_floor:.2f})")
    return tuple(reasons) + deferred_claims(state)  # the governor's deferred claims wait for a reviewer


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    if state.decision is not None:  # resumed after a reviewer signed
        return state
    reasons = review_reasons(state, ctx.settings.engine.hitl_confidence_floor)
    return replace(state, hitl_status="pending" if reasons else "none", hitl_reasons=reasons)
