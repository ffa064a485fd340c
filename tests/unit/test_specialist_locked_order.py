"""Evidence-locked order (engine/casefit.py ``select`` / ``sentence_kind``, used by engine/nodes/specialist.py):
within one fit class a recommendation is offered before trial narrative and statistics, so a small model that picks
the first sentence it is offered picks the recommendation. Nothing is dropped for its kind. Passages are written
for these tests in the manner of guideline summaries (not copied from any)."""

from __future__ import annotations

import pytest

from engine.casefit import locked_candidates, sentence_kind
from engine.nodes.specialist import build_locked_messages
from engine.safety import passage_sentences
from engine.state import CaseFacts, ConsultState, Passage, Retrieval


def passage(pid: str, title: str, section: str, text: str) -> Passage:
    return Passage(pid, f"c-{pid}", title, "guide.md", section, None, text, 0.2, 4.0, True)


HCC = passage("E1", "Liver Cancer Treatment", "Treatment of Advanced HCC > First-line systemic therapy", (
    "In a global, open-label, phase III trial (NCT01234567), 1,150 patients with unresectable HCC were randomly "
    "assigned to a combination of two checkpoint inhibitors, a single checkpoint inhibitor, or a multikinase "
    "inhibitor. The median OS was 16.4 months with the combination and 13.8 months with the kinase inhibitor "
    "(HR, 0.78; 95% CI, 0.65-0.93). Grade 3 or higher adverse events occurred in about half of the patients in each "
    "arm. The combination of two checkpoint inhibitors improved overall survival and is approved for first-line "
    "treatment of unresectable HCC. Atezolizumab plus bevacizumab is a standard treatment option for patients "
    "with preserved liver function."))
HCC_FACTS = CaseFacts(cancer_type="hepatocellular carcinoma", stage="IV", stage_text="metastatic")

NSCLC = passage("E1", "Non-Small Cell Lung Cancer Treatment", "Stage IV NSCLC > PD-L1 expression of 50% or more", (
    "Evidence (pembrolizumab): In a randomized trial, 305 patients whose tumours had PD-L1 expression of at least "
    "50% were assigned to pembrolizumab or platinum chemotherapy. Progression-free survival was longer with "
    "pembrolizumab (median, 10.3 vs. 6.0 months; P < .001). Pembrolizumab alone is recommended as first-line "
    "therapy for metastatic NSCLC with PD-L1 expression of at least 50% and no EGFR or ALK alteration."))
NSCLC_FACTS = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", stage_text="stage IV",
                        markers=("PD-L1 TPS 80%", "EGFR negative", "ALK negative"))


def order(passages: list[Passage], facts: CaseFacts) -> list[str]:
    kept, dropped = locked_candidates(passages, facts)
    assert not dropped
    return [text for _, text in kept.values()]


def test_a_recommendation_is_offered_before_the_trial_that_supports_it() -> None:
    offered = order([HCC], HCC_FACTS)
    assert offered[0].startswith(("The combination of two checkpoint inhibitors improved", "Atezolizumab plus"))
    assert offered[1].startswith(("The combination of two checkpoint inhibitors improved", "Atezolizumab plus"))
    trial = next(i for i, s in enumerate(offered) if s.startswith("In a global, open-label"))
    assert trial >= 2
    # nothing dropped, only reordered
    assert sorted(offered) == sorted(text for _, text in passage_sentences([HCC]).values())


def test_a_recommendation_comes_before_evidence_statistics() -> None:
    offered = order([NSCLC], NSCLC_FACTS)
    assert offered[0].startswith("Pembrolizumab alone is recommended"), offered
    assert any(s.startswith("Evidence (pembrolizumab)") or "randomized trial" in s for s in offered[1:])


def test_a_recommendation_fitting_by_its_section_comes_before_trial_narrative_naming_the_marker() -> None:
    """A recommendation under a section that fits the case (stage IV, first line) is offered before a trial's
    narrative that fits by naming the case's marker: a small model picks the first, and the guideline's option is
    the answer; the trial is its evidence (the audit's RCC case quoted a prognosis line before the options item)."""
    p = passage("E1", "Kidney Cancer Treatment", "Treatment of Stage IV Renal Cell Cancer > Treatment Options for "
                "First-Line Therapy", (
                    "In a randomized trial of 500 patients with HER2-positive metastatic disease, median PFS was 18.5 "
                    "months with the antibody combination. Chemotherapy is a standard treatment option for these "
                    "patients."))
    facts = CaseFacts(cancer_type="renal cell carcinoma", stage="IV", stage_text="metastatic",
                      markers=("HER2-positive",), genes=("HER2",), line="first")
    offered = order([p], facts)
    assert offered[0].startswith("Chemotherapy is a standard"), offered


def test_among_one_kind_a_sentence_fitting_by_its_own_words_comes_first() -> None:
    """Two trial sentences under a section that fits: the one naming the case's marker is offered first."""
    p = passage("E1", "Breast Cancer Treatment", "Metastatic Breast Cancer", (
        "In a randomized trial of 400 patients, median PFS was 9.1 months with the doublet. "
        "In a randomized trial of 500 patients with HER2-positive metastatic disease, median PFS was 18.5 months "
        "with the antibody combination."))
    facts = CaseFacts(cancer_type="breast cancer", stage="IV", stage_text="metastatic", markers=("HER2-positive",),
                      genes=("HER2",))
    offered = order([p], facts)
    assert "HER2-positive" in offered[0], offered


def test_the_prompt_lists_the_recommendation_first() -> None:
    state = ConsultState(thread_id="PT-0001", consult_id="c1", case_text="Metastatic HCC, Child-Pugh A. First line?",
                         facts=HCC_FACTS, retrieval=Retrieval(query="q", passages=(HCC,), gate_passed=True))
    user = build_locked_messages(state)[1]["content"]
    listed = [line for line in user.splitlines() if line.startswith("[S")]
    assert "trial" not in listed[0] and ("approved" in listed[0] or "standard" in listed[0]), listed


def test_the_prompt_ends_with_the_sentences_after_the_case() -> None:
    # with the note after the list the embedded models began at "S2" in 25 of 107 audit consults (kb/EVAL.md
    # round 12); with the list last they began at "S1" in 107 of 107
    state = ConsultState(thread_id="PT-0001", consult_id="c1", case_text="Metastatic HCC, Child-Pugh A. First line?",
                         facts=HCC_FACTS, retrieval=Retrieval(query="q", passages=(HCC,), gate_passed=True))
    user = build_locked_messages(state)[1]["content"]
    assert user.index("Case facts") < user.index("<note>") < user.index("<sentences>")
    assert user.rstrip().endswith("</sentences>")


@pytest.mark.parametrize("text, kind", [
    ("Treatment options for stage IV disease include systemic therapy and palliative radiation therapy.", 0),
    ("Radical cystectomy is a standard treatment option for muscle-invasive disease.", 0),
    ("Adjuvant chemotherapy is recommended for resected stage III colon cancer.", 0),
    ("Neoadjuvant therapy is particularly favored in patients with triple-negative or HER2-positive disease.", 0),
    ("The drug improved overall survival and is approved for previously treated disease.", 0),
    ("The FDA approved the conjugate for previously treated metastatic disease.", 0),
    # the audit's HER2-positive gastric and stage IIIB Hodgkin cases: PDQ's recommendation read as neither
    ("Trastuzumab may be combined with pembrolizumab and chemotherapy as treatment for patients with HER2-positive "
     "metastatic gastric adenocarcinoma.", 0),
    ("Patients with advanced-stage disease are primarily treated with chemotherapy alone.", 0),
    # results by their abbreviations and a trial's review (the audit's ALK case offered this second)
    ("The results of independent review committee-assessed PFS were consistent.", 2),
    ("The 3-year EFS rate was 9.4%.", 2),
    # advice against is no recommendation of what to do (the audit's AML case was offered it first)
    ("Given the minimal efficacy signal, eltrombopag is not routinely recommended in the induction setting.", 1),
    ("In the phase III trial, 1,171 patients were randomly assigned in a 1:1:1 ratio to three arms.", 2),
    ("The median OS was 16.4 months in the combination arm (HR, 0.78; 95% CI, 0.65-0.93; *P* = .0035).", 2),
    ("Evidence (pembrolizumab):", 2),
    ("The randomized study [NCT02576509] compared the two agents.", 2),
    ("Mitotane is an adrenolytic drug with a narrow therapeutic window.", 1),
    # a trial's design, without the word "trial" (the audit's ALK answer released these as its recommendations)
    ("The primary end point was PFS as determined by blinded independent central review.", 2),
    ("The primary end point was PFS and crossover from chemotherapy to ceritinib was allowed upon progression.", 2),
    ("Secondary end points included OS and safety.", 2),
    ("Patients were stratified by disease stage and PD-L1 expression.", 2),
    ("Surgery is the primary treatment for localized disease.", 1),
    # a trial population's make-up (the audit's BRAF melanoma answer quoted these before the BRAF inhibitors item)
    ("The median age of patients was 58 years; 65% of patients were male; and ECOG PS was 0 in 58% of patients.", 2),
    ("BRAF V600 pathogenic variants were present in 22% of patients; 76% had M1c disease.", 2),
    ("Approximately 66% of patients had received no previous systemic therapy for advanced melanoma.", 2),
    ("About 5% of patients with NSCLC have ALK rearrangements.", 1),  # a prevalence, not a trial's population
    ("Crossover was not specified, but patients could receive treatments at the discretion of the investigator.", 1),
    # a recommendation that quotes its trial's statistics is neither first nor last
    ("Based on a phase III trial (HR, 0.62), the combination is a standard option.", 1),
    # what a trial's patients were given and how its groups compared (the audit's myeloma cases were offered these
    # first)
    ("All patients received an autologous SCT and subsequent lenalidomide maintenance therapy.", 2),
    ("Patients then received an autologous SCT, two more cycles of the induction regimen.", 2),
    ("Serious adverse events were similar in the two groups.", 2),
    ("Patients who cannot tolerate cisplatin receive carboplatin.", 1),  # present tense: not a trial's
    ("Twenty-seven previously untreated patients older than 60 years, judged by the investigator to be in poor "
     "condition, received brentuximab vedotin.", 2),
    ("Eighty-one patients received chemotherapy; 50 of those patients received it before surgery.", 2),
])
def test_sentence_kind(text: str, kind: int) -> None:
    assert sentence_kind(text) == kind


LISTED = passage("E1", "Colon Cancer Treatment", "Treatment of Stage IV and Recurrent Colon Cancer", (
    "Evidence (anti-EGFR antibodies):\n\n"
    "1. A randomized phase III trial enrolled 1,198 patients with untreated colon cancer, who were randomly "
    "assigned to chemotherapy with or without an anti-EGFR antibody.\n"
    "2. Median overall survival was 23.5 months with the antibody and 20.0 months without it (HR, 0.80).\n\n"
    "Most patients are treated with palliative intent.\n\n"
    "Treatment options for stage IV colon cancer include:\n\n"
    "1. Surgical resection of isolated liver or lung metastases in selected patients.\n"
    "2. Combination chemotherapy with a targeted agent chosen by RAS, BRAF and MMR status.\n"))


def test_items_under_a_treatment_options_header_are_offered_first() -> None:
    facts = CaseFacts(cancer_type="colon cancer", stage="IV", stage_text="metastatic")
    offered = order([LISTED], facts)
    assert offered[0].startswith("Surgical resection of isolated") and offered[1].startswith("Combination"), offered
    assert offered[2].startswith("Most patients"), offered
    assert offered[3].startswith("A randomized phase III") or offered[3].startswith("Median"), offered
    assert len(offered) == 5  # the two list headers are not offered (engine.safety.passage_sentences)


def test_a_recommendation_naming_the_cases_marker_comes_before_a_generic_one() -> None:
    """The audit's MSI-H colorectal case was offered "FOLFOX or FOLFIRI ... first-line" before "The FDA approved
    pembrolizumab for ... dMMR/MSI-H colorectal cancer": both fit its stage and line and both recommend, so passage
    order decided; the one that names the case's marker is the more specific answer."""
    from engine.casefit import select
    from engine.facts import extract_facts

    facts = extract_facts("Metastatic colorectal cancer, MSI-H/dMMR, untreated, ECOG 0. First-line treatment?",
                          genes=["KRAS", "BRAF"], treatment_keywords=[], rare_cancers=[])
    generic = ("E1", "The use of either FOLFOX or FOLFIRI is considered acceptable for first-line treatment of "
                     "patients with metastatic colorectal cancer.")
    specific = ("E3", "The FDA approved pembrolizumab for patients with treatment-naive, metastatic, dMMR/MSI-H "
                      "colorectal cancer.")
    kept, _ = select({"E1.s1": generic, "E3.s2": specific}, facts)
    assert list(kept) == ["E3.s2", "E1.s1"]
    # the marker never outranks a recommendation with a trial's narrative
    trial = ("E3", "In the phase III KEYNOTE-177 trial, 307 patients with MSI-H colorectal cancer were randomly "
                   "assigned to pembrolizumab or chemotherapy.")
    kept, _ = select({"E1.s1": generic, "E3.s3": trial}, facts)
    assert list(kept) == ["E1.s1", "E3.s3"]


def test_a_driver_ranks_before_a_pd_l1_level_among_fitting_recommendations() -> None:
    """The audit's EGFR exon 19 NSCLC case with PD-L1 60% was offered "pembrolizumab ... PD-L1 (>1%)" before the
    EGFR TKI options (each named one of its markers; passage order decided). An actionable driver is the more
    specific answer; PD-L1 counts less than a driver, receptor or MMR status."""
    from engine.casefit import select
    from engine.facts import extract_facts

    facts = extract_facts("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, PD-L1 TPS 60%, ECOG 1. First-line "
                          "treatment?", genes=["EGFR", "ALK"], treatment_keywords=[], rare_cancers=[])
    pdl1 = ("E1", "The FDA also approved pembrolizumab as a first-line monotherapy for patients with NSCLC whose "
                  "tumors express PD-L1 (>1%).")
    egfr = ("E7", "EGFR tyrosine kinase inhibitors are a standard first-line option for patients with EGFR variants.")
    kept, _ = select({"E1.s2": pdl1, "E7.s1": egfr}, facts)
    assert list(kept) == ["E7.s1", "E1.s2"]


def test_a_recommendation_without_conditions_comes_before_trial_lines_fitting_by_their_population() -> None:
    """The audit's stage IIIC ovarian BRCA1 case: a trial's arms, nested under its population "stage III or IV
    disease" (so they fit), were offered before the section's options item, which states no condition the case
    fit reads (PDQ's "Advanced-Stage" heading names no stage). A sentence whose condition the case does not state
    still goes last."""
    p = passage("E1", "Ovarian Cancer Treatment", "Treatment of Advanced-Stage Ovarian Cancer", (
        "Treatment options for advanced-stage ovarian cancer include:\n\n"
        "1. Surgery followed by platinum-based chemotherapy and the addition of a maintenance inhibitor.\n\n"
        "Evidence (maintenance):\n\n"
        "1. A randomized trial included 1,800 women with stage III or IV disease after surgery.\n"
        "- Chemotherapy plus placebo for all cycles in the control group.\n"
        "- Chemotherapy plus the antibody for all cycles in the experimental group.\n\n"
        "Patients with a germline PALB2 variant may also receive the inhibitor after chemotherapy."))
    facts = CaseFacts(cancer_type="ovarian cancer", stage="III", stage_text="stage IIIC", markers=("BRCA1 mutation",),
                      genes=("BRCA1",))
    offered = order([p], facts)
    assert offered[0].startswith("Surgery followed by platinum-based"), offered
    assert offered[-1].startswith("Patients with a germline PALB2"), offered
