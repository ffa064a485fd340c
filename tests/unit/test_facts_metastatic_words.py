"""Metastatic disease as clinicians write it: "brain mets" and an M category on its own ("NSCLC, M1c") are
stage IV, so the router sends such a case with two mutations to Tier 2 and a reviewer (they had scored 0.30,
Tier 1, and were released unreviewed); denied metastases ("without metastases") are not stage IV; AML's FAB
"M1" is no stage."""

import pytest

from engine.config import DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts


def stage(text: str) -> str | None:
    return extract_facts(text, genes=["EGFR", "TP53", "KRAS", "FLT3"],
                         treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[]).stage


@pytest.mark.parametrize("text", [
    "NSCLC with brain mets, EGFR exon 19 deletion and TP53 mutation",
    "Adenocarcinoma of unknown primary with liver mets",
    "NSCLC, M1c, EGFR exon 19 deletion",
    "PDAC, M1, KRAS G12D",
    "Colon cancer with liver metastases; no lung metastases",
])
def test_metastases_written_briefly_are_stage_iv(text):
    assert stage(text) == "IV"


@pytest.mark.parametrize("text", [
    "Colon cancer without metastases, pT3N0",
    "Lung adenocarcinoma, cT2N0, no evidence of metastatic disease",
    "Breast cancer, negative for distant mets",
    "AML M1, FLT3-ITD",
    "AML (FAB M1), NPM1 mutated",
])
def test_denied_metastases_and_fab_subtypes_are_not(text):
    assert stage(text) != "IV"
