"""The patient's age against the population a guideline sentence states: the audit's fit 55-year-old with AML was
offered "... treatment approaches for older patients with AML" third, and an 84-year-old's myeloma case the
trial "aged 65 to 79 years". A case that states no age is not judged by it; a heading's age is not read (PDQ's
"Less-fit patients with significant comorbidities or advanced age (aged ≥80 years)" is one alternative of two)."""

import pytest

from engine.casefit import assess, case_from_facts
from engine.facts import age_readings, extract_facts, merge_facts


def facts(text: str):
    return extract_facts(text, genes=["FLT3"], treatment_keywords=[], rare_cancers=[])


def verdict(sentence: str, note: str, section: str = "") -> str:
    return assess(sentence, case_from_facts(facts(note)), [section] if section else []).verdict


@pytest.mark.parametrize("note, age", [
    ("A 78-year-old woman with AML.", 78), ("45 yo F, breast cancer", 45), ("Myeloma, aged 67, ECOG 1.", 67),
    ("Age: 55. Colon cancer.", 55), ("59 years old, stage III colon cancer", 59),
    ("A [AGE_1]-year-old man with myeloma.", 90),  # the redactor removed an age over 89
    ("Stage III colon cancer, 3 cm, ECOG 1, 70 kg.", None),
])
def test_the_patient_s_age_is_read_from_the_note(note, age):
    assert facts(note).age == age


@pytest.mark.parametrize("text, lo, hi, kind", [
    ("patients older than 60 years", 61, 120, ""),
    ("patients aged 70 years or older", 70, 120, ""),
    ("patients aged 65 to 79 years", 65, 79, ""),
    ("advanced age (aged ≥80 years)", 80, 120, ""),
    ("younger patients (<60 years) with IGH hypermutation", 0, 59, ""),  # the number says what "younger" means
    ("older patients (aged ≥60 years) with advanced Hodgkin lymphoma", 60, 120, ""),
    ("older patients with AML", 0, 0, "older"),
    ("younger adults with ALL", 0, 0, "younger"),
])
def test_a_population_s_age_is_read_from_a_guideline_sentence(text, lo, hi, kind):
    assert [(a, b, k) for _, _, a, b, k in age_readings(text)] == [(lo, hi, kind)]


@pytest.mark.parametrize("text", [
    "Adverse factors include age older than 60 years and an elevated LDH.",  # a factor, not a population
    "The median age was 66 years.",
    "infants aged <12 months with localized disease",  # not years
    "Older regimens were more toxic.",
])
def test_ages_that_are_not_a_population_are_not_read(text):
    assert age_readings(text) == []


OLDER = ("Low-dose cytarabine, decitabine, azacitidine, or best supportive care can be considered equivalently "
         "effective treatment approaches for older patients with AML.")
TRIAL = ("In a prospective randomized trial, 270 patients with newly diagnosed myeloma who were transplant ineligible "
         "and aged 65 to 79 years received either I-VRd or isatuximab plus Rd.")


def test_an_age_outside_the_population_contradicts_and_one_inside_fits():
    fit = assess(OLDER, case_from_facts(facts("55-year-old with newly diagnosed AML. Induction?")))
    assert fit.verdict == "contradicts" and "the case is 55 years old" in fit.reason
    assert verdict(OLDER, "78-year-old with newly diagnosed AML. Induction?") == "fits"
    assert verdict(OLDER, "62-year-old with newly diagnosed AML. Induction?") == "fits"  # "older": 60 and over
    assert verdict("Younger patients in good health tolerate high-dose therapy.", "62-year-old with AML.") \
        == "contradicts"
    assert verdict(TRIAL, "84-year-old with newly diagnosed myeloma, not a transplant candidate.") == "contradicts"
    assert verdict(TRIAL, "72-year-old with newly diagnosed myeloma, not a transplant candidate.") == "fits"
    fit = assess(TRIAL, case_from_facts(facts("A [AGE_1]-year-old with myeloma.")))
    assert "the case is over 89 years old" in fit.reason  # the redacted age is never shown as a number


def test_a_case_without_an_age_is_not_judged_by_one_nor_by_a_heading_s():
    assert verdict(OLDER, "Newly diagnosed AML. Induction?") == "none"
    section = "Induction Therapy > Less-fit patients with significant comorbidities or advanced age (aged ≥80 years)"
    # a 72-year-old not a transplant candidate is one of PDQ's less-fit patients: the age is the other alternative
    assert verdict("Doublets can be used.", "72-year-old with myeloma, not a transplant candidate.", section) == "fits"


def test_a_later_turn_keeps_the_age():
    assert merge_facts(facts("A 78-year-old with AML."), facts("What about maintenance?")).age == 78


def test_the_export_shows_the_age_and_a_redacted_one_as_over_89(tmp_path):
    from oncotui.export import consult_markdown
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "A 93-year-old with metastatic pancreatic adenocarcinoma. Options?"))
    md = consult_markdown(engine.store, "PT-0001")
    assert "- Age: over 89" in md and "93-year" not in md and "Age: 93" not in md
    collect(lambda: engine.stream("PT-0002", "A 71-year-old with metastatic pancreatic adenocarcinoma. Options?"))
    assert "- Age: 71" in consult_markdown(engine.store, "PT-0002")
