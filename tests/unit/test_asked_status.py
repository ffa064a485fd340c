"""A status the note only asks about is no status: "Is it HER2-positive or MSI-H, and does that matter?" had made
the case HER2-positive and MSI-H, so case fit dropped HER2-negative lines and offered HER2-targeted ones as fitting."""

from __future__ import annotations

import pytest

from engine.casefit import assess, case_from_facts
from engine.config import Settings
from engine.facts import extract_facts
from engine.state import CaseFacts


def facts(note: str) -> CaseFacts:
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


@pytest.mark.parametrize("note", [
    "Metastatic gastric adenocarcinoma. Is it HER2-positive or MSI-H, and does that matter?",
    "Metastatic gastric adenocarcinoma. Should we test whether it is claudin 18.2 positive?",
    "Stage IV lung adenocarcinoma. Is the tumour EGFR mutant?",
])
def test_a_status_only_asked_about_is_not_read(note: str) -> None:
    f = facts(note)
    assert f.markers == () and f.genes == ()


@pytest.mark.parametrize(("note", "marker"), [
    # stated, then asked again
    ("Metastatic gastric adenocarcinoma, claudin 18.2 positive. Is it claudin 18.2 positive enough?",
     "CLDN18.2-positive"),
    # a result given as the question asks
    ("Metastatic gastric adenocarcinoma. Is she a candidate for trastuzumab given HER2 3+?", "HER2-positive (IHC 3+)"),
    # a case told inside its question
    ("Stage IV NSCLC with EGFR exon 19 deletion: is it appropriate to start osimertinib?", "EGFR exon 19 deletion"),
])
def test_a_status_the_note_gives_is_kept(note: str, marker: str) -> None:
    assert marker in facts(note).markers


def test_case_fit_does_not_take_the_asked_status_for_the_cases() -> None:
    case = case_from_facts(facts("Metastatic gastric adenocarcinoma. Is it HER2-positive, and does that matter?"))
    assert assess("For HER2-negative disease, chemotherapy with nivolumab is an option.", case).verdict == "unknown"
