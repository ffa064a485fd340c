"""Line of therapy: a guideline section written for a later line ("Second-line systemic therapy", "EGFR-directed
therapy after first-line chemotherapy") does not apply to an untreated case. An audit consult for a treatment-naive
EGFR-mutant case released gefitinib-after-chemotherapy trial lines as "supported"."""

import pytest

from engine.casefit import assess, case_from_facts, section_conditions
from engine.facts import extract_facts, merge_facts

GENES = ["EGFR", "ALK", "KRAS"]
LATER = ("Treatment of Progressive Stage IV, Relapsed, and Recurrent NSCLC > Treatment Options for Progressive "
         "Stage IV, Relapsed, and Recurrent NSCLC (Second-Line Therapy) > EGFR-directed therapy > EGFR-directed "
         "therapy after first-line chemotherapy (for patients with EGFR-sensitizing variants) > Gefitinib")
FIRST = ("Treatment of Newly Diagnosed Stage IV, Relapsed, and Recurrent NSCLC > Treatment Options for Newly "
         "Diagnosed Stage IV, Relapsed, and Recurrent NSCLC (First-Line Therapy) > EGFR tyrosine kinase inhibitors")


def facts(text: str):
    return extract_facts(text, genes=GENES, treatment_keywords=["chemotherapy", "carboplatin"], rare_cancers=[])


@pytest.mark.parametrize("text, line", [
    ("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, ECOG 1. First-line treatment?", "first"),
    ("De novo metastatic breast cancer, no prior treatment. What now?", "first"),
    ("Treatment-naive metastatic melanoma, BRAF V600E.", "first"),
    ("Metastatic NSCLC progressed after carboplatin and pembrolizumab. Second-line options?", "later"),
    ("Previously treated metastatic colon cancer, RAS wild-type.", "later"),
    ("Stage IIIA NSCLC, chemoradiation completed without progression on imaging. Consolidation?", None),
    ("Stage II colon cancer resected two years ago. Follow-up?", None),
    ("Progressed on adjuvant capecitabine; untreated for metastatic disease.", None),  # both: not judged
])
def test_the_line_a_note_states(text, line):
    assert facts(text).line == line


def test_later_line_section_does_not_apply_to_an_untreated_case():
    case = case_from_facts(facts("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, no prior systemic therapy. "
                                 "First-line treatment?"))
    fit = assess("Gefitinib improved survival in never-smokers.", case, [LATER])
    assert fit.verdict == "contradicts"
    assert "untreated" in fit.reason and "after first-line chemotherapy" in fit.reason
    assert assess("Osimertinib is a standard option.", case, [FIRST]).verdict == "fits"


def test_previously_treated_case_keeps_later_lines_and_only_qualifies_first_line_ones():
    case = case_from_facts(facts("Metastatic NSCLC, EGFR exon 19 deletion, progressed on chemotherapy."))
    assert assess("Gefitinib improved survival.", case, [LATER]).verdict == "fits"
    fit = assess("Osimertinib is a standard option.", case, [FIRST])
    assert fit.verdict == "unknown" and "line of therapy" in fit.reason


def test_unstated_line_is_a_qualifier_not_a_block():
    case = case_from_facts(facts("Stage IV lung adenocarcinoma, EGFR exon 19 deletion. Options?"))
    fit = assess("Gefitinib improved survival.", case, [LATER])
    assert fit.verdict == "unknown" and fit.reason.startswith("applies if the line of therapy")


@pytest.mark.parametrize("section", [
    "Treatment of Relapsed Small Cell Lung Cancer",  # relapsed alone: first-line treatment of recurrent disease
    "Myelodysplastic Syndromes > Refractory anemia with excess blasts (RAEB)",  # a disease, not a line
    "Treatment Option Overview > Surgery",
])
def test_headings_that_name_no_line(section):
    assert not [c for c in section_conditions(section) if c.kind == "line"]


def test_a_follow_up_turn_moves_the_line_on():
    first = facts("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, treatment naive.")
    later = facts("Now progressing on osimertinib. What about second line?")
    assert merge_facts(first, later).line == "later"
    assert merge_facts(first, facts("What dose?")).line == "first"


def test_receptors_side_by_side_are_one_subgroup_and_a_population_is_the_sentences():
    """'... chemotherapy for patients with HER2-negative hormone receptor-negative, advanced breast cancer was
    evaluated' was released (qualified) for a HER2-positive case: the two statuses were read as alternatives (the
    HR-negative one fit) and 'for patients with' as one option's condition."""
    line = ("The addition of an antibody to first-line chemotherapy for patients with HER2-negative hormone "
            "receptor\u2013negative, advanced breast cancer was evaluated in a phase III trial.")
    her2_pos = case_from_facts(facts("De novo metastatic breast cancer, HER2 IHC 3+, ER negative, PR negative."))
    fit = assess(line, her2_pos)
    assert fit.verdict == "contradicts" and "HER2-positive" in fit.reason
    tnbc = case_from_facts(facts("Metastatic breast cancer, HER2 IHC 0, ER 0%, PR 0%."))
    assert assess(line, tnbc).verdict == "fits"
    either = "Options exist for HER2-positive or hormone receptor-positive disease."
    assert assess(either, her2_pos).verdict == "fits"  # "or": alternatives still


def test_a_slashed_stage_list_is_the_span():
    """'Aggressive, Noncontiguous Stage II/III/IV B-Cell NHL' was read as stage II, so every line of that section
    contradicted a stage III DLBCL case and the consult ended in the safe refusal."""
    stage_iii = case_from_facts(facts("Stage III diffuse large B-cell lymphoma, IPI 3. First-line treatment?"))
    section = ("Treatment of Aggressive, Noncontiguous Stage II/III/IV B-Cell Non-Hodgkin Lymphoma > Treatment "
               "Options for Aggressive, Noncontiguous Stage II/III/IV B-Cell NHL")
    assert assess("R-CHOP is a standard option.", stage_iii, [section]).verdict == "fits"
    stage_i = case_from_facts(facts("Stage I diffuse large B-cell lymphoma."))
    assert assess("R-CHOP is a standard option.", stage_i, [section]).verdict == "contradicts"


def test_a_newly_diagnosed_case_fits_a_first_line_or_untreated_section():
    from engine.casefit import assess, case_from_facts
    from engine.facts import extract_facts

    def case(note: str):
        return case_from_facts(extract_facts(note, genes=["FLT3"], treatment_keywords=[], rare_cancers=[]))
    section = "## Treatment of Newly Diagnosed AML > ### Treatment Options for Newly Diagnosed (Untreated; Remission " \
              "Induction) AML"
    line = "The addition of an FLT3 inhibitor to induction chemotherapy is the standard of care."
    new = case("50-year-old with newly diagnosed acute myeloid leukemia, FLT3-ITD mutation. What induction therapy?")
    assert assess(line, new, (section,)).verdict == "fits"
    # a case that says neither stays unstated (qualified), and a relapsed one does not fit a first-line section
    assert assess(line, case("Acute myeloid leukemia, FLT3-ITD. What induction?"), (section,)).verdict == "unknown"
    second = "## Treatment Options for Relapsed AML > ### Second-line therapy"
    assert assess(line, new, (second,)).verdict == "contradicts"


def test_previously_treated_with_a_first_line_therapy_is_a_later_line():
    """The audit's untreated mesothelioma case was offered "Systemic therapy for recurrent malignant mesothelioma
    previously treated with first-line chemotherapy or immunotherapy." second: its "first-line" had read as an
    alternative to "previously treated"."""
    untreated = case_from_facts(facts("Unresectable pleural mesothelioma, ECOG 0, untreated. Options?"))
    later = ("[Systemic therapy](/types/mesothelioma#_305) for recurrent malignant mesothelioma previously treated "
             "with first-line chemotherapy or immunotherapy.")
    assert assess(later, untreated).verdict == "contradicts"
    assert assess("Previously untreated patients receiving first-line chemotherapy lived longer.",
                  untreated).verdict != "contradicts"
