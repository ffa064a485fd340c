"""Children's solid tumours (QA session 17): a 3-year-old's "Wilms tumor ... after upfront nephrectomy" was read
as renal cell carcinoma (the operation implied it) and released adjuvant pembrolizumab from the adult kidney
guideline; a 2-year-old's high-risk neuroblastoma had no cancer type and was offered intermediate-risk items."""

from __future__ import annotations

import pytest

from engine.casefit import assess, case_from_facts
from engine.config import Settings
from engine.facts import extract_facts
from engine.ledger import case_words, on_case
from engine.nodes.hitl_gate import _ASKED_RE, _subject_words
from engine.state import Passage

WILMS = ("3-year-old boy with unilateral Wilms tumor of the right kidney, favorable histology, stage II after upfront "
         "nephrectomy with negative lymph nodes sampled. No metastases on chest CT. What adjuvant treatment?")
NEUROBLASTOMA = ("2-year-old girl with high-risk neuroblastoma, MYCN amplified, stage M with bone marrow and bone "
                 "metastases. Started induction chemotherapy. What does the overall treatment plan consist of?")


def facts(note: str):
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


@pytest.mark.parametrize("note, cancer", [
    (WILMS, "Wilms tumor"), (NEUROBLASTOMA, "neuroblastoma"),
    ("Nephroblastoma in a 4-year-old.", "Wilms tumor"),
    ("Bilateral retinoblastoma, 18 months old.", "retinoblastoma"),
    ("Embryonal rhabdomyosarcoma of the orbit.", "rhabdomyosarcoma"),
    ("Clear cell carcinoma after radical nephrectomy, pT3a.", "renal cell carcinoma"),  # still implied for adults
])
def test_childhood_tumours_are_their_own_cancer_types(note: str, cancer: str) -> None:
    assert facts(note).cancer_type == cancer


def _passage(title: str, section: str) -> Passage:
    return Passage("E1", "c1", title, "x.md", section, None, "Text.", 0.2, 4.0, True)


def test_a_wilms_case_is_answered_from_the_wilms_guideline_only() -> None:
    terms = case_words("Wilms tumor")
    title = "Wilms Tumor and Other Childhood Kidney Tumors Treatment (PDQ®) - NCI"
    assert on_case(_passage(title, "Wilms Tumor > Treatment of Wilms Tumor"), terms)
    assert on_case(_passage(title, "General Information About Childhood Kidney Tumors"), terms)
    assert not on_case(_passage(title, "Ewing Sarcoma of the Kidney > Treatment"), terms)
    assert not on_case(_passage(title, "Renal Cell Carcinoma (RCC) > Treatment of RCC"), terms)
    assert not on_case(_passage("Renal Cell Cancer Treatment (PDQ®) - NCI", "Stage I RCC"), terms)


def test_stage_v_wilms_is_bilateral_and_not_a_stage_ii_case() -> None:
    fit = assess("Preoperative chemotherapy is given.", case_from_facts(facts(WILMS)),
                 ["Treatment of Wilms Tumor > Treatment of stage V Wilms tumor and those predisposed to developing "
                  "bilateral Wilms tumor"])
    assert fit.verdict == "contradicts"


def test_non_high_risk_is_not_high_risk() -> None:
    high = case_from_facts(facts(NEUROBLASTOMA))
    section = "Treatment of Non\u2013High-Risk Neuroblastoma > Intermediate-Risk Neuroblastoma"
    assert assess("Chemotherapy with or without surgery.", high, [section]).verdict == "contradicts"
    assert assess("Tandem transplant.", high, ["Treatment of High-Risk Neuroblastoma"]).verdict == "fits"


def test_what_does_the_plan_consist_of_names_no_subject() -> None:
    m = next(_ASKED_RE.finditer(NEUROBLASTOMA))
    assert _subject_words(m.group("mod"), set()) == []
