"""Tumour-antigen expression that selects a drug (CLDN18.2 for zolbetuximab, folate receptor alpha for mirvetuximab
soravtansine): read as a marker, named in the focused retrieval query, and judged by case fit. Two long notes'
answers (l11 "claudin 18.2 positive", l17 "high folate receptor alpha expression") had been left unread: the query
named no marker, and "for patients with CLDN18.2-positive tumors" applied to any gastric cancer without a qualifier."""

from __future__ import annotations

import pytest

from engine.casefit import assess, case_from_facts, locked_candidates
from engine.config import Settings
from engine.facts import expression_readings, extract_facts
from engine.nodes.corrective_rag import focused_query
from engine.nodes.router import score_facts
from engine.state import CaseFacts, Passage

GASTRIC = ("Metastatic gastric adenocarcinoma to the liver and peritoneum. Biomarkers: HER2 IHC 0, claudin 18.2 "
           "positive with moderate-to-strong staining in 80% of tumor cells, PD-L1 CPS 2, microsatellite stable. "
           "What first-line systemic therapy?")
OVARIAN = ("High-grade serous ovarian cancer, platinum-resistant recurrence three months after carboplatin. Tumor "
           "testing shows high folate receptor alpha expression (at least 75% of cells with moderate-to-strong "
           "staining). What targeted treatment is appropriate?")
ZOLBETUXIMAB = ("Two randomized trials tested the addition of zolbetuximab to either CAPOX or mFOLFOX6 in patients "
                "with CLDN18.2-positive, HER2-negative metastatic gastroesophageal or gastric adenocarcinoma.")
MIRASOL = ("All patients were required to have high tumor expression of folate receptor alpha (defined as >=75% of "
           "cells >=2+ by immunohistochemistry).")


def facts(note: str) -> CaseFacts:
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def test_the_notes_expression_results_are_markers_and_in_the_focused_query() -> None:
    gastric, ovarian = facts(GASTRIC), facts(OVARIAN)
    assert "CLDN18.2-positive" in gastric.markers
    assert "FRα-high (folate receptor alpha)" in ovarian.markers
    assert "CLDN18.2-positive" in focused_query(GASTRIC, gastric)
    assert "FRα-high (folate receptor alpha)" in focused_query(OVARIAN, ovarian)
    # a biomarker, not a mutation: the router's score is what it was without it
    cfg = Settings().router
    without = facts(GASTRIC.replace("claudin 18.2 positive with moderate-to-strong staining in 80% of tumor cells, ",
                                    ""))
    assert score_facts(gastric, cfg).score == score_facts(without, cfg).score


@pytest.mark.parametrize(("text", "reading"), [
    ("CLDN18.2-negative", ("CLDN18.2", "negative")),
    ("negative for claudin 18.2", ("CLDN18.2", "negative")),
    ("FR-alpha expression: low", ("FRα", "low")),
    ("no FRα expression", ("FRα", "negative")),
    ("Mirvetuximab Soravtansine in FRα-Positive, Platinum-Resistant Ovarian Cancer", ("FRα", "positive")),
    # the word after a name is its own, not the one before it that belongs to HER2
    ("HER2 negative claudin 18.2 positive", ("CLDN18.2", "positive")),
])
def test_readings(text: str, reading: tuple[str, str]) -> None:
    assert [r[2:] for r in expression_readings(text)] == [reading]


@pytest.mark.parametrize("text", ["FRα testing pending", "claudin 18.2 testing was sent", "CLDN18.2 status unknown",
                                  "no FRα expression testing was done", "no claudin 18.2 test result yet"])
def test_no_result_is_no_reading(text: str) -> None:
    assert expression_readings(text) == []


def test_case_fit_judges_a_line_by_the_cases_expression() -> None:
    assert assess(ZOLBETUXIMAB, case_from_facts(facts(GASTRIC))).verdict == "fits"
    negative = assess(ZOLBETUXIMAB, case_from_facts(facts(GASTRIC.replace("claudin 18.2 positive", "claudin 18.2 "
                                                                                                      "negative"))))
    assert negative.verdict == "contradicts" and "the case is CLDN18.2-negative" in negative.reason
    unstated = assess(ZOLBETUXIMAB, case_from_facts(facts(GASTRIC.replace("claudin 18.2 positive", "CLDN18.2 "
                                                                                                       "pending"))))
    assert unstated.verdict == "unknown" and "CLDN18.2-positive" in unstated.reason
    # high expression is what MIRASOL required: positive may be below it, low is not it
    assert assess(MIRASOL, case_from_facts(facts(OVARIAN))).verdict == "fits"
    assert assess(MIRASOL, case_from_facts(facts(OVARIAN.replace("high folate", "positive folate")))).verdict == \
        "unknown"
    assert assess(MIRASOL, case_from_facts(facts(OVARIAN.replace("high folate", "low folate")))).verdict == \
        "contradicts"


def test_a_line_for_the_cases_expression_is_offered_before_general_ones() -> None:
    general = "Chemotherapy with FOLFOX or CAPOX is a first-line option for metastatic gastric adenocarcinoma."
    option = ("Zolbetuximab with chemotherapy is a first-line option for patients with CLDN18.2-positive, "
              "HER2-negative metastatic gastric adenocarcinoma.")
    p = Passage("E1", "c-E1", "Gastric Cancer Treatment", "stomach.md", "Treatment of Stage IV Gastric Cancer", None,
                f"{general} {option}", 0.2, 5.0, relevant=True)
    kept, _ = locked_candidates([p], facts(GASTRIC), GASTRIC)
    assert list(kept) == ["E1.s2", "E1.s1"]
    # without the result, the zolbetuximab line applies only if CLDN18.2-positive: after the general one
    unstated = GASTRIC.replace("claudin 18.2 positive", "CLDN18.2 pending")
    assert list(locked_candidates([p], facts(unstated), unstated)[0]) == ["E1.s1", "E1.s2"]
