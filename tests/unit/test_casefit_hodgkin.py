"""Classic HL and NLPHL, which PDQ treats apart: a case that names one is not offered the other's sections (the
audit's stage IVB classic HL case was offered "For patients with advanced-stage NLPHL, chemotherapy regimens
designed for patients with non-Hodgkin lymphomas, such as R-CHOP ...")."""

import pytest

from engine.casefit import assess, case_from_facts, locked_candidates
from engine.facts import extract_facts
from engine.state import Passage

NLPHL = "## Treatment of Nodular Lymphocyte\u2013Predominant HL (NLPHL) > ### Treatment Options for NLPHL"
CLASSIC = "## Treatment of Advanced Classic HL > ### Treatment Options for Advanced Classic HL"


def facts(note: str):
    return extract_facts(note, genes=[], treatment_keywords=[], rare_cancers=[])


@pytest.mark.parametrize("note, subtype", [
    ("28-year-old with stage IVB classic Hodgkin lymphoma. What first-line chemotherapy?", "classic HL"),
    ("Stage IIA classical Hodgkin lymphoma, nodular sclerosis.", "classic HL"),
    ("Stage IA nodular lymphocyte-predominant Hodgkin lymphoma of the neck.", "NLPHL"),
    ("Hodgkin lymphoma, NLPHL, stage III.", "NLPHL"),
])
def test_the_note_names_its_type(note: str, subtype: str):
    assert facts(note).subsites == (subtype,)


def test_the_other_types_sections_do_not_apply():
    classic = case_from_facts(facts("Stage IVB classic Hodgkin lymphoma. What first-line chemotherapy?"))
    nlphl = case_from_facts(facts("Stage III nodular lymphocyte-predominant Hodgkin lymphoma. Treatment?"))
    sentence = "Chemotherapy regimens such as R-CHOP are used."
    assert assess(sentence, classic, (NLPHL,)).reason == (
        "does not apply to this case: comes from the section \u201cTreatment of Nodular Lymphocyte\u2013Predominant "
        "HL (NLPHL) > Treatment Options for NLPHL\u201d; the case is classic HL")
    assert assess(sentence, nlphl, (NLPHL,)).verdict == "fits"
    assert assess(sentence, nlphl, (CLASSIC,)).verdict == "contradicts"
    # a note that names no type: qualified, not ruled out
    unnamed = case_from_facts(facts("Stage II Hodgkin lymphoma. Treatment?"))
    assert assess(sentence, unnamed, (NLPHL,)).verdict == "unknown"


def test_a_paragraph_about_nlphl_is_not_offered_to_a_classic_case():
    text = ("For patients with advanced-stage NLPHL, regimens designed for non-Hodgkin lymphomas are used. "
            "Rituximab is often added.")
    p = Passage("E1", "c1", "Hodgkin Lymphoma Treatment", "hl.md", "## Treatment Option Overview for HL", None, text,
                0.2, 4.0, True)
    offered, dropped = locked_candidates([p], facts("Stage IVB classic Hodgkin lymphoma. First-line?"))
    assert not offered and len(dropped) == 2
