"""Clinician QA pass 16: a case that progressed after first-line therapy is a later-line case (it had been read as
neither, its "first-line" taken for the line asked about); acute promyelocytic leukemia is AML (it had been a
generic "leukemia" and was given adult ALL passages); a negative metastatic work-up is no stage IV (an adjuvant
breast case had scored stage IV for "metastatic workup negative")."""

import pytest

from engine.config import DEFAULT_TREATMENT_KEYWORDS, RouterConfig
from engine.facts import extract_facts
from engine.nodes.router import score_facts


def facts(text: str):
    return extract_facts(text, genes=["EGFR", "KRAS", "FLT3", "NPM1"], treatment_keywords=DEFAULT_TREATMENT_KEYWORDS,
                         rare_cancers=[])


@pytest.mark.parametrize("text", [
    "Stage IV NSCLC progressed after 6 months of first-line pembrolizumab monotherapy, new liver metastases. "
    "What second-line options?",
    "Metastatic clear cell renal cell carcinoma progressing after first-line pembrolizumab plus axitinib. "
    "What second-line options?",
    "Metastatic colon cancer, disease progression following first-line FOLFOX plus bevacizumab. Options?",
    "Metastatic colon cancer, first-line FOLFOX for 6 months, now progressing. What second-line options?",
])
def test_progression_after_first_line_is_a_later_line(text):
    assert facts(text).line == "later"


@pytest.mark.parametrize("text", [
    "Stage IV NSCLC, EGFR exon 19 deletion, untreated. What first-line therapy?",
    "Stage IV NSCLC, PD-L1 80%. What first-line therapy?",
    "NSCLC whose disease has not progressed after 4 cycles of first-line carboplatin and pemetrexed. Options?",
    "Ovarian cancer with disease control on first-line platinum. What maintenance?",
])
def test_a_first_line_case_stays_first_line(text):
    assert facts(text).line == "first"


def test_a_first_line_question_after_adjuvant_progression_is_not_judged():
    # metastatic relapse after adjuvant therapy may be treated as first line: neither is read
    assert facts("Progressed on adjuvant osimertinib. What first-line options?").line is None


@pytest.mark.parametrize("text", [
    "Newly diagnosed acute promyelocytic leukemia, PML-RARA positive, WBC 3,000. What induction therapy?",
    "APL, PML-RARA positive. What induction therapy?",
    "Newly diagnosed acute leukaemia with PML::RARA fusion. Induction?",
    "Acute leukemia, t(15;17) on karyotype. What induction?",
])
def test_acute_promyelocytic_leukemia_is_aml(text):
    assert facts(text).cancer_type == "acute myeloid leukemia"


@pytest.mark.parametrize("text, cancer_type", [
    ("Acute leukemia, PML-RARA negative. Flow cytometry pending.", "leukemia"),  # a fusion found absent: no APL
    ("Adult acute lymphoblastic leukemia, Philadelphia positive.", "acute lymphoblastic leukemia"),
    ("Breast cancer; aPL antibodies positive.", "breast cancer"),  # antiphospholipid, not APL
])
def test_other_leukemias_are_not_apl(text, cancer_type):
    assert facts(text).cancer_type == cancer_type


ADJUVANT = ("58-year-old woman, 2.8 cm ER-positive PR-positive HER2-negative invasive ductal carcinoma, "
            "node-negative after mastectomy; metastatic workup negative. What adjuvant therapy is recommended?")


@pytest.mark.parametrize("text", [
    ADJUVANT,
    "Breast cancer, node-negative; metastatic work-up was negative.",
    "Breast cancer, node-negative; negative metastatic workup.",
    "Breast cancer; metastatic evaluation: unremarkable.",
    "Breast cancer; no metastatic disease.",
    "Breast cancer; staging scans negative for metastatic disease.",
])
def test_negative_metastatic_workup_is_not_stage_iv(text):
    f = facts(text)
    assert f.stage != "IV" and "metastatic" not in (f.stage_text or "").replace("non-metastatic", "")


@pytest.mark.parametrize("text", [
    "Breast cancer; metastatic workup pending.",  # not a result: the word still reads as it did
    "Breast cancer; metastatic workup negative in the chest, but bone metastases on MRI.",
    "Triple-negative metastatic breast cancer.",  # "negative" before "metastatic" without a work-up
])
def test_metastatic_words_still_stage_iv(text):
    assert facts(text).stage == "IV"


def test_router_no_longer_scores_stage_iv_for_a_negative_workup():
    factors = [f.name for f in score_facts(facts(ADJUVANT), RouterConfig()).factors]
    assert "stage_iv" not in factors


@pytest.mark.parametrize("text, stage, extent", [
    ("Ductal carcinoma in situ, 1.5 cm, ER-positive, excised by lumpectomy with clear margins. Radiation?",
     "0", "resected"),
    ("64F, 2.1 cm ER-positive invasive ductal carcinoma, 1 of 3 sentinel nodes positive after lumpectomy. "
     "What adjuvant systemic therapy?", None, "resected"),
    ("Colon cancer s/p right hemicolectomy, pT3N1. Adjuvant?", "III", "resected"),
    ("Borderline resectable pancreatic adenocarcinoma abutting the SMV. Is neoadjuvant therapy recommended?",
     None, "borderline resectable"),
    ("Resectable pancreatic adenocarcinoma of the head. Neoadjuvant?", None, "resectable"),
])
def test_an_operation_done_and_resectability_are_the_cases_extent(text, stage, extent):
    """QA: "after lumpectomy", "excised by lumpectomy" and "borderline resectable" had left the case's setting
    unstated ("applies if ... adjuvant (not stated for this case)"); DCIS had no stage."""
    f = facts(text)
    assert f.stage == stage and extent in (f.stage_text or "").split(", ")


@pytest.mark.parametrize("text", [
    "Breast cancer, 2 cm. Should she have a lumpectomy?",  # asked, not done
    "Invasive ductal carcinoma with associated DCIS, 2 cm. Adjuvant?",  # invasive: no stage 0
    "Unresectable pancreatic adenocarcinoma. Options?",
])
def test_what_is_asked_or_invasive_is_not_read_so(text):
    f = facts(text)
    extent = f.stage_text or ""
    assert f.stage != "0" and "resected" not in extent and "borderline" not in extent


@pytest.mark.parametrize("text, age", [
    ("64F with 2.1 cm ER-positive breast cancer after lumpectomy. Adjuvant?", 64),
    ("72 M, stage IV NSCLC. First-line?", 72),
    ("[AGE_1]M with stage IV NSCLC. First-line?", 90),  # over 89, redacted
    ("Breast cancer cT2N1M0. Adjuvant?", None),
    ("Foley 16F placed; colon cancer.", None),
    ("Stage IV NSCLC, ECOG 1F.", None),
])
def test_a_notes_age_and_sex_shorthand_gives_the_age(text, age):
    """QA round 2: "64F with breast cancer after lumpectomy" had no age (case fit's age checks skipped)."""
    assert facts(text).age == age


@pytest.mark.parametrize("tnm, stage", [
    ("cT2N1M0", "II"), ("T1N0M0", "I"), ("T3N0M0", "II"), ("T1N1M0", "II"), ("T3N1M0", "III"),
    ("T2N2M0", "III"), ("T4N0M0", "III"), ("T1N3M0", "III"), ("TisN0M0", "0"), ("T2N1M1", "IV"),
    ("TxN1M0", None),
])
def test_breast_tnm_gives_the_anatomic_stage_group(tnm: str, stage: str | None) -> None:
    """QA: breast cT2N1M0 (stage IIB) was read as stage III by the routing rule ("N1-3: III")."""
    assert facts(f"ER-positive breast cancer, {tnm}. Adjuvant?").stage == stage


def test_a_breast_stage_from_tnm_is_used_by_case_fit():
    from engine.casefit import assess, case_from_facts

    case = case_from_facts(facts("52-year-old woman, ER-positive HER2-negative breast cancer, cT2N1M0. "
                                 "Adjuvant?"))
    assert case.stage_name == "stage II"
    stage_iii = assess("For stage III disease, neoadjuvant chemotherapy is standard.", case)
    assert stage_iii.verdict == "contradicts"
