"""Case facts gaps from the audit (engine/facts.py): negated MSI-H read as MSS/pMMR, HER2 by its ISH result alone
(ASCO/CAP groups), and resectability: the latest state wins ("initially unresectable, now resected") and a thread
keeps what an earlier turn said when a later turn says nothing about it (``merge_facts``)."""

from __future__ import annotations

import pytest

from engine.casefit import case_from_facts
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts, merge_facts


def facts(text: str):
    return extract_facts(text, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])


@pytest.mark.parametrize("note", [
    "stage IV colon cancer, not MSI-H, KRAS G12D",
    "stage IV colon cancer, non-MSI-H",
    "stage IV colon cancer, non MSI-high",
    "stage IV colon cancer, MSI-H negative",
    "stage IV colon cancer; tumour is not MSI-H/dMMR",
    "stage IV colon cancer, negative for MSI-H",
    "stage IV colon cancer, no dMMR",
    "stage IV colon cancer, MSS",
    "stage IV colon cancer, microsatellite stable",
    "stage IV colon cancer, MSI-low",
    "stage IV colon cancer, MSI stable",
])
def test_negated_msi_high_is_mismatch_repair_proficient(note: str) -> None:
    assert case_from_facts(facts(note)).mmr == "proficient"


@pytest.mark.parametrize("note, want", [
    ("stage IV colon cancer, MSI-H", "deficient"),
    ("stage IV colon cancer, dMMR (loss of MLH1/PMS2)", "deficient"),
    ("stage IV colon cancer, MSI-H testing pending", None),   # no result yet: nothing read
    ("stage IV colon cancer, awaiting MSI-H", None),
    ("stage IV colon cancer, not MSS", None),                 # a negated proficient result is not read as MSI-H
])
def test_mmr_results_that_stay_as_they_were_or_unknown(note: str, want: str | None) -> None:
    assert case_from_facts(facts(note)).mmr == want


def test_negated_msi_high_marker_keeps_its_negation() -> None:
    f = facts("metastatic colon cancer, not MSI-H")
    assert "not MSI-H" in f.markers and "MSI-H" not in f.markers


@pytest.mark.parametrize("note, status, altered", [
    ("breast cancer, HER2/CEP17 ratio 2.4, average HER2 copy number 5.6", "positive", True),
    ("breast cancer, HER2 FISH ratio 2.4, copy number 4.0", "positive", True),
    ("breast cancer, HER2 FISH ratio 1.3, copy number 3.1", "negative", False),
    ("breast cancer, HER2/CEP17 ratio of 1.6 with 2.9 signals per cell", "negative", False),
    ("breast cancer, HER2 FISH amplified", "positive", True),
    ("breast cancer, HER2 amplified", "positive", True),
    ("breast cancer, HER2 not amplified", "negative", False),
    ("breast cancer, HER2 FISH not amplified", "negative", False),
    ("breast cancer, HER2 ISH non-amplified", "negative", False),
    ("breast cancer, HER2 SISH negative", "negative", False),
    # ASCO/CAP groups 2-4 need the IHC work-up: no status rather than a guess
    ("breast cancer, HER2/CEP17 ratio 2.3, copy number 3.5", None, False),
    ("breast cancer, HER2 FISH ratio 1.5, copy number 6.4", None, False),
    ("breast cancer, HER2 FISH ratio 1.7, copy number 4.6", None, False),
    # a ratio alone cannot tell group 1 from group 2 (or 5 from 3-4)
    ("breast cancer, HER2/CEP17 ratio 2.4", None, False),
    ("breast cancer, HER2 FISH ratio 1.3", None, False),
    # the word and the numbers disagree: nothing read
    ("breast cancer, HER2 FISH amplified, ratio 1.2, copy number 2.5", None, False),
])
def test_her2_by_ish_result(note: str, status: str | None, altered: bool) -> None:
    f = facts(note)
    assert case_from_facts(f).receptors.get("HER2") == status, f.markers
    assert ("HER2" in f.genes) is altered, f.genes


@pytest.mark.parametrize("note", ["breast cancer, no HER2 amplification", "breast cancer, HER2 amplification absent"])
def test_negated_her2_amplification_is_not_her2_positive(note: str) -> None:
    f = facts(note)
    assert case_from_facts(f).receptors.get("HER2") == "negative" and "HER2" not in f.genes, f.markers


def test_her2_ish_markers_say_what_was_read() -> None:
    assert "HER2-positive (ISH ratio 2.4, copy number 5.6)" in facts(
        "HER2/CEP17 ratio 2.4, average HER2 copy number 5.6").markers
    assert "HER2-negative (ISH not amplified)" in facts("HER2 FISH not amplified").markers
    assert "HER2 ISH unclassified (ratio 2.4)" in facts("HER2/CEP17 ratio 2.4").markers


@pytest.mark.parametrize("note", [
    "colon cancer with liver metastases, initially unresectable, now resected after conversion chemotherapy",
    "liver metastases originally deemed unresectable; after conversion FOLFOXIRI they were resected",
    "stage IIIA NSCLC, unresectable at diagnosis, now resected after induction chemoimmunotherapy",
])
def test_latest_resectability_wins(note: str) -> None:
    f = facts(note)
    assert "unresectable" not in (f.stage_text or "") and "resected" in (f.stage_text or ""), f.stage_text
    assert not case_from_facts(f).unresectable


@pytest.mark.parametrize("note", [
    "stage IIIA NSCLC, unresectable",
    "primary resected; liver metastases unresectable",
    "liver metastases unresectable, primary tumour resected",   # two sites, no change over time: stays unresectable
])
def test_unresectable_stays_without_a_change_over_time(note: str) -> None:
    assert case_from_facts(facts(note)).unresectable


def test_merge_keeps_unresectable_when_a_later_turn_states_a_stage_only() -> None:
    first = facts("NSCLC, unresectable, EGFR negative")
    later = facts("restaged: stage IIIB; what consolidation is advised?")
    merged = merge_facts(first, later)
    assert merged.stage == "III" and case_from_facts(merged).unresectable, merged.stage_text
    first = facts("stage IIIA NSCLC, unresectable")
    merged = merge_facts(first, facts("now stage IIIB after restaging"))
    assert merged.stage == "III" and case_from_facts(merged).unresectable, merged.stage_text
    # a derived stage replaced by a stated one keeps the extent too
    merged = merge_facts(facts("rectal cancer, T3N1M0, inoperable"), facts("stage IIIB rectal cancer"))
    assert case_from_facts(merged).unresectable, merged.stage_text


def test_merge_takes_the_later_resection_state() -> None:
    first = facts("colon cancer, liver metastases, unresectable")
    later = facts("after conversion chemotherapy the liver metastases were resected; adjuvant options?")
    merged = merge_facts(first, later)
    assert not case_from_facts(merged).unresectable and "resected" in (merged.stage_text or ""), merged.stage_text
    # and the other way: resected earlier, unresectable recurrence later
    merged = merge_facts(facts("stage III colon cancer, resected"), facts("now an unresectable recurrence"))
    assert case_from_facts(merged).unresectable, merged.stage_text


def test_metastatic_potential_is_no_stage() -> None:
    assert facts("node-negative colon cancer with high metastatic potential on gene expression").stage is None
    assert facts("colon cancer, metastatic to the liver").stage == "IV"


@pytest.mark.parametrize("note, status, altered", [
    ("breast cancer, HER2 IHC 2+, FISH ratio 2.4, copy number 5.2", "positive", True),
    ("breast cancer, HER2 2+ by IHC; FISH ratio 1.4 with 2.6 signals per cell", "low", False),
    ("breast cancer, HER2 IHC 2+, FISH ratio 2.1, copy number 3.2", None, False),   # group 2: IHC work-up
])
def test_her2_ihc_2_plus_read_with_the_ish_numbers_after_it(note: str, status: str | None, altered: bool) -> None:
    f = facts(note)
    assert case_from_facts(f).receptors.get("HER2") == status, f.markers
    assert ("HER2" in f.genes) is altered


def test_merge_reads_the_latest_of_conflicting_markers() -> None:
    first = facts("metastatic colon cancer, MSI-H")
    second = merge_facts(first, facts("correction: not MSI-H on repeat testing"))
    assert case_from_facts(second).mmr == "proficient"
    third = merge_facts(second, facts("outside lab confirms MSI-H"))
    assert case_from_facts(third).mmr == "deficient", third.markers


@pytest.mark.parametrize("note, resected", [
    ("liver metastases initially unresectable; referred to surgery and resected", True),
    ("liver metastases initially unresectable; could not be resected after chemotherapy", False),
    ("initially unresectable; may be resected if response continues", False),
])
def test_resection_done_or_not(note: str, resected: bool) -> None:
    assert case_from_facts(facts(note)).unresectable is not resected, facts(note).stage_text


@pytest.mark.parametrize("note, gene", [
    # the audit's ALK case ("tissue shows an EML4-ALK fusion") had no marker, and was offered EGFR lines
    ("Lung adenocarcinoma with brain metastases; tissue shows an EML4-ALK fusion.", "ALK"),
    ("Stage IV NSCLC, CD74-ROS1 fusion on NGS.", "ROS1"),
    ("Metastatic NSCLC with a KIF5B-RET fusion.", "RET"),
])
def test_a_fusion_named_with_its_partner_is_the_gene_altered(note: str, gene: str) -> None:
    f = facts(note)
    assert gene in f.genes and f"{gene} fusion" in f.markers
    assert case_from_facts(f).altered.get(gene) is not None


@pytest.mark.parametrize("note", ["Metastatic NSCLC, anti-EGFR antibody given before.", "Lung cancer, non-ALK fusion."])
def test_a_hyphenated_word_before_a_gene_is_no_partner(note: str) -> None:
    assert facts(note).genes == ()
