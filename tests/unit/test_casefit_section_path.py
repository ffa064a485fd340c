"""A section path's headings hold together (engine/casefit.py ``_section_verdict``): "Treatment of Stage II Colon
Cancer > Adjuvant chemotherapy" is stage II, not "stage II or resected". Found by a stage III colon consult that was
offered "Following surgery, patients can be considered for entry into a carefully controlled clinical trial." from
the stage II section first, and a pointer sentence ("For more information, see the ... section.") fourth. Sentences
are written for these tests in the manner of guideline summaries."""

from __future__ import annotations

from engine.casefit import POINTER_REASON, assess, case_from_facts, locked_candidates, sentence_kind
from engine.state import CaseFacts, Passage

STAGE_II_ADJUVANT = ("## Treatment of Stage II Colon Cancer > ### Treatment Options for Stage II Colon Cancer > "
                     "#### Adjuvant chemotherapy")
STAGE_III_ADJUVANT = ("## Treatment of Stage III Colon Cancer > ### Treatment Options for Stage III Colon Cancer > "
                      "#### Adjuvant chemotherapy")
OVERVIEW_ADJUVANT = "## Treatment Option Overview for Colon Cancer > ### Adjuvant Chemotherapy"
GENERAL = "Following surgery, patients can be considered for entry into a carefully controlled clinical trial."


def colon(stage: str) -> CaseFacts:
    return CaseFacts(cancer_type="colon cancer", stage=stage, stage_text=f"stage {stage}, resected",
                     prior_treatments=("resection",))


def test_a_subsection_heading_narrows_its_stage_section_instead_of_widening_it() -> None:
    stage_iii = assess(GENERAL, case_from_facts(colon("III")), (STAGE_II_ADJUVANT,))
    assert stage_iii.verdict == "contradicts"
    assert "Treatment of Stage II Colon Cancer" in stage_iii.reason and "Adjuvant chemotherapy" not in stage_iii.reason
    assert assess(GENERAL, case_from_facts(colon("II")), (STAGE_II_ADJUVANT,)).verdict == "fits"
    assert assess(GENERAL, case_from_facts(colon("III")), (STAGE_III_ADJUVANT,)).verdict == "fits"


def test_an_adjuvant_heading_alone_still_fits_a_resected_case_and_not_a_metastatic_one() -> None:
    assert assess(GENERAL, case_from_facts(colon("III")), (OVERVIEW_ADJUVANT,)).verdict == "fits"
    metastatic = CaseFacts(cancer_type="colon cancer", stage="IV", stage_text="metastatic")
    assert assess(GENERAL, case_from_facts(metastatic), (STAGE_III_ADJUVANT,)).verdict == "contradicts"


def test_a_claim_citing_two_sections_fits_when_either_path_fits() -> None:
    both = (STAGE_II_ADJUVANT, STAGE_III_ADJUVANT)
    assert assess(GENERAL, case_from_facts(colon("III")), both).verdict == "fits"
    assert assess(GENERAL, case_from_facts(colon("I")), both).verdict == "contradicts"


def test_a_heading_that_names_two_stages_still_offers_both() -> None:
    section = "## Treatment of Stage II and Stage III Rectal Cancer > ### Preoperative chemoradiation"
    rectal = CaseFacts(cancer_type="rectal cancer", stage="III", stage_text="stage III")
    assert assess("Preoperative chemoradiation is a standard option.", case_from_facts(rectal),
                  (section,)).verdict != "contradicts"


def passage(pid: str, section: str, text: str) -> Passage:
    return Passage(pid, f"c-{pid}", "Colon Cancer Treatment", "colon.md", section, None, text, 0.2, 4.0, True)


def test_a_pointer_to_another_section_is_never_offered() -> None:
    p = passage("E1", OVERVIEW_ADJUVANT, (
        "Since 2000, capecitabine has been established as an equivalent alternative to 5-FU and leucovorin. "
        "For more information, see the [Treatment of Stage III Colon Cancer](/types/colorectal/hp/colon#_105) "
        "section. [Go to Patient Version](/types/colorectal/patient/colon-treatment-pdq)"))
    kept, dropped = locked_candidates([p], colon("III"))
    assert [t for _, t in kept.values()] == [
        "Since 2000, capecitabine has been established as an equivalent alternative to 5-FU and leucovorin."]
    assert list(dropped.values()) == [POINTER_REASON, POINTER_REASON]
    # a table the passage does not quote (QA session 18: "Table 5 shows the standard treatment options for HCC."
    # was released first)
    table = passage("E2", OVERVIEW_ADJUVANT, "Table 7 describes the chemotherapy regimens used to treat colon "
                                             "cancer. FOLFOX is a standard regimen.")
    kept, dropped = locked_candidates([table], colon("III"))
    assert list(dropped.values()) == [POINTER_REASON] and len(kept) == 1


def test_a_statement_repeated_in_another_passage_is_offered_once() -> None:
    stage_iii = passage("E1", STAGE_III_ADJUVANT, (
        "Before 2000, fluorouracil (5-FU) was the only useful cytotoxic chemotherapy in the adjuvant setting for "
        "patients with stage III colon cancer. FOLFOX has become the standard of care for stage III colon cancer."))
    overview = passage("E2", OVERVIEW_ADJUVANT, (
        "Before 2000, 5-FU was the only useful cytotoxic chemotherapy in the adjuvant setting for patients with stage "
        "III colon cancer.[[3](#cit/section_8.3)] Capecitabine is an equivalent alternative to 5-FU and leucovorin."))
    kept, dropped = locked_candidates([stage_iii, overview], colon("III"))
    assert dropped == {"E2.s1": "repeats E1.s1 (the same statement in another passage)"}
    # the standard of care comes first; what was done before 2000 is history, offered after the current options
    assert list(kept) == ["E1.s2", "E2.s2", "E1.s1"]


def test_what_became_preferred_once_is_history_not_the_current_option() -> None:
    """The stage III colon case was offered "... the Roswell Park regimen became the preferred adjuvant
    regimen used in the United States and was often the control arm ..." first, above "FOLFOX ... standard of
    care"."""
    history = ("Because of its ease of use and its good toxicity profile, the Roswell Park regimen became "
               "the preferred adjuvant regimen used in the United States and was often the control arm "
               "in subsequent randomized trials.")
    p = passage("E1", STAGE_III_ADJUVANT, history + " Most physicians have adopted FOLFOX as the standard of "
                "care because of toxicity concerns with weekly FLOX. For many years, radiation therapy was "
                "the standard adjuvant treatment.")
    kept, _ = locked_candidates([p], colon("III"))
    assert list(kept)[0] == "E1.s2"
    assert sentence_kind(history) == 2
    # nor is a first approval's history a recommendation (the melanoma case had it first, above PD-1 therapy)
    assert sentence_kind("Ipilimumab was the first checkpoint inhibitor to be approved by the FDA as adjuvant "
                         "therapy.") != 0
