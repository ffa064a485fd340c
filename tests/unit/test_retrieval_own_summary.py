"""Retrieval puts a case's own PDQ summary first where PDQ has one beside a larger one (male breast cancer), and what
cannot apply last."""

from __future__ import annotations

from types import SimpleNamespace

from engine.config import Settings
from engine.facts import extract_facts
from engine.nodes.corrective_rag import case_demote

NOTE = ("66M with ER+ PR+ HER2-negative breast cancer, de novo metastatic to bone and lung. What is first-line "
        "systemic therapy for this man with metastatic breast cancer?")


def hit(title: str, section: str) -> SimpleNamespace:
    return SimpleNamespace(title=title, section=section, text="x")


def test_a_mans_breast_cancer_has_the_male_summary_first_and_what_cannot_apply_last() -> None:
    """A QA pass's man had the male summary's "Aromatase inhibitor (AI) therapy in conjunction with a GnRH agonist"
    recalled 7th and cut behind five passages of the women's summary."""
    facts = extract_facts(NOTE, genes=["BRCA2"], treatment_keywords=[], rare_cancers=[])
    level = case_demote(NOTE, facts, Settings())
    assert level is not None
    male = hit("Male Breast Cancer Treatment (PDQ®) - NCI", "Treatment of Metastatic Male Breast Cancer")
    women = hit("Breast Cancer Treatment (PDQ®) - NCI", "Treatment of Metastatic Breast Cancer > Metastatic "
                "HER2-Negative Hormone Receptor–Positive Breast Cancer")
    early = hit("Breast Cancer Treatment (PDQ®) - NCI", "Systemic Therapy for Stages I, II, and III Breast Cancer")
    assert [level(h) for h in (male, women, early)] == [0, 1, 2]
    # a woman's case: both summaries as they are
    woman = extract_facts(NOTE.replace("66M", "66F").replace("this man", "her"), genes=["BRCA2"],
                          treatment_keywords=[], rare_cancers=[])
    assert case_demote(NOTE, woman, Settings())(women) == 0


HCC = ("71-year-old man with cirrhosis, Child-Pugh A, four arterially enhancing lesions with washout, no extrahepatic "
       "spread, unsuitable for resection or ablation. What liver-directed treatment is recommended for this "
       "intermediate-stage disease?")
LIVER = "Primary Liver Cancer Treatment (PDQ®) - NCI"
ADVANCED = "Treatment of Locally Advanced or Metastatic Primary Liver Cancer > Treatment Options for Locally Advanced"
TACE = hit(LIVER, f"{ADVANCED} > Transarterial embolization (TAE) and transcatheter arterial chemoembolization "
                  "(TACE) in patients with nonmetastatic disease")
LENVATINIB = hit(LIVER, f"{ADVANCED} > First-line systemic therapy > Targeted therapy (multikinase inhibitors) > "
                        "Lenvatinib")


def test_a_question_for_a_liver_directed_treatment_has_the_systemic_sections_after_the_others() -> None:
    """A long note's HCC case had lenvatinib and sorafenib drafted and TACE recalled tenth (kb/EVAL.md round 19)."""
    facts = extract_facts(HCC, genes=[], treatment_keywords=[], rare_cancers=[])
    level = case_demote(HCC, facts, Settings())
    assert level is not None and (level(TACE), level(LENVATINIB)) == (0, 1)
    # a question that asks for systemic therapy too keeps them as they are
    both = HCC.replace("What liver-directed treatment", "What liver-directed or systemic treatment")
    assert case_demote(both, facts, Settings())(LENVATINIB) == 0
