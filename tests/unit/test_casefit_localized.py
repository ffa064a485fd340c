""""Localized" disease with no stage given is not metastatic: the audit's localized prostate case (Gleason 6, cT1c)
had metastatic-disease lines only qualified ("applies if ...") and its localized lines too."""

import pytest

from engine.casefit import assess, case_from_facts
from engine.facts import extract_facts, merge_facts

AUDIT = ("68-year-old man, localized prostate adenocarcinoma, Gleason 3+3=6 (grade group 1), PSA 5.2 ng/mL, cT1c, "
         "2 of 12 cores positive. What management is recommended?")


def facts(text: str):
    return extract_facts(text, genes=["EGFR"], treatment_keywords=[], rare_cancers=[])


def verdict(note: str, sentence: str) -> str:
    return assess(sentence, case_from_facts(facts(note))).verdict


def test_a_localized_case_fits_localized_lines_and_not_metastatic_ones():
    assert verdict(AUDIT, "In the ProtecT trial, men with clinically localized prostate cancer were screened.") \
        == "fits"
    assert verdict(AUDIT, "Docetaxel is a standard option for metastatic hormone-sensitive prostate cancer.") \
        == "contradicts"
    assert verdict(AUDIT, "Stage IV prostate cancer is treated with androgen deprivation.") == "contradicts"
    # which of stages I-III is not known: a stage I/II line is qualified, not withheld
    assert verdict(AUDIT, "Radical prostatectomy is an option for stage I and stage II disease.") == "unknown"


@pytest.mark.parametrize("note", [
    "Prostate cancer with localized pain in the lower back.",  # a symptom
    "Lung cancer, disease not localized.",
    "Colon cancer with a lesion localized to the liver.",
    "Metastatic, previously localized prostate cancer.",  # the stage says more
])
def test_other_uses_of_localized_are_not_localized_disease(note: str):
    assert verdict(note, "Docetaxel is a standard option for metastatic prostate cancer.") != "contradicts"


def test_a_later_stage_replaces_localized():
    merged = merge_facts(facts(AUDIT), facts("Now bone metastases. Options?"))
    assert merged.stage == "IV" and "localized" not in (merged.stage_text or "")
    assert assess("Docetaxel is a standard option for metastatic prostate cancer.", case_from_facts(merged)).verdict \
        == "fits"


@pytest.mark.parametrize("stage, expected", [("stage IIIB", "contradicts"), ("stage IIA", "fits")])
def test_hodgkin_early_favorable_sections_are_stages_one_and_two(stage: str, expected: str):
    """PDQ's Hodgkin lymphoma sections are named by prognostic group, not stage: "Early Favorable/Unfavorable
    Classic HL" is stage I-II, so its ABVD items do not apply to a stage IIIB case (the audit's case was released
    with the early-favorable options)."""
    case = case_from_facts(facts(f"30-year-old with classical Hodgkin lymphoma, {stage}. First-line treatment?"))
    section = ("## Treatment of Early Favorable Classic HL > ### Treatment Options for Early Favorable Classic HL > "
               "#### Chemotherapy with or without radiation therapy")
    assert assess("ABVD for two to four cycles plus involved-field radiation therapy.", case, (section,)).verdict == \
        expected


@pytest.mark.parametrize("note", [
    "58-year-old with limited-stage small cell lung cancer, ECOG 0. Standard treatment?",
    # the audit's held-out vignette: limited stage by its definition
    "Heavy smoker, 59, with a right hilar mass and mediastinal nodes confined to one radiation port, biopsy small "
    "cell carcinoma, no distant spread on PET. What treatment?",
])
def test_limited_stage_small_cell_lung_cancer_fits_the_limited_stage_sections_only(note):
    """A limited-stage SCLC case had no stage: PDQ's limited- and extensive-stage sections were both only qualified
    (and the audit's vignette was offered its extensive-stage options beside the limited-stage ones)."""
    f = facts(note)
    assert f.cancer_type == "small cell lung cancer" and f.stage is None and f.stage_text == "limited-stage"
    case = case_from_facts(f)
    assert assess("Chemotherapy.", case, ("## Treatment of Limited-Stage SCLC",)).verdict == "fits"
    assert assess("Chemotherapy.", case, ("## Treatment of Extensive-Stage SCLC",)).verdict == "contradicts"
    assert verdict(note, "Stage IV disease is treated with palliative chemotherapy.") == "contradicts"


def test_limited_stage_is_read_only_for_lung_cancer():
    assert facts("Colon cancer with limited disease on imaging. Options?").stage_text is None
    assert facts("Small cell lung cancer with limited disease on imaging. Options?").stage_text == "limited-stage"


def test_the_export_shows_limited_stage_as_the_stage(tmp_path):
    from oncotui.export import consult_markdown
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "Limited-stage small cell lung cancer, ECOG 0. Standard treatment?"))
    assert "- Stage: limited-stage\n" in consult_markdown(engine.store, "PT-0001")
