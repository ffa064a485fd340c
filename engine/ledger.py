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
    - verdict: ``off_topic`` (cross-encoder veto, not for an evidence-locked claim, which is one of its passage's
      own sentences; a NaN score vetoes too), ``supports`` (lexical >= SUPPORTED), ``partial``
      (>= PARTIAL), ``unsupported``; ``unscored`` when the reranker raised, in which case the claim records
      ``scoring_error`` and the governor defers it (fails closed: never ``supported``).
    - claim support: the lexical coverage of the claim by the union of its on-topic cited passages (words may come
      from different passages). Instruction-like passage sentences ("ignore previous instructions", "mark as
      supported") are removed first (``engine.safety.strip_instructions``).

Case match
    When the case's cancer type is known, a link is ``on_case`` only if the passage is about that cancer
    (``case_words``/``on_case``): whole words from a small synonym table per type (``CASE_TERMS``: colon cancer ->
    colon, colonic, colorectal; hepatocellular carcinoma -> hepatocellular, HCC, liver cancer, primary liver; ...),
    minus mentions of other cancers that share those words ("Ovarian Germ Cell Tumors", "Small Cell Lung Cancer" for
    NSCLC). The passage's title (the guideline's name) decides when it names a cancer; within an on-case guideline a
    heading naming such another cancer ("Burkitt Lymphoma" for DLBCL) is off case; a title naming no cancer falls back
    to the section, then the text. A verbatim melanoma sentence is true, but not about a pancreatic patient; the
    governor blocks a claim none of whose passages is on the case.

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
from dataclasses import dataclass

from engine.safety import _content_words, claim_rule_issues, drug_names, split_sentences, strip_instructions
from engine.state import Claim, Contradiction, Draft, EvidenceLink, Ledger, LinkVerdict, Passage

SUPPORTED = 0.7  # share of the claim's content words found in its cited passages
PARTIAL = 0.5  # below this the claim is unsupported (same floor as the Critic's support rule)
CE_ON_TOPIC = 0.0  # cross-encoder logit; below it the passage is not about the claim
CONTRADICTION_OVERLAP = 0.5
STRONG_OVERLAP = 0.8

Scorer = Callable[[str, list[str]], list[float]]  # kb.rerank_scores(query, texts)

_NEGATION_RE = re.compile(
    r"\b(?:not|never(?![- ]smok)|cannot|avoid(?:s|ed)?|contraindicated|discouraged|"  # "never smokers": who, not no
    r"no (?:benefit|role|evidence|longer)|(?:do|does|did|should|must|is|are|was|were)n't)\b", re.IGNORECASE)
_SCOPE_RE = re.compile(r"\b(?:\d+(?:\.\d+)?%?|i{1,3}[abc]?|iv[abc]?)\b", re.IGNORECASE)
_CLAIM_SPLIT_RE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<=[.!?;])\s+(?=[A-Z(\"'])|\n+")


def split_claim(text: str) -> list[str]:
    """Sentences of one recommendation; unlike passage sentences, short ones are kept (they are claims too)."""
    parts = [p.strip().lstrip("-*• ").strip() for p in _CLAIM_SPLIT_RE.split(text or "")]
    return [p for p in parts if p] or [text.strip()]


# An adverbial clause gives a reason or a circumstance, not what the sentence asserts: "TNT was studied because many
# patients do not receive all of the chemotherapy" says nothing against TNT (the audit's rectal answer was deferred
# for it). Relative clauses ("a drug that did not improve survival") can be the assertion and stay.
_ADVERBIAL_CLAUSE_RE = re.compile(r"\b(?:because|since|although|though|whereas|while|when|unless|if)\b[^,;]*",
                                  re.IGNORECASE)


def negative(text: str) -> bool:
    """The sentence asserts a negation (outside its adverbial clauses)."""
    return bool(_NEGATION_RE.search(_ADVERBIAL_CLAUSE_RE.sub(" ", text)))


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


# Words that name the case's cancer, per cancer type engine.facts can emit (matched whole-word, case-insensitive;
# ``(?-i:...)`` for acronyms such as ALL). Second: mentions of other cancers that share those words, removed before
# the first is searched ("Ovarian Germ Cell Tumors" is not about ovarian epithelial cancer, "Non-Small Cell Lung
# Cancer" is not about small cell lung cancer).
_BREAST = r"breast|DCIS|LCIS|ductal carcinoma|lobular carcinoma"
_HEAD_NECK = (r"head and neck|oropharyn\w*|hypopharyn\w*|laryn\w*|oral cavity|oral tongue|lip and oral|"
              r"paranasal|nasal cavity|squamous neck")
_SCLC = r"(?<!non-)(?<!non )small[- ]cell lung (?:cancers?|carcinomas?)|(?-i:SCLC)"
_NSCLC = r"non-?[- ]?small[- ]cell lung (?:cancers?|carcinomas?)|(?-i:NSCLC)"
CASE_TERMS: dict[str, tuple[str, str]] = {
    "breast cancer": (_BREAST, ""),
    "triple-negative breast cancer": (_BREAST, ""),
    "HER2-positive breast cancer": (_BREAST, ""),
    "hormone receptor-positive breast cancer": (_BREAST, ""),
    "male breast cancer": (_BREAST, ""),
    "non-small cell lung cancer": (r"non-?[- ]?small[- ]cell|(?-i:NSCLC)|lung", _SCLC),
    "small cell lung cancer": (r"small[- ]cell lung|(?-i:SCLC)|lung", _NSCLC),
    "lung cancer": (r"lung|(?-i:N?SCLC)", ""),
    "colon cancer": (r"colon|colonic|colorectal|(?-i:CRC)", ""),
    "rectal cancer": (r"rectal|rectum|colorectal|(?-i:CRC)", ""),
    "colorectal cancer": (r"colon|colonic|rectal|rectum|colorectal|(?-i:CRC)", ""),
    "pancreatic neuroendocrine tumor": (r"pancreatic neuroendocrine|(?-i:pNETs?)|islet[- ]cell", ""),
    "pancreatic adenocarcinoma": (r"pancreatic|pancreas|(?-i:PDAC)",
                                  r"pancreatic neuroendocrine (?:tumou?rs?|neoplasms?|carcinomas?)|(?-i:pNETs?)|"
                                  r"islet[- ]cell tumou?rs?"),
    "prostate cancer": (r"prostate|prostatic|(?-i:mCRPC)", ""),
    # PDQ's Wilms summary holds the other childhood kidney tumours ("Ewing Sarcoma of the Kidney", "Renal Cell
    # Carcinoma (RCC)"): not a Wilms case's
    "Wilms tumor": (r"wilms", r"renal cell|rhabdoid|clear[- ]cell sarcoma|mesoblastic|ewing|myoepithelial|"
                              r"nephroblastoma|cystic nephroma|anaplastic sarcoma|synovial sarcoma"),
    "uveal melanoma": (r"uveal|intraocular|ocular melanomas?|eye melanomas?|choroidal", ""),
    "melanoma": (r"melanomas?", r"(?:uveal|intraocular|ocular|choroidal|conjunctival)(?: \(eye\))? melanomas?"),
    "ovarian cancer": (r"ovarian|ovary|ovaries|fallopian|primary peritoneal|high[- ]grade serous",
                       r"ovarian (?:germ[- ]cell|borderline|low malignant potential) tumou?rs?|"
                       r"(?:germ[- ]cell|borderline) tumou?rs? of the ovary"),
    "gastric cancer": (r"gastric|stomach|gastro-?o?esophageal junction|(?-i:GEJ)", ""),
    "esophageal cancer": (r"o?esophag\w*|gastro-?o?esophageal junction", ""),
    "hepatocellular carcinoma": (r"hepatocellular|(?-i:HCC)|hepatoma|liver (?:cancers?|carcinomas?|tumou?rs?)|"
                                 r"primary liver", ""),
    "cholangiocarcinoma": (r"cholangiocarcinomas?|bile ducts?|biliary", ""),
    "gallbladder cancer": (r"gallbladder", ""),
    "renal cell carcinoma": (r"renal cell|(?-i:RCC)|kidney cancers?", ""),
    "urothelial carcinoma": (r"urothelial|bladder|transitional[- ]cell",
                             r"(?:urothelial|transitional[- ]cell) (?:cancers?|carcinomas?) of the renal pelvis"
                             r"(?: and ureter)?|renal pelvis and ureter|upper[- ]tract urothelial"),
    "upper tract urothelial carcinoma": (r"renal pelvis|ureter(?:al|ic|s)?|upper[- ]tract", ""),
    "glioblastoma": (r"glioblastomas?|(?-i:GBM)|gliomas?|brain tumou?rs?|central nervous system tumou?rs?", ""),
    "glioma": (r"gliomas?|glioblastomas?|astrocytomas?|oligodendrogliomas?|brain tumou?rs?|"
               r"central nervous system tumou?rs?", ""),
    "soft tissue sarcoma": (r"soft[- ]tissue|sarcomas?|leiomyosarcomas?|liposarcomas?",
                            r"(?:ewing|kaposi)(?:'s)? sarcomas?|rhabdomyosarcomas?"),
    "gastrointestinal stromal tumor": (r"gastrointestinal stromal|(?-i:GISTs?)", ""),
    "mesothelioma": (r"mesotheliomas?", ""),
    "neuroendocrine tumor": (r"neuroendocrine|carcinoids?|(?-i:p?NETs?)", ""),
    "gastrointestinal neuroendocrine tumor": (r"neuroendocrine|carcinoids?|(?-i:NETs?)",
                                              r"pancreatic neuroendocrine (?:tumou?rs?|neoplasms?|carcinomas?)|"
                                              r"(?-i:pNETs?)|islet[- ]cell tumou?rs?"),
    "diffuse large B-cell lymphoma": (r"diffuse large B[- ]cell|(?-i:DLBCL)|aggressive,? (?:[\w/]+ )*?B[- ]cell|"
                                      r"B[- ]cell non-?[- ]?hodgkin|B[- ]cell (?-i:NHL)",
                                      r"indolent,? (?:[\w/]+ )*?B[- ]cell non-?[- ]?hodgkin lymphomas?|"
                                      r"burkitt(?:-like)?(?: lymphomas?)?|lymphoblastic lymphomas?|"
                                      r"mantle[- ]cell lymphomas?|follicular lymphomas?|marginal zone lymphomas?|"
                                      r"[\w-]* ?T[- ]cell lymphomas?|histiocytic lymphomas?|"
                                      r"(?<!non-)(?<!non )hodgkin(?:'s)? lymphomas?"),
    "indolent B-cell lymphoma": (r"indolent|follicular|marginal[- ]zone|(?-i:MALT)|lymphoplasmacytic",
                                 r"(?<!non-)(?<!non )hodgkin(?:'s)? lymphomas?|diffuse large B[- ]cell|(?-i:DLBCL)|"
                                 r"aggressive,? (?:[\w/]+ )*?B[- ]cell|burkitt(?:-like)?(?: lymphomas?)?|"
                                 r"lymphoblastic lymphomas?|mantle[- ]cell lymphomas?|[\w-]* ?T[- ]cell lymphomas?"),
    "Hodgkin lymphoma": (r"hodgkin(?:'s)?", r"non-?[- ]?hodgkin(?:'s)?"),
    "mycosis fungoides": (r"mycosis fungoides|s[ée]zary|cutaneous T[- ]cell", ""),
    "primary CNS lymphoma": (r"primary (?:CNS|central nervous system) lymphomas?|(?-i:PCNSL)", ""),
    "lymphoma": (r"lymphomas?", ""),
    "acute myeloid leukemia": (r"acute (?:myeloid|myelogenous|non-?lymphocytic)|(?-i:AML)", ""),
    "chronic myeloid leukemia": (r"chronic (?:myeloid|myelogenous)|(?-i:CML)", ""),
    "chronic lymphocytic leukemia": (r"chronic lymphocytic|small lymphocytic|(?-i:CLL|SLL)", ""),
    "acute lymphoblastic leukemia": (r"acute lympho(?:blastic|cytic)|(?-i:ALL)", ""),
    "hairy cell leukemia": (r"hairy[- ]cell", ""),
    "leukemia": (r"leuka?emias?|(?-i:AML|CLL|ALL|CML)", ""),
    # the plasma cell neoplasms summary also treats amyloidosis, MGUS, Waldenstrom and plasmacytomas apart: a section
    # about one of them is not about a myeloma case (the audit's myeloma case quoted the amyloidosis induction line)
    "multiple myeloma": (r"myelomas?", r"amyloidosis|monoclonal gammopathy|(?-i:MGUS)|waldenstr\w+|"
                                       r"macroglobulinemia|plasmacytomas?"),
    "head and neck squamous cell carcinoma": (_HEAD_NECK + r"|(?-i:HNSCC)", ""),
    # one site's case: the general head and neck pages stay on case, another site's summary does not
    "oral cavity cancer": (r"oral cavity|lip and oral|oral tongue|mouth|head and neck|(?-i:HNSCC)",
                           r"oropharyn\w*|hypopharyn\w*|laryn\w*|nasopharyn\w*|paranasal|salivary"),
    "oropharyngeal cancer": (r"oropharyn\w*|tonsil\w*|base of (?:the )?tongue|head and neck|(?-i:HNSCC)",
                             r"hypopharyn\w*|laryn\w*|nasopharyn\w*|oral cavity|lip and oral|paranasal|salivary"),
    "laryngeal cancer": (r"laryn\w*|(?:supra|sub)?glott\w*|vocal cords?|head and neck|(?-i:HNSCC)",
                         r"oropharyn\w*|hypopharyn\w*|nasopharyn\w*|oral cavity|lip and oral|paranasal|salivary"),
    "hypopharyngeal cancer": (r"hypopharyn\w*|p[iy]riform|postcricoid|head and neck|(?-i:HNSCC)",
                              r"oropharyn\w*|(?<!hypopharynx and )laryn\w*|nasopharyn\w*|oral cavity|lip and oral|"
                              r"paranasal|salivary"),
    "nasopharyngeal carcinoma": (r"nasopharyn\w*|(?-i:NPC)", ""),
    "thyroid cancer": (r"thyroid", ""),
    "cervical cancer": (r"cervix|cervical (?:cancers?|carcinomas?|neoplasia)", ""),
    "endometrial cancer": (r"endometri(?:al|um)|uterine (?:cancers?|carcinomas?)|corpus uteri", ""),
    "thymic carcinoma": (r"thymic|thymomas?", ""),
    "adrenocortical carcinoma": (r"adrenocortical|adrenal cortical", ""),
    "Merkel cell carcinoma": (r"merkel", ""),
    "anal cancer": (r"anal|anus", ""),
    "testicular cancer": (r"testicular|testis|testes|seminomas?|nonseminomas?|nonseminomatous", r"extragonadal"),
    "penile cancer": (r"penile|penis", ""),
    "vulvar cancer": (r"vulvar|vulva", ""),
    "vaginal cancer": (r"vaginal|vagina", ""),
    "small intestine cancer": (r"small (?:intestine|intestinal|bowel)|jejun\w*|duoden\w*", ""),
    "Kaposi sarcoma": (r"kaposi(?:'s)?", ""),
    "Ewing sarcoma": (r"ewing(?:'s)?", ""),
    "osteosarcoma": (r"osteosarcomas?|osteogenic|(?-i:UPS) of bone", ""),
    "neuroblastoma": (r"(?:ganglio)?neuroblastomas?", ""),
    "retinoblastoma": (r"retinoblastomas?", ""),
    "rhabdomyosarcoma": (r"rhabdomyosarcomas?", ""),
    "uterine sarcoma": (r"uterine sarcomas?|uterine leiomyosarcomas?|endometrial stromal|carcinosarcomas?", ""),
    "myelodysplastic syndrome": (r"myelodysplastic|(?-i:MDS)", r"myelodysplastic/myeloproliferative"),
    "skin cancer": (r"skin|basal cell|cutaneous squamous", ""),
    "cancer of unknown primary": (r"unknown primary|occult primary|(?-i:CUP)", ""),
}
# Words that say nothing about which cancer it is: a cancer type without a CASE_TERMS entry is matched on the rest.
_GENERIC = frozenset("cancer cancers carcinoma carcinomas adenocarcinoma tumour tumor tumours tumors neoplasm "
                     "malignancy disease metastatic advanced early locally stage cell cells large small non type "
                     "primary adult childhood".split())
# Names some cancer: a title or section heading holding one is specific, and decides whether a passage is on case.
# Umbrella words ("GI Cancers", "Thoracic Tumors") name no one cancer: such a title falls back to section and text.
_NAMES_A_CANCER = re.compile(
    r"\b(?:" + "|".join(f"(?:{a})" for a, _ in CASE_TERMS.values()) + r")\b|"
    r"\b(?!(?:of|and|the|with|for|in|to|or|cancer|advanced|metastatic|recurrent|other|all|adult|childhood|"
    r"treatment|early|late|stage|primary|secondary|rare|solid|common|human|these|this|most|many|several|various|"
    r"multiple|gi|gastrointestinal|digestive|gyn(?:a)?ecologic(?:al)?|thoracic|genitourinary|gu|urologic(?:al)?|"
    r"ha?ematologic(?:al)?|blood|p(?:a)?ediatric)\b)[a-z][a-z-]+ (?:cancers?|carcinomas?|tumou?rs?|"
    r"sarcomas?|lymphomas?|leuka?emias?|melanomas?|neoplasms?|myelomas?)\b|"
    r"\b\w*(?:omas?|histiocytosis|trophoblastic|myelodysplastic|myeloproliferative)\b", re.IGNORECASE)


@dataclass(frozen=True)
class CaseTerms:
    """How to tell that a text is about the case's cancer (``case_words``)."""
    cancer_type: str
    names: re.Pattern[str]  # a mention of the case's cancer
    others: re.Pattern[str] | None  # other cancers sharing its words: removed before ``names`` is searched

    def mentioned(self, text: str) -> bool:
        return bool(self.names.search(self.others.sub(" ", text) if self.others else text))


def case_words(cancer_type: str | None) -> CaseTerms | None:
    """How the case's cancer type is named; None when the type is unknown (then every passage is on case)."""
    if not cancer_type or not cancer_type.strip():
        return None
    names, others = CASE_TERMS.get(cancer_type.strip(), ("", ""))
    if not names:  # a type without an entry: its distinctive words, whole words only
        words = sorted(w for w in _content_words(cancer_type) - _GENERIC if len(w) > 2)
        if not words:
            return None
        names = "|".join(re.escape(w) for w in words)
    return CaseTerms(cancer_type, re.compile(rf"\b(?:{names})\b", re.IGNORECASE),
                     re.compile(rf"\b(?:{others})\b", re.IGNORECASE) if others else None)


def on_case(passage: Passage, terms: CaseTerms | None) -> bool:
    """The passage is about the case's cancer. Its title (the guideline's name) decides when it names a cancer;
    within an on-case guideline a heading naming another cancer that shares the case's words ("Burkitt Lymphoma" in
    the aggressive B-cell lymphoma summary, for a DLBCL case) is not on case. Only a title naming no cancer falls
    back to the section, then the text."""
    if terms is None:
        return True
    if _NAMES_A_CANCER.search(passage.title):
        return terms.mentioned(passage.title) and not any(
            terms.others and terms.others.search(part) and not terms.mentioned(part)
            for part in passage.section.split(" > "))
    if _NAMES_A_CANCER.search(passage.section):
        return terms.mentioned(passage.section)
    return terms.mentioned(passage.text)


def _lexical(words: set[str], text: str) -> float:
    return len(words & _content_words(text)) / len(words) if words else 0.0


def _verdict(lexical: float, ce: float | None, scored: bool) -> LinkVerdict:
    if not scored:
        return "unscored"
    if ce is not None and not ce >= CE_ON_TOPIC:  # NaN compares False both ways: a NaN logit is no evidence
        return "off_topic"
    return "supports" if lexical >= SUPPORTED else "partial" if lexical >= PARTIAL else "unsupported"


def _claim(cid: str, rec_index: int, text: str, evidence: tuple[str, ...], sentence_ids: tuple[str, ...],
           by_id: dict[str, Passage], scorer: Scorer | None,
           case: CaseTerms | None) -> tuple[Claim, list[Contradiction]]:
    found = _contradictions(cid, text, evidence, by_id, case)
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
    # an evidence-locked claim is a sentence of its cited passage, word for word: the cross-encoder's veto (a claim
    # citing a passage about something else) cannot apply, and a long passage about much else had vetoed its own
    # sentences ("The FDA approved sotorasib for ..." blocked in a QA pass); its score is still shown
    verbatim = [bool(sentence_ids) and _lexical(words, t) == 1.0 for t in clean]
    links = tuple(EvidenceLink(p.id, round(_lexical(words, t), 3), None if s is None else round(s, 3),
                               _verdict(_lexical(words, t), None if own else s, not error), on_case(p, case))
                  for p, t, s, own in zip(cited, clean, ce, verbatim))
    on_topic = " ".join(t for t, link in zip(clean, links) if link.verdict != "off_topic")
    support = round(_lexical(words, on_topic), 3)
    return Claim(id=cid, recommendation=rec_index, text=text, evidence=evidence, links=links, support=support,
                 rule_issues=issues, scoring_error=error, sentence_ids=sentence_ids), found


def _contradictions(cid: str, text: str, evidence: tuple[str, ...], by_id: dict[str, Passage],
                    case: CaseTerms | None = None) -> list[Contradiction]:
    """Sentences of any retrieved passage about the case's cancer that state the opposite (another cancer's
    guideline does not contradict this one's: the audit's CML answer was deferred over an AML sentence); only a
    cited passage can be ``strong``."""
    found = []
    for p in by_id.values():
        if p.id not in evidence and not on_case(p, case):
            continue
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
