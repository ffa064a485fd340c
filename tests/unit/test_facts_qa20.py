"""Case facts session 20 added: primary CNS lymphoma read as its own cancer, not as DLBCL of the nodes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.casefit import misfit_filter
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts
from engine.state import CaseFacts


def facts(note: str) -> CaseFacts:
    return extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])


@pytest.mark.parametrize(("note", "cancer_type"), [
    ("Stereotactic biopsy shows diffuse large B-cell lymphoma confined to the brain, HIV negative. Induction?",
     "primary CNS lymphoma"),
    ("Primary CNS lymphoma, KPS 70, 68 years old. First-line treatment?", "primary CNS lymphoma"),
    ("PCNSL relapsed after high-dose methotrexate.", "primary CNS lymphoma"),
    ("DLBCL limited to the CNS, no systemic disease on PET.", "primary CNS lymphoma"),
    ("Stage IV DLBCL with marrow involvement, IPI 4.", "diffuse large B-cell lymphoma"),
])
def test_primary_cns_lymphoma(note: str, cancer_type: str) -> None:
    assert facts(note).cancer_type == cancer_type


def test_a_brain_lymphoma_case_keeps_its_own_summary_and_sets_aside_nodal_dlbcl() -> None:
    misfit = misfit_filter(facts("Diffuse large B-cell lymphoma confined to the brain, KPS 80. Induction treatment?"))
    own = SimpleNamespace(title="Primary CNS Lymphoma Treatment (PDQ®) - NCI", text="High-dose methotrexate ...",
                          section="## Treatment of Primary Central Nervous System Lymphoma > ### Induction therapy")
    nodal = SimpleNamespace(title="Aggressive B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI", text="R-CHOP ...",
                            section="## Treatment of Aggressive, Noncontiguous Stage II, III, and IV B-Cell NHL")
    assert not misfit(own)
    assert misfit(nodal)


@pytest.mark.parametrize(("note", "stage"), [
    # a long note's history: the stage at diagnosis, then metastases found later
    ("Diagnosed in 2020 with stage IIIA breast cancer, HER2 3+. In 2023 she developed liver and lung metastases.",
     "IV"),
    ("She had stage II disease in 2015 treated with lumpectomy. Bone metastases were found in 2021.", "IV"),
    ("Metastatic colon cancer; stage III (pT3N1) sigmoid adenocarcinoma resected in 2020.", "IV"),
    ("Stage II breast cancer in 2015. Now presenting with new bone metastases.", "IV"),
    ("Stage II endometrial carcinoma in 2022. In 2024 she relapsed with lung nodules and para-aortic nodes.", "IV"),
    ("Stage IIIC ovarian cancer; platinum-sensitive recurrence in the peritoneum.", "III"),
    ("Stage II colon cancer, resected. No recurrence in the liver on CT.", "II"),
    # metastases at diagnosis that the stage already counts, or none
    ("Stage IIIC ovarian cancer with omental metastases.", "III"),
    ("Stage III NSCLC presented with mediastinal nodal metastases.", "III"),
    ("Stage III colon cancer; risk of developing metastases discussed.", "III"),
    ("Stage IIA breast cancer, no new metastases on CT.", "II"),
])
def test_metastases_found_after_the_diagnosis_make_the_stage_iv(note: str, stage: str) -> None:
    assert facts(note).stage == stage


@pytest.mark.parametrize(("note", "cancer_type"), [
    ("Endoscopy showed an ulcerated gastric body adenocarcinoma; HER2 IHC 0.", "gastric cancer"),
    ("Cirrhosis; MRI shows four arterially enhancing lesions with washout, the largest 5 cm. Child-Pugh A.",
     "hepatocellular carcinoma"),
    ("Left lower lobe mass; core biopsy confirmed adenocarcinoma. MET exon 14 skipping. First-line treatment for "
     "his lung cancer?", "non-small cell lung cancer"),
    ("Lung cancer with a hilar mass, histology pending.", "lung cancer"),
])
def test_cancer_types_a_long_note_implies(note: str, cancer_type: str) -> None:
    assert facts(note).cancer_type == cancer_type


@pytest.mark.parametrize(("note", "statuses"), [
    ("A platinum-sensitive recurrence in 2023 was treated with carboplatin. What targeted treatment is appropriate "
     "for her platinum-resistant recurrence?", ("platinum:resistant",)),
    ("Platinum-sensitive recurrence in 2023. Is it platinum-resistant now?", ("platinum:sensitive",)),  # asked
])
def test_a_status_a_question_gives_the_patients_disease_is_stated(note: str, statuses: tuple[str, ...]) -> None:
    assert facts(note).statuses == statuses


KEYNOTE_826 = (
    "2. KEYNOTE-826 (NCT03635567) was a multicenter, phase III, randomized trial that included 617 women with "
    "persistent, recurrent, or metastatic squamous cell carcinoma of the cervix not amenable to curative treatment. "
    "Patients had measurable disease. Patients received six cycles and were randomly assigned 1:1 to receive "
    "pembrolizumab or placebo every 3 weeks for up to 35 cycles. The median follow-up was 39.1 months, with dual "
    "primary end points of PFS and OS.")


@pytest.mark.parametrize(("history", "offered"), [
    ("she received carboplatin, paclitaxel, bevacizumab and pembrolizumab; CT now shows progression.", False),
    ("she has had no systemic therapy.", True),
])
def test_a_trial_whose_arm_the_case_progressed_on_is_not_offered(history: str, offered: bool) -> None:
    """A long note's cervical cancer that progressed on chemotherapy with pembrolizumab had KEYNOTE-826's
    population sentence released (only its randomization sentence, naming pembrolizumab, had been dropped)."""
    from engine.casefit import locked_candidates
    from engine.state import Passage

    p = Passage("E1", "c1", "Cervical Cancer Treatment", "cervix.md",
                "Treatment of Stage IVB and Recurrent Cervical Cancer", None, KEYNOTE_826, 0.2, 4.0, True)
    kept, dropped = locked_candidates([p], facts(f"Metastatic cervical cancer, PD-L1 CPS 15; {history} ECOG 1."))
    assert ("E1.s1" in kept) == offered
    if not offered:
        assert not kept and "tells the trial whose arms E1.s3 gives" in dropped["E1.s1"]


LEN_REFRACTORY = ("62-year-old man with myeloma: bortezomib, lenalidomide and dexamethasone induction, transplant and "
                  "lenalidomide maintenance, but progressed in 2023 while on lenalidomide. What cellular therapy?")


@pytest.mark.parametrize(("text", "ruled_out"), [
    ("Lenalidomide maintenance prolonged progression-free survival.", True),
    ("Daratumumab plus lenalidomide and dexamethasone improved progression-free survival.", True),
    ("Pomalidomide plus dexamethasone is a treatment option.", False),
    ("Ciltacabtagene autoleucel was approved for lenalidomide-refractory myeloma.", False),  # its population
    ("In patients refractory to lenalidomide, pomalidomide improved survival.", False),
])
def test_a_case_that_progressed_on_lenalidomide_is_not_offered_it_again(text: str, ruled_out: bool) -> None:
    """A long note's lenalidomide-refractory myeloma had every drafted sentence about lenalidomide."""
    from engine.casefit import case_from_facts, unusable_targets

    f = facts(LEN_REFRACTORY)
    assert f.progressed_after == ("lenalidomide",)
    assert bool(unusable_targets(text, [], case_from_facts(f))) == ruled_out


@pytest.mark.parametrize(("note", "genes"), [
    ("Clear cell renal cell carcinoma after nephrectomy; eGFR after surgery is 62 mL/min.", ()),
    ("Lung adenocarcinoma, EGFR negative; eGFR 70.", ()),
    ("NSCLC with an EGFR exon 19 deletion; eGFR 70.", ("EGFR",)),
])
def test_egfr_the_kidney_function_is_no_gene(note: str, genes: tuple[str, ...]) -> None:
    """A long note's "eGFR after surgery is 62 mL/min" had made a kidney cancer EGFR-altered."""
    assert facts(note).genes == genes
    assert facts("Lung cancer, eGFR 55 mL/min.").cancer_type == "lung cancer"


@pytest.mark.parametrize(("text", "kind"), [
    ("Patients had measurable disease.", 2),  # a long note's model drafted it among five, ahead of the answer
    ("All patients had measurable disease by RECIST.", 2),
    ("Patients who had progressed on platinum may be offered pembrolizumab.", 0),
])
def test_a_trial_population_in_the_past_tense_is_narrative(text: str, kind: int) -> None:
    from engine.casefit import sentence_kind

    assert sentence_kind(text) == kind
