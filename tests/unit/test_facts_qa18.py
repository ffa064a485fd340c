"""What a clinician QA pass (session 18) found misread in a note or a passage: a negated list of drivers, another
disease's stage, a later line written as "progression of disease after", a rare type inside a longer name, and
"U.S." taken for a sentence's end."""

from __future__ import annotations

import pytest

from engine.casefit import assess, case_from_facts
from engine.config import Settings
from engine.facts import extract_facts, is_rare
from engine.safety import split_sentences
from engine.state import CaseFacts


def facts(note: str) -> CaseFacts:
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def test_a_negated_list_joined_by_or_denies_every_driver_variants_included() -> None:
    """The QA pass's driver-negative NSCLC case read KRAS G12C, MET, RET and NTRK as altered and was drafted RET
    and NTRK inhibitors."""
    f = facts("Stage IV lung adenocarcinoma. No EGFR, ALK, ROS1, BRAF, KRAS G12C, MET, RET or NTRK alterations. "
              "PD-L1 70%. First-line treatment?")
    assert f.genes == ()
    assert "KRAS G12C negative" in f.markers and "RET negative" in f.markers and "NTRK negative" in f.markers
    ret = assess("Selpercatinib is an option for patients with RET fusions.", case_from_facts(f))
    assert ret.verdict == "contradicts"


def test_a_finding_after_a_negation_without_or_still_counts() -> None:
    assert facts("Stage IV NSCLC, no EGFR mutation, KRAS G12C.").genes == ("KRAS",)
    assert facts("Stage IV NSCLC, no EGFR or ALK mutation, KRAS G12C.").genes == ("KRAS",)


def test_another_diseases_stage_is_not_the_cancers() -> None:
    """The QA pass's 79-year-old with AML and "chronic kidney disease stage 3" had read as stage III."""
    assert facts("79-year-old man with newly diagnosed AML, chronic kidney disease stage 3, ECOG 2.").stage is None
    assert facts("AML with CKD stage 3b and stage 2 hypertension.").stage is None
    assert facts("Stage III colon cancer; chronic kidney disease (stage 3).").stage == "III"


def test_progression_of_disease_after_platinum_is_a_later_line() -> None:
    """A QA pass's untreated, cisplatin-ineligible urothelial case was released "Progression of disease after
    treatment with platinum-based chemotherapy." (an FDA label's second-line category)."""
    untreated = case_from_facts(facts("Metastatic urothelial carcinoma, cisplatin-ineligible, no prior systemic "
                                      "therapy. First-line options?"))
    fit = assess("Progression of disease after treatment with platinum-based chemotherapy.", untreated)
    assert fit.verdict == "contradicts" and "later line" in fit.reason


def test_a_rare_type_inside_a_longer_name_counts() -> None:
    """A QA pass's 15-year-old with osteosarcoma scored 0 ("sarcoma" only matched as a word)."""
    rare = Settings().router.rare_cancers
    assert is_rare("osteosarcoma", rare) and is_rare("rhabdomyosarcoma", rare)
    assert not is_rare("ear canal cancer", rare) and not is_rare("non-small cell lung cancer", rare)


def test_the_us_fda_is_not_a_sentence_end() -> None:
    """A QA pass released "CDK inhibitors have been approved by the U.S." and "Food and Drug Administration (FDA)
    approval." as two claims."""
    assert split_sentences("Three CDK inhibitors have been approved by the U.S. Food and Drug Administration (FDA). "
                           "Abemaciclib is the only one approved as a single agent.") == [
        "Three CDK inhibitors have been approved by the U.S. Food and Drug Administration (FDA).",
        "Abemaciclib is the only one approved as a single agent."]


def test_a_figo_stage_without_the_word_stage_and_a_penile_tnm_are_read() -> None:
    """The audit's cervical "FIGO IB3" and penile "T1a N0" cases were released only qualified claims ("applies if
    stage I ... (not stated for this case)")."""
    assert facts("Squamous cell carcinoma of the cervix, 5 cm, FIGO IB3, no nodal disease on PET.").stage == "I"
    assert facts("Endometrioid endometrial carcinoma, FIGO 2018 IIIC1, after surgery.").stage == "III"
    assert facts("Penile SCC of the glans, no palpable inguinal nodes (T1a N0). Options?").stage == "I"
    assert facts("Penile cancer, T1b N0 M0.").stage == "II"
    assert facts("Penile cancer, pT3 N2 M0.").stage == "III"
    assert case_from_facts(facts("Penile cancer, pT3 N2 M0.")).stage_name  # trusted by case fit, not a guess
    assert facts("Penile cancer, T2 N3.").stage == "IV"


def test_nasopharyngeal_tnm_is_read_by_its_own_groups_and_trusted_by_case_fit() -> None:
    """The audit's "T3N2M0" nasopharyngeal case had its stage III as a routing guess only: "Treatment of Stages II,
    III, and IV Nonmetastatic Nasopharyngeal Carcinoma" stayed qualified."""
    f = facts("Locoregionally advanced nasopharyngeal carcinoma, T3N2M0, EBV-positive. Which induction "
              "chemotherapy?")
    assert f.stage == "III"
    section = "## Treatment of Stages II, III, and IV Nonmetastatic Nasopharyngeal Carcinoma"
    fit = assess("High-dose radiation therapy with chemotherapy is the initial treatment.", case_from_facts(f),
                 (section,))
    assert fit.verdict == "fits"
    assert facts("Nasopharyngeal carcinoma T2N1M0.").stage == "II"
    assert facts("Nasopharyngeal carcinoma T1N3M0.").stage == "IV"


def test_a_breast_tumours_size_and_nodes_in_words_give_its_stage() -> None:
    """The audit's "1.8 cm, node-negative" and "3.5 cm ... a positive axillary node" breast cases had no stage: every
    "Stages I, II, and III" line was only qualified."""
    small = facts("62-year-old woman, ER-positive HER2-negative breast cancer, 1.8 cm, node-negative, after "
                  "lumpectomy. What adjuvant systemic therapy is recommended?")
    assert small.stage == "I" and small.stage_text.startswith("1.8 cm, node-negative")
    section = "## Systemic Therapy for Stages I, II, and III Breast Cancer"
    assert assess("Adjuvant endocrine therapy reduces recurrence.", case_from_facts(small), (section,)).verdict == \
        "fits"
    assert facts("34-year-old with a 3.5 cm triple-negative invasive ductal carcinoma and a positive axillary "
                 "node.").stage == "II"
    assert facts("Breast cancer, 15 mm, sentinel nodes negative.").stage == "I"
    assert facts("Breast cancer 2 cm, node-positive.").stage is None  # how many nodes decides II or III
    assert facts("HER2-positive breast cancer, residual 1.2 cm after neoadjuvant therapy, node negative.").stage \
        is None


def test_a_neuroendocrine_tumour_of_the_gut_is_not_answered_from_the_pancreatic_summary() -> None:
    """A QA pass's ileal NET was drafted "Favorable responses ... in patients with advanced progressive pancreatic
    NETs" from the pancreatic NET summary."""
    from engine.ledger import case_words, on_case
    from engine.state import Passage

    f = facts("62-year-old woman with a metastatic well-differentiated neuroendocrine tumor of the ileum, grade 2, "
              "with liver metastases, progressing on octreotide LAR. Next treatment?")
    assert f.cancer_type == "gastrointestinal neuroendocrine tumor" and f.rare
    terms = case_words(f.cancer_type)

    def about(title: str) -> bool:
        return on_case(Passage("E1", "c", title, "x.md", "## Treatment", None, "Everolimus.", 0.2, 4.0, True), terms)
    assert about("Gastrointestinal Neuroendocrine Tumors (PDQ®) - NCI")
    assert not about("Pancreatic Neuroendocrine Tumors (Islet Cell Tumors) Treatment (PDQ®) - NCI")
    assert facts("Pancreatic neuroendocrine tumor with liver metastases.").cancer_type == \
        "pancreatic neuroendocrine tumor"


def test_surgery_finished_or_undergone_is_a_resection() -> None:
    """The audit's BRCA2 breast case "finished neoadjuvant chemotherapy and surgery" had read as not operated: the
    preoperative options list was offered to it first."""
    assert "resected" in (facts("HER2-negative early breast cancer, finished neoadjuvant chemotherapy and surgery "
                                "with residual disease. Adjuvant options?").stage_text or "")
    assert "resected" not in (facts("Breast cancer planned for surgery. Neoadjuvant options?").stage_text or "")


@pytest.mark.parametrize("note", [
    "Stage IV lung adenocarcinoma, negative for EGFR, ALK, ROS1, KRAS G12C and RET. PD-L1 80%.",
    "Stage IV lung adenocarcinoma; EGFR, ALK, ROS1, BRAF V600E, KRAS G12C, MET exon 14, RET and NTRK all wild type.",
    "Stage IV lung adenocarcinoma. NGS: no actionable alterations (EGFR, ALK, KRAS G12C, RET tested). PD-L1 80%.",
    "Stage IV lung adenocarcinoma without EGFR mutation, ALK rearrangement, or KRAS G12C mutation. PD-L1 80%.",
])
def test_reworded_negated_driver_lists_deny_every_driver(note: str) -> None:
    """A second QA pass's paraphrases of the driver-negative note had read every driver, or the later ones, as
    altered."""
    assert facts(note).genes == ()
    # nor does case fit read a denied variant ("KRAS G12C negative") as that variant present
    assert case_from_facts(facts(note)).altered == {}


@pytest.mark.parametrize("note, genes", [
    ("Stage IV NSCLC, no EGFR mutation, KRAS G12C.", ("KRAS",)),
    ("No EGFR or ALK alterations, and KRAS G12C positive.", ("KRAS",)),
    ("EGFR and KRAS wild-type, BRAF V600E mutated.", ("BRAF",)),
])
def test_a_finding_of_its_own_still_counts_beside_a_negated_list(note: str, genes: tuple[str, ...]) -> None:
    assert facts(note).genes == genes


@pytest.mark.parametrize("note, cancer", [
    ("58-year-old with adenocarcinoma of the ascending colon, pT3N1a, after right hemicolectomy.", "colon cancer"),
    ("Adenocarcinoma of the cecum, stage II.", "colon cancer"),
    ("Adenocarcinoma of the mid rectum, cT3N1, MRI shows no threatened margin.", "rectal cancer"),
    ("Adenocarcinoma of the lower third of the rectum.", "rectal cancer"),
])
def test_a_colon_or_rectal_cancer_named_by_its_part_is_read(note: str, cancer: str) -> None:
    """A second QA pass's "adenocarcinoma of the ascending colon" and "... of the mid rectum" notes were refused:
    no cancer type had been read."""
    assert facts(note).cancer_type == cancer


@pytest.mark.parametrize("note, stage, trusted", [
    ("60-year-old with locally advanced HPV-negative squamous cell carcinoma of the oropharynx, T4aN2bM0. Definitive "
     "treatment?", "IV", True),
    ("54-year-old, p16-positive squamous cell carcinoma of the left tonsil, T2N1M0. Definitive treatment?", "I", True),
    ("HPV-positive oropharyngeal cancer, T3N2M0.", "II", True),
    ("Oropharyngeal squamous cell carcinoma, T2N1M0, HPV status pending.", "III", False),  # the routing rule only
])
def test_an_oropharynx_tnm_is_staged_by_its_hpv_status(note: str, stage: str, trusted: bool) -> None:
    """A second QA pass's HPV-negative T4aN2b oropharynx case read as stage III (a routing guess); an HPV-positive
    T2N1 is stage I by AJCC 8."""
    f = facts(note)
    assert f.stage == stage
    assert bool(case_from_facts(f).stage_name) is trusted


@pytest.mark.parametrize("note, extent", [
    ("Hepatocellular carcinoma, BCLC stage B, not a transplant candidate, not resectable. Treatment?", "unresectable"),
    ("Pancreatic adenocarcinoma, not a surgical candidate because of comorbidities. Treatment?", "unresectable"),
    ("Colon cancer liver metastases, initially not resectable, now resected after chemotherapy.", "resected"),
])
def test_unresectable_written_out_is_read(note: str, extent: str) -> None:
    """A second QA pass's "not resectable" HCC case was read as operable (resection lines offered)."""
    assert extent in (facts(note).stage_text or "").split(", ")
    if extent == "unresectable":
        assert case_from_facts(facts(note)).unresectable
