"""Case fit and candidate selection for misreads a clinician QA pass found (session 18). Passages are written in
the manner of the guideline summaries (the prostate one quotes PDQ's "Treatment of Stage IV Prostate Cancer >
Overview" as it is laid out)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.casefit import (STAGING_ROW_REASON, assess, case_from_facts, locked_candidates, misfit_filter,
                            section_conditions, sentence_kind)
from engine.config import Settings
from engine.facts import extract_facts
from engine.state import CaseFacts, Passage

STAGE_IV_OVERVIEW = "## Treatment of Stage IV Prostate Cancer > ### Overview"
OPTIONS = "## Treatment of Stage IV Prostate Cancer > ### Treatment Options for Stage IV Prostate Cancer"
MHSPC = CaseFacts(cancer_type="prostate cancer", stage="IV", stage_text="metastatic")


def passage(pid: str, section: str, text: str) -> Passage:
    return Passage(pid, f"c-{pid}", "Prostate Cancer Treatment", "prostate.md", section, None, text, 0.2, 4.0, True)


OVERVIEW = passage("E1", STAGE_IV_OVERVIEW, (
    "Stage IV prostate cancer is defined by the American Joint Committee on Cancer's TNM classification system:\n\n"
    "**Stage IVA**\n\n- Any T, N1, M0, any prostate-specific antigen (PSA), any Gleason.\n\n"
    "**Stage IVB**\n\n- Any T, N0, M1, any PSA, any Gleason.\n\n"
    "Extraprostatic extension with microscopic bladder neck invasion (T4) is included with T3a.\n\n"
    "Treatment selection depends on the following factors:\n\n- Age.\n- Coexisting medical illnesses.\n"
    "- The presence of distant metastases (most often bone) or regional lymph node involvement only.\n\n"
    "Bisphosphonates may also be used for the management of bone metastases."))
HORMONAL = passage("E2", OPTIONS, "Hormonal treatment is the mainstay of therapy.")


def test_rows_of_a_staging_table_are_never_offered() -> None:
    """The QA pass's newly diagnosed mHSPC case had "Any T, N0, M1, any PSA, any Gleason." and the T3a rule released
    as recommendations."""
    kept, dropped = locked_candidates([OVERVIEW, HORMONAL], MHSPC)
    offered = [t for _, t in kept.values()]
    assert not any("Any T" in t or "T3a" in t for t in offered)
    assert sorted(sid for sid, why in dropped.items() if why == STAGING_ROW_REASON) == ["E1.s1", "E1.s2", "E1.s3"]


def test_items_of_a_list_of_factors_come_after_what_to_do() -> None:
    kept, _ = locked_candidates([OVERVIEW, HORMONAL], MHSPC)
    offered = [t for _, t in kept.values()]
    factor = offered.index("The presence of distant metastases (most often bone) or regional lymph node "
                           "involvement only.")
    assert offered.index("Hormonal treatment is the mainstay of therapy.") < factor
    assert offered.index("Bisphosphonates may also be used for the management of bone metastases.") < factor


def note_facts(note: str) -> CaseFacts:
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


CRPC = ("72-year-old man with metastatic castration-resistant prostate cancer, bone-only disease, PSA rising. He "
        "progressed on abiraterone plus prednisone after 14 months; prior docetaxel for castration-sensitive disease "
        "3 years ago. ECOG 1. What are the options for next-line systemic therapy?")
RECURRENT = passage("E3", "## Treatment of Recurrent Hormone-Sensitive or Hormone-Resistant Prostate Cancer > "
                          "### Treatment Options for Recurrent Prostate Cancer > #### Radiopharmaceutical therapy",
                    "Radium-223 is a treatment option for men with symptomatic bone metastases.")


def test_a_stages_section_is_its_initial_treatment_for_a_case_past_its_first_line() -> None:
    """The QA pass's castration-resistant case after abiraterone and docetaxel was answered from "Treatment of Stage
    IV Prostate Cancer" ("The cornerstone of hormonal therapy ... is medical or surgical castration")."""
    facts = note_facts(CRPC)
    assert facts.first_line_done
    kept, dropped = locked_candidates([HORMONAL, RECURRENT], facts)
    assert [t for _, t in kept.values()] == [RECURRENT.text]
    assert "Treatment of Stage IV Prostate Cancer\u201d, about a stage's initial treatment; the case is past its " \
           "first line of therapy" in dropped["E2.s1"]
    assert misfit_filter(facts)(HORMONAL) and not misfit_filter(facts)(RECURRENT)  # retrieval prefers the other


def test_a_stages_section_still_fits_a_new_case_or_one_that_progressed_only_after_adjuvant_therapy() -> None:
    for note in ("Newly diagnosed metastatic castration-sensitive prostate cancer, high volume. Initial therapy?",
                 "Prostate cancer treated with prostatectomy and adjuvant radiation, now with progression to bone "
                 "metastases. What systemic therapy?"):
        facts = note_facts(note)
        assert not facts.first_line_done
        kept, _ = locked_candidates([HORMONAL], facts)
        assert list(kept) == ["E2.s1"], note


@pytest.mark.parametrize("heading, implied", [
    ("## Treatment of Extensive-Stage SCLC > ### Combination chemotherapy", True),
    ("## Treatment of Aggressive, Noncontiguous Stage II/III/IV B-Cell Non-Hodgkin Lymphoma", True),
    ("## Treatment of Stage IV and Recurrent Colon Cancer", False),
    ("## Treatment of Unresectable Stage III, Stage IV, and Recurrent Melanoma", False),
    ("## Treatment of Metastatic Breast Cancer", False),  # every line of metastatic disease is told there
    ("## Treatment of Extensive-Stage SCLC > ### Second-line therapy", False),  # the deeper heading's own line
])
def test_which_sections_are_a_stages_initial_treatment(heading: str, implied: bool) -> None:
    assert any(c.implied for c in section_conditions(heading)) is implied


def test_an_age_after_the_disease_is_the_populations() -> None:
    """A QA pass's 26-year-old with classic HL was released "Patients with HL who are older than 60 years may have
    more treatment-related morbidity ..." while its siblings saying "patients older than 60" were dropped."""
    young = case_from_facts(note_facts("26-year-old woman with classic Hodgkin lymphoma, stage IVB. Which regimen?"))
    fit = assess("Patients with HL who are older than 60 years may have more treatment-related morbidity.", young)
    assert fit.verdict == "contradicts" and "who are older than 60; the case is 26 years old" in fit.reason


def test_a_trials_design_is_not_a_recommendation() -> None:
    """A QA pass's platinum-sensitive ovarian relapse was released four trial sentences without waiting for a
    reviewer: "... as standard treatment ..." in a trial's design had read as a recommendation."""
    assert sentence_kind("The trial compared carboplatin doublets with or without bevacizumab as standard treatment "
                         "for patients with platinum-sensitive recurrence.") != 0
    assert sentence_kind("Carboplatin doublets are the standard treatment for platinum-sensitive recurrence.") == 0


def test_an_androgen_receptor_pathway_inhibitor_is_not_offered_after_progression_on_one() -> None:
    """The QA pass's castration-resistant case that progressed on abiraterone was offered abiraterone's trial."""
    facts = note_facts(CRPC)
    assert facts.progressed_after == ("abiraterone",)
    trial = passage("E4", RECURRENT.section.split(" > ####")[0] + " > ### Hormonal Therapy for Recurring Disease",
                    "Men with metastatic prostate cancer who had progression after treatment with docetaxel were "
                    "randomly assigned to receive either abiraterone acetate or placebo. Enzalutamide is an option "
                    "for men with metastatic castration-resistant prostate cancer.")
    kept, dropped = locked_candidates([trial, RECURRENT], facts)
    assert list(kept) == ["E3.s1"]
    assert "the case progressed after abiraterone" in dropped["E4.s1"] and "E4.s2" in dropped


LIVER_ADVANCED = ("## Treatment of Locally Advanced or Metastatic Primary Liver Cancer > ### Treatment Options for "
                  "Locally Advanced or Metastatic Primary Liver Cancer > #### First-line systemic therapy")
LIVER_LOCALIZED = ("## Treatment of Localized Primary Liver Cancer > ### Treatment Options for Localized Primary "
                   "Liver Cancer > #### Surgical resection")


@pytest.mark.parametrize("note, advanced, localized", [
    ("68-year-old man with cirrhosis, Child-Pugh A, a 9 cm liver mass with portal vein tumour thrombus (BCLC C), "
     "ECOG 1. First-line systemic therapy?", "fits", "contradicts"),
    ("Hepatocellular carcinoma, BCLC stage B, multifocal, Child-Pugh A. First-line treatment?", "fits",
     "contradicts"),
    ("Hepatocellular carcinoma BCLC A, single 2.5 cm lesion, Child-Pugh A. First-line treatment?", "contradicts",
     "fits"),
])
def test_a_bclc_stage_decides_the_liver_sections(note: str, advanced: str, localized: str) -> None:
    """The audit's BCLC C case and two QA passes' HCC cases read as no stage: "Locally Advanced or Metastatic" lines
    were only qualified, and resection was offered to a BCLC B case not a candidate for it."""
    case = case_from_facts(note_facts(note))
    assert assess("Lenvatinib is an option.", case, (LIVER_ADVANCED,)).verdict == advanced
    assert assess("Resection is an option.", case, (LIVER_LOCALIZED,)).verdict == localized


NSCLC_IV = ("## Treatment of Newly Diagnosed Stage IV, Relapsed, and Recurrent NSCLC > ### Treatment Options for Newly "
            "Diagnosed Stage IV, Relapsed, and Recurrent NSCLC")
PEMBROLIZUMAB = ("The FDA approved pembrolizumab in combination with pemetrexed and carboplatin as first-line "
                 "treatment of patients with metastatic nonsquamous NSCLC.")
OSIMERTINIB = "Osimertinib is a standard first-line option for patients with EGFR exon 19 deletions."


def test_checkpoint_inhibitors_are_not_offered_to_egfr_or_alk_driven_nsclc_before_its_targeted_therapy() -> None:
    """The audit's EGFR exon 19 case was released first-line pembrolizumab-chemotherapy and "Immune checkpoint
    inhibitors with or without chemotherapy" beside the EGFR TKIs; a QA pass's resected EGFR case, adjuvant
    atezolizumab."""
    lines = Passage("E1", "c-E1", "Non-Small Cell Lung Cancer Treatment", "nsclc.md", NSCLC_IV, None,
                    f"{PEMBROLIZUMAB} {OSIMERTINIB} Driver-positive tumours tend to gain less from checkpoint "
                    "inhibitors.", 0.2, 4.0, True)
    egfr = note_facts("Lung adenocarcinoma with bone metastases, EGFR exon 19 deletion, ECOG 1. First-line therapy?")
    kept, dropped = locked_candidates([lines], egfr)
    assert [t for _, t in kept.values()] == [OSIMERTINIB, "Driver-positive tumours tend to gain less from checkpoint "
                                                           "inhibitors."]  # it offers nothing
    assert "driven by EGFR exon 19 deletion" in dropped["E1.s1"]
    alk = note_facts("Stage IV lung adenocarcinoma, ALK rearrangement. First-line therapy?")
    assert "E1.s1" in locked_candidates([lines], alk)[1]
    any_line = Passage("E2", "c-E2", "Non-Small Cell Lung Cancer Treatment", "nsclc.md", NSCLC_IV, None,
                       "Pembrolizumab with pemetrexed and carboplatin is a treatment option for metastatic "
                       "nonsquamous NSCLC.", 0.2, 4.0, True)
    assert "E2.s1" in locked_candidates([any_line], egfr)[1]
    progressive = replace(any_line, section="## Treatment of Progressive Stage IV, Relapsed, and Recurrent NSCLC")
    for note, p in (("Stage IV lung adenocarcinoma, no EGFR, ALK or ROS1 alterations, PD-L1 60%. First-line therapy?",
                     any_line),
                    ("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, progressed on first-line osimertinib and "
                     "then on second-line docetaxel. Options?", progressive)):
        assert "E2.s1" in locked_candidates([p], note_facts(note))[0], note


COLON_OVERVIEW = "## Treatment Option Overview for Colon Cancer > ### Adjuvant Chemotherapy"


def test_a_paragraphs_first_sentence_gives_its_stage_to_the_sentences_after_it() -> None:
    """A QA pass's stage I colon case was offered "Pooled analyses ... have suggested a 2% to 4% improvement in OS
    for ... adjuvant 5-FU" while its paragraph's first sentence, about stage II, was dropped."""
    stage_ii = Passage("E1", "c-E1", "Colon Cancer Treatment", "colon.md", COLON_OVERVIEW, None,
                       "The potential value of adjuvant chemotherapy for patients with stage II colon cancer is "
                       "controversial. Pooled analyses have suggested a 2% to 4% improvement in OS for patients "
                       "treated with adjuvant 5-FU-based therapy.", 0.2, 4.0, True)
    stage_i = note_facts("Stage I colon cancer, pT2N0, after right hemicolectomy. Adjuvant therapy?")
    kept, dropped = locked_candidates([stage_ii], stage_i)
    assert not kept
    assert dropped["E1.s2"] == "does not apply to this case: its paragraph is about stage II (the case is stage I)"
    assert list(locked_candidates([stage_ii], note_facts("Stage II colon cancer, pT4aN0. Adjuvant?"))[0]) == [
        "E1.s1", "E1.s2"]


def test_a_figo_substage_with_a_digit_is_read() -> None:
    """"stages IB2, IIA2, and IIB" had read as stage IIB alone."""
    ib = case_from_facts(note_facts("Squamous cell carcinoma of the cervix, FIGO stage IB3. Treatment?"))
    assert assess("For patients with stage IB2 and larger lesions, radiosensitizing chemotherapy is indicated.",
                  ib).verdict == "fits"
    assert assess("Patients with stages IB2, IIA2, and IIB cervical cancer were randomly assigned.", ib).verdict \
        == "fits"


def test_a_trials_population_given_right_after_its_first_sentence_rules_the_whole_story() -> None:
    """A QA pass's FGFR2-negative cholangiocarcinoma was offered FIGHT-202's lead and dosing, while the sentence
    giving its population (FGFR2 fusions) was dropped."""
    fight = Passage("E1", "c-E1", "Bile Duct Cancer Treatment", "bile.md", "## Treatment of Unresectable Bile Duct "
                    "Cancer > ### Targeted therapy", None,
                    "The phase II FIGHT-202 trial enrolled 147 patients with disease progression after at least one "
                    "previous treatment. Patients had FGFR2 fusions or rearrangements. All patients received 13.5 mg "
                    "of pemigatinib once daily.", 0.2, 4.0, True)
    negative = note_facts("Metastatic cholangiocarcinoma, IDH1 R132C, FGFR2 fusion negative, progressed after "
                          "gemcitabine-cisplatin. Second-line options?")
    kept, dropped = locked_candidates([fight], negative)
    assert not kept and "whose population E1.s2 gives" in dropped["E1.s1"] and "E1.s3" in dropped
    # a subgroup of a population the first sentence states itself is not the trial's population
    keynote = replace(fight, title="Non-Small Cell Lung Cancer Treatment", section=NSCLC_IV, text=(
        "The phase III KEYNOTE-042 trial randomly assigned 1,274 patients with a PD-L1 TPS of 1% or greater. In "
        "patients with a TPS of 50% or greater, OS was longer with pembrolizumab. Grade 3 events were fewer."))
    pdl1_20 = note_facts("Stage IV lung adenocarcinoma, no EGFR, ALK or ROS1 alterations, PD-L1 TPS 20%. Options?")
    assert "E1.s1" in locked_candidates([keynote], pdl1_20)[0]


def test_drugs_for_another_driver_than_the_cases_are_not_offered() -> None:
    """A QA pass's EGFR L858R case after osimertinib was offered "[ALK-directed TKIs after first-line
    chemotherapy]" and crizotinib's results: no ALK was stated, but drivers exclude each other."""
    egfr = note_facts("Stage IV lung adenocarcinoma, EGFR L858R, progressed on first-line osimertinib. Options?")
    progressive = "## Treatment of Progressive Stage IV, Relapsed, and Recurrent NSCLC > ### Chemotherapy"
    crizotinib = Passage("E1", "c-E1", "Non-Small Cell Lung Cancer Treatment", "x.md", progressive, None,
                         "Median PFS was significantly longer in favor of crizotinib (7.7 months vs. 3.0 months).\n\n"
                         "Docetaxel is an option.", 0.2, 4.0, True)
    kept, dropped = locked_candidates([crizotinib], egfr)
    assert list(kept) == ["E1.s2"]
    assert "the case is driven by EGFR L858R" in dropped["E1.s1"]
    alk_section = replace(crizotinib, section=progressive.replace("Chemotherapy", "ALK-directed TKIs"))
    assert not locked_candidates([alk_section], egfr)[0]


MELANOMA_UNRESECTABLE = ("## Treatment of Unresectable Stage III, Stage IV, and Recurrent Melanoma > ### Treatment "
                         "Options for Unresectable Stage III, Stage IV, and Recurrent Melanoma")


@pytest.mark.parametrize("note, verdict", [
    ("58-year-old with cutaneous melanoma, BRAF V600E, stage IIIC after wide excision and completion lymph node "
     "dissection, resected. Adjuvant therapy?", "contradicts"),
    ("Metastatic melanoma with lung and liver metastases, BRAF wild-type. First-line?", "fits"),
    ("Unresectable stage IIIC melanoma. Options?", "fits"),
    ("Stage III melanoma. Options?", "fits"),
])
def test_a_section_for_unresectable_disease_is_not_for_a_resected_case(note: str, verdict: str) -> None:
    """A QA pass's resected stage IIIC melanoma was released "Anti-PD-1 and PD-L1 therapy." from the unresectable
    stage III, stage IV and recurrent section."""
    assert assess("Anti-PD-1 and PD-L1 therapy.", case_from_facts(note_facts(note)),
                  (MELANOMA_UNRESECTABLE,)).verdict == verdict


def test_a_heading_naming_two_later_lines_is_a_later_line() -> None:
    """The audit's untreated metastatic RCC case was answered from "Treatment Options for Third- and Fourth-Line
    Therapy" ("Third- and" had not read as a line)."""
    untreated = case_from_facts(note_facts("Clear cell renal carcinoma with lung metastases, no treatment so far. "
                                           "First-line systemic therapy?"))
    section = ("## Treatment of Stage IV and Recurrent Renal Cell Cancer > ### Treatment Options for Third- and "
               "Fourth-Line Therapy")
    assert assess("Almost all patients with stage IV renal cell cancer have incurable disease.", untreated,
                  (section,)).verdict == "contradicts"
    assert assess("Cabozantinib is an option in the second- or third-line setting.", untreated).verdict == \
        "contradicts"


def test_immunotherapy_offered_in_a_sentence_is_a_checkpoint_inhibitor_for_egfr_nsclc() -> None:
    """A QA pass's resected EGFR exon 19 case was still released "Adjuvant immunotherapy for patients with resected
    stage IB to IIIA NSCLC has been found to significantly increase DFS." (only drug names had been read)."""
    resected = note_facts("Stage IIB lung adenocarcinoma, EGFR exon 19 deletion, after lobectomy. Adjuvant therapy?")
    section = "## Treatment of Stages IIA and IIB NSCLC > ### Adjuvant immunotherapy"
    p = Passage("E1", "c-E1", "Non-Small Cell Lung Cancer Treatment", "x.md", section, None,
                "Adjuvant immunotherapy for patients with resected stage IB to IIIA NSCLC has been found to "
                "significantly increase DFS and is recommended.", 0.2, 4.0, True)
    assert "driven by EGFR exon 19 deletion" in locked_candidates([p], resected)[1]["E1.s1"]
    wild = note_facts("Stage IIB lung adenocarcinoma, no EGFR or ALK alterations, after lobectomy. Adjuvant therapy?")
    assert "E1.s1" in locked_candidates([p], wild)[0]


def test_a_recurrence_does_not_meet_a_stages_initial_treatment() -> None:
    """A QA pass's platinum-resistant ovarian recurrence was released "Surgery before or after platinum-based
    chemotherapy and the addition of bevacizumab ..." from the advanced-stage (newly diagnosed) section."""
    recurrence = case_from_facts(note_facts("High-grade serous ovarian cancer, recurrent 3 months after carboplatin, "
                                            "paclitaxel and bevacizumab maintenance (platinum-resistant). Options?"))
    advanced = "## Treatment of Advanced-Stage Ovarian Epithelial, Fallopian Tube, and Primary Peritoneal Cancer"
    fit = assess("Surgery before or after platinum-based chemotherapy is an option.", recurrence, (advanced,))
    assert fit.verdict == "contradicts" and "about a stage's initial treatment; the case is recurrent" in fit.reason
    new = case_from_facts(note_facts("Newly diagnosed stage IIIC high-grade serous ovarian cancer. Options?"))
    assert assess("Surgery before or after platinum-based chemotherapy is an option.", new, (advanced,)).verdict \
        == "fits"


def test_an_operated_invasive_breast_cancer_without_a_stage_is_stage_i_to_iii() -> None:
    """The audit's BRCA2 carrier "finished neoadjuvant chemotherapy and surgery" had every "Stages I, II, and III"
    line only qualified (stage 0, DCIS, was still possible)."""
    operated = case_from_facts(note_facts("HER2-negative high-risk early breast cancer, finished neoadjuvant "
                                          "chemotherapy and surgery with residual disease. Adjuvant options?"))
    section = "## Systemic Therapy for Stages I, II, and III Breast Cancer > ### Adjuvant PARP Inhibitors"
    assert assess("Olaparib is an option.", operated, (section,)).verdict == "fits"
    pancreas = case_from_facts(note_facts("Pancreatic adenocarcinoma, resected. Adjuvant options?"))
    assert pancreas.stage == (0, 39)  # other cancers keep stage 0 possible
