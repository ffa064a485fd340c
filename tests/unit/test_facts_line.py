"""The line of therapy a note states: "untreated brain metastases" is an untreated lesion, not an untreated patient
(the case was read as first line, and every later-line guideline sentence contradicted it)."""

import pytest

from engine.facts import extract_facts


def facts(text: str):
    return extract_facts(text, genes=["EGFR", "BRAF"], treatment_keywords=["osimertinib", "nivolumab"],
                         rare_cancers=[])


@pytest.mark.parametrize("text, line", [
    ("Stage IV NSCLC, EGFR exon 19 deletion, with untreated brain metastases. Options?", None),
    ("Metastatic melanoma progressed on nivolumab; untreated, asymptomatic brain metastases.", "later"),
    ("EGFR-mutant NSCLC with untreated CNS mets.", None),
    ("Untreated metastatic melanoma, BRAF V600E.", "first"),  # the patient untreated
    ("Previously untreated stage IV NSCLC.", "first"),
])
def test_untreated_lesions_are_not_an_untreated_patient(text, line):
    assert facts(text).line == line


def test_untreated_lesions_do_not_hide_prior_treatment():
    f = facts("Metastatic NSCLC progressed on osimertinib, with untreated brain metastases.")
    assert f.prior_treatments == ("osimertinib",)
    assert facts("Untreated metastatic NSCLC; is osimertinib an option?").prior_treatments == ()
