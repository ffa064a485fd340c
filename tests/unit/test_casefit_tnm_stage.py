"""engine.facts reads any node-positive M0 TNM as stage III for routing; for case fit that guess is used only
where every such case is stage III (colon, rectum, melanoma, anus, Merkel cell; bladder by its own staging). A
"T2N1M0" breast cancer is IIB: its stage II lines were withheld as contradicting "stage III"."""

import pytest

from engine.casefit import assess, case_from_facts
from engine.facts import extract_facts


def case(text: str):
    return case_from_facts(extract_facts(text, genes=["KRAS", "BRAF"], treatment_keywords=[], rare_cancers=[]))


@pytest.mark.parametrize("note", [
    "Breast cancer, T2N1M0, ER-positive.",  # IIB
    "Pancreatic adenocarcinoma, pT2N1M0, resected.",  # IIB
    "Gastric adenocarcinoma, cT1N1M0.",  # IB
    "Prostate cancer, cT2N1M0.",  # IVA
    "Papillary thyroid cancer, T2N1M1, age 40.",  # II under 55
])
def test_a_routing_only_stage_is_not_judged(note):
    c = case(note)
    assert c.stage is None
    assert assess("Stage II disease: surgery is standard.", c).verdict == "unknown"


@pytest.mark.parametrize("note, stage", [
    ("Colon cancer, pT3N1M0.", (30, 39)), ("Rectal cancer, cT3N1M0.", (30, 39)), ("Melanoma, pT2aN1aM0.", (30, 39)),
    ("Breast cancer, T2N1M1.", (40, 49)),  # M1: stage IV
    ("Breast cancer, cT2N1M0, stage IIB.", (22, 22)),  # stated
    ("Urothelial carcinoma of the bladder, cT2N1M0.", (30, 39)),  # bladder staging: IIIA
])
def test_trusted_tnm_stages(note, stage):
    assert case(note).stage == stage
    if stage == (30, 39):
        assert assess("Stage II disease: surgery is standard.", case(note)).verdict == "contradicts"
