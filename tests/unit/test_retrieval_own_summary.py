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
