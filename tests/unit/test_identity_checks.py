"""Ids compared as people mean them: a clinician cannot approve their own consult by typing their id with
another case or a trailing space, and a patient id is PT- and ASCII digits, the whole of it (a trailing
newline made a second "PT-0013", Arabic-Indic digits passed as a patient)."""

from __future__ import annotations

import pytest

from engine.checkpoint import StoreError, check_patient_id
from engine.config import HitlConfig
from engine.signoff import SignOffError, authorize


@pytest.mark.parametrize("reviewer", ["root", "Root ", " ROOT"])
def test_the_clinician_who_asked_cannot_approve_under_another_spelling(reviewer: str) -> None:
    with pytest.raises(SignOffError, match="cannot approve"):
        authorize(HitlConfig(), reviewer, "root", "approve")
    assert authorize(HitlConfig(), reviewer, "root", "reject").id == reviewer.strip()  # rejecting is allowed


def test_another_reviewer_may_approve() -> None:
    assert authorize(HitlConfig(), "dr.lee", "root", "approve").id == "dr.lee"


@pytest.mark.parametrize("bad", ["PT-0013\n", "PT-\u0661\u0662\u0663\u0664", "PT-001", " PT-0013", "pt-0013"])
def test_a_patient_id_is_pt_and_ascii_digits(bad: str) -> None:
    with pytest.raises(StoreError, match="PT-0001"):
        check_patient_id(bad)


def test_a_well_formed_patient_id_passes() -> None:
    assert check_patient_id("PT-0013") == "PT-0013" and check_patient_id("PT-123456") == "PT-123456"
