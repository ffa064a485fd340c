"""Fitness for a treatment's intensity: a case "not a candidate for intensive chemotherapy" is not offered "the
standard of care for patients who are eligible for intensive chemotherapy", and a cisplatin-ineligible bladder case
not "cisplatin-based neoadjuvant chemotherapy for cisplatin-eligible patients"; the lines for unfit patients fit it.
A case that states no fitness is not judged by a sentence's own fitness (like its line of therapy); a heading's
("Less-fit patients ...") still qualifies."""

import pytest

from engine.casefit import assess, case_from_facts
from engine.facts import extract_facts, fitness_readings, merge_facts


def facts(text: str):
    return extract_facts(text, genes=["FLT3", "NPM1"], treatment_keywords=["cisplatin", "azacitidine"],
                         rare_cancers=[])


def verdict(sentence: str, note: str, section: str = "") -> str:
    return assess(sentence, case_from_facts(facts(note)), [section] if section else []).verdict


UNFIT_AML = ("78-year-old with newly diagnosed AML, NPM1 mutated, ECOG 2 and heart failure, not a candidate for "
             "intensive chemotherapy. What induction treatment?")
FIT_AML = "55-year-old with newly diagnosed AML, FLT3-ITD, fit for intensive chemotherapy. Which induction?"
INTENSIVE = ("The addition of an FLT3 inhibitor to induction chemotherapy is the standard of care for patients with "
             "FLT3-altered AML who are eligible for intensive chemotherapy.")
LOW_INTENSITY = ("Venetoclax combined with a hypomethylating agent is an option for patients who are not candidates "
                 "for intensive therapy.")


@pytest.mark.parametrize("note, target, value", [
    ("not a candidate for intensive chemotherapy", "intensive", "unfit"),
    ("Not a transplant candidate.", "transplant", "unfit"),
    ("ECOG 1, cisplatin-ineligible", "cisplatin", "unfit"),
    ("ineligible for cisplatin", "cisplatin", "unfit"),
    ("unable to tolerate intensive induction", "intensive", "unfit"),
    ("frail, lives alone", "general", "unfit"),
    ("fit for autologous stem cell transplant", "transplant", "fit"),
    ("transplant-eligible", "transplant", "fit"),
    ("fit for intensive chemotherapy", "intensive", "fit"),
    ("a candidate for ASCT", "transplant", "fit"),
])
def test_a_note_s_fitness_is_read_with_its_target(note, target, value):
    assert [(t, v) for _, _, t, v in fitness_readings(note)] == [(target, value)]


@pytest.mark.parametrize("text", [
    "not candidates for surgery",  # resectability, not an intensity
    "not eligible for participation in the trial",
    "ineligible for platinum-based chemotherapy",  # carboplatin may remain: no intensity judged
    "not a candidate for radiation therapy",
])
def test_other_eligibility_is_not_fitness(text):
    assert fitness_readings(text) == []


def test_a_question_about_fitness_states_none():
    assert facts("Myeloma, 70 years old. Is he a transplant candidate?").fitness == ()
    assert facts(UNFIT_AML).fitness == ("not a candidate for intensive chemotherapy",)


def test_an_unfit_case_is_not_offered_the_intensive_standard_and_fits_the_low_intensity_line():
    assert verdict(INTENSIVE, UNFIT_AML) == "contradicts"
    fit = assess(INTENSIVE, case_from_facts(facts(UNFIT_AML)))
    assert "not a candidate for intensive chemotherapy" in fit.reason
    assert verdict(LOW_INTENSITY, UNFIT_AML) == "fits"


def test_a_fit_case_is_the_other_way_round():
    assert verdict(INTENSIVE, FIT_AML) == "fits"
    assert verdict(LOW_INTENSITY, FIT_AML) == "contradicts"


def test_unfit_for_intensive_therapy_implies_no_transplant_but_not_the_reverse():
    transplant = "Allogeneic HCT in first remission is offered to transplant-eligible patients."
    assert verdict(transplant, UNFIT_AML) == "contradicts"
    no_transplant = "Not a transplant candidate; newly diagnosed AML."
    assert verdict(INTENSIVE, no_transplant) == "unknown"  # may still receive intensive induction
    both = "Newly diagnosed AML, fit for intensive chemotherapy but not a transplant candidate (no donor)."
    assert verdict("7 + 3 induction is standard for patients eligible for intensive chemotherapy.", both) == "fits"
    assert verdict("Older or frail patients may receive ivosidenib.", both) == "unknown"  # the two disagree


def test_cisplatin_ineligible_bladder_case():
    note = "Muscle-invasive urothelial carcinoma of the bladder, cT2N0M0, cisplatin-ineligible. Options?"
    cisplatin = "For cisplatin-eligible patients, cisplatin-based neoadjuvant chemotherapy followed by cystectomy."
    other = "For patients who are not candidates for cisplatin-based chemotherapy, there is no standard option."
    assert verdict(cisplatin, note) == "contradicts"
    assert verdict(other, note) == "fits"
    # cisplatin-ineligible says nothing about intensive therapy or chemotherapy as a whole
    assert verdict("Chemotherapy is an option for patients who are fit for chemotherapy.", note) == "unknown"


def test_a_case_that_states_no_fitness_is_not_judged_by_the_sentence_but_by_its_heading():
    note = "Newly diagnosed AML, FLT3-ITD. Induction?"
    assert verdict(INTENSIVE, note) == "fits"  # by its FLT3 condition, not "applies if eligible for intensive ..."
    section = "Multiple Myeloma > Induction Therapy > Less-fit patients with significant comorbidities"
    fit = assess("Daratumumab, lenalidomide and dexamethasone is an option.",
                 case_from_facts(facts("Newly diagnosed myeloma. Induction?")), [section])
    assert fit.verdict == "unknown" and "Less-fit patients" in fit.reason
    # PDQ's less-fit myeloma patients are the transplant-ineligible ones
    assert verdict("Daratumumab, lenalidomide and dexamethasone is an option.",
                   "Myeloma, 84 years old, not a transplant candidate. Induction?", section) == "fits"
    assert verdict("Daratumumab, lenalidomide and dexamethasone is an option.",
                   "Myeloma, frail, 84 years old. Induction?", section) == "fits"
    assert verdict("Daratumumab, lenalidomide and dexamethasone is an option.",
                   "Myeloma, 59, transplant-eligible. Induction?", section) == "contradicts"


def test_a_later_turn_s_fitness_replaces_the_earlier():
    merged = merge_facts(facts("Myeloma, not a transplant candidate."), facts("Now fit for transplant after rehab."))
    assert merged.fitness == ("fit for transplant",)
    assert merge_facts(facts(UNFIT_AML), facts("What about maintenance?")).fitness == facts(UNFIT_AML).fitness


def test_the_export_shows_the_fitness_the_case_was_judged_by(tmp_path):
    from oncotui.export import consult_markdown
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "Metastatic pancreatic adenocarcinoma, frail, ECOG 2. Options?"))
    assert "- Fitness: frail" in consult_markdown(engine.store, "PT-0001")
    collect(lambda: engine.stream("PT-0002", "Metastatic pancreatic adenocarcinoma, ECOG 1. Options?"))
    assert "- Fitness: not stated" in consult_markdown(engine.store, "PT-0002")


def test_a_cisplatin_ineligible_case_is_not_offered_cisplatin_unless_the_sentence_says_whom_it_is_for():
    note = "Muscle-invasive urothelial carcinoma of the bladder, cT2N0M0, ineligible for cisplatin. Options?"
    standard = ("Standard treatment for patients with muscle-invasive bladder cancers is neoadjuvant multiagent "
                "cisplatin-based chemotherapy followed by radical cystectomy.")
    fit = assess(standard, case_from_facts(facts(note)))
    assert fit.verdict == "contradicts" and "names cisplatin; the case is ineligible for cisplatin" in fit.reason
    assert verdict(standard, "Muscle-invasive bladder cancer, cT2N0M0. Options?") != "contradicts"
    assert verdict("Carboplatin may be substituted for cisplatin in patients with renal impairment.", note) \
        != "contradicts"
    assert verdict("Patients unfit for cisplatin-based chemotherapy may receive gemcitabine.", note) == "fits"


def test_the_unfit_aml_case_is_not_offered_an_flt3_line_for_its_flt3_negative_leukaemia():
    """The audit's case (NPM1 mutated, FLT3 negative) was offered quizartinib "for patients with AML and an FLT3-ITD
    variant" second: FLT3 was not read as a gene in a guideline sentence."""
    quizartinib = ("The FDA approved quizartinib in combination with induction therapy for patients with AML and an "
                   "*FLT3*-ITD variant.")
    fit = assess(quizartinib, case_from_facts(facts(UNFIT_AML.replace("NPM1 mutated", "NPM1 mutated, FLT3 negative"))))
    assert fit.verdict == "contradicts" and "the case is FLT3 negative" in fit.reason
    assert verdict(quizartinib, "Newly diagnosed AML, FLT3-ITD mutated, fit for intensive chemotherapy.") == "fits"
    assert facts("AML, FLT3-ITD mutated.").markers == ("FLT3-ITD mutated",)


def test_an_intensive_regimen_or_a_transplant_is_not_offered_to_a_case_unfit_for_it():
    """The audit's 79-year-old AML case "not fit for intensive induction" was offered PDQ's options list item
    "Cytarabine plus anthracycline plus midostaurin." third: it names no population, only an intensive regimen."""
    note = "79-year-old with newly diagnosed AML, not fit for intensive induction (ECOG 2, cardiac disease)."
    fit = assess("Cytarabine plus anthracycline plus midostaurin.", case_from_facts(facts(note)))
    assert fit.verdict == "contradicts" and "names anthracycline; the case is not fit for intensive induction" \
        in fit.reason
    assert verdict("Allogeneic HCT in first remission is considered for intermediate-risk disease.", note) \
        == "contradicts"  # unfit for intensive therapy: unfit for a transplant
    assert verdict("Venetoclax combined with azacitidine is an option.", note) != "contradicts"
    # a case that states no fitness, or is fit, is offered them
    assert verdict("Cytarabine plus anthracycline plus midostaurin.", "Newly diagnosed AML.") != "contradicts"
    assert verdict("Cytarabine plus anthracycline plus midostaurin.", FIT_AML) != "contradicts"
    myeloma = "Myeloma, 84 years old, not a transplant candidate."
    assert verdict("All patients received an autologous SCT and lenalidomide maintenance.", myeloma) == "contradicts"


def test_a_new_cancer_is_a_new_diagnosis_but_a_new_lesion_is_not():
    assert facts("New acute myeloid leukemia in a 50-year-old, FLT3-ITD positive.").recurrent is False
    assert facts("Colon cancer with new liver metastases on CT.").recurrent is None


def test_a_creatinine_clearance_below_60_is_cisplatin_ineligible():
    note = "Muscle-invasive urothelial carcinoma of the bladder, cT2N0M0, creatinine clearance 35 mL/min. Options?"
    assert facts(note).fitness == ("cisplatin-ineligible (creatinine clearance 35 mL/min)",)
    fit = assess("Neoadjuvant cisplatin-based chemotherapy followed by radical cystectomy is standard.",
                 case_from_facts(facts(note)))
    assert fit.verdict == "contradicts" and "the case is cisplatin-ineligible (creatinine clearance 35 mL/min)" \
        in fit.reason
    assert facts(note.replace("35", "70")).fitness == ()  # a normal value says nothing either way
    assert verdict("For patients with a creatinine clearance less than 60 mL/min, gemcitabine-carboplatin is used.",
                   note) == "fits"


def test_an_intensive_regimen_named_as_what_is_set_aside_stays_offered():
    """The audit's unfit AML case lost PDQ's low-intensity line: it names 7 + 3 as what these patients decline."""
    note = "79-year-old with newly diagnosed AML, not fit for intensive induction (ECOG 2, cardiac disease)."
    assert verdict("Low-dose cytarabine, decitabine, azacitidine, or best supportive care can be considered "
                   "equivalently effective treatment approaches for older patients with AML who decline traditional "
                   "7 + 3 induction chemotherapy.", note) == "fits"
    assert verdict("Unlike a succinct course of 7 + 3 induction, these less-intensive therapies are continued "
                   "indefinitely.", note) != "contradicts"
