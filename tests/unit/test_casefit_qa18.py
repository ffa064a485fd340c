"""Case fit and candidate selection for misreads a clinician QA pass found (session 18). Passages are written in
the manner of the guideline summaries (the prostate one quotes PDQ's "Treatment of Stage IV Prostate Cancer >
Overview" as it is laid out)."""

from __future__ import annotations

from engine.casefit import STAGING_ROW_REASON, locked_candidates
from engine.state import CaseFacts, Passage

STAGE_IV_OVERVIEW = "## Treatment of Stage IV Prostate Cancer > ### Overview"
OPTIONS = "## Treatment of Stage IV Prostate Cancer > ### Treatment Options for Stage IV Prostate Cancer"
MHSPC = CaseFacts(cancer_type="prostate cancer", stage="IV", stage_text="metastatic")


def passage(pid: str, section: str, text: str) -> Passage:
    return Passage(pid, f"c-{pid}", "Prostate Cancer Treatment", "prostate.md", section, None, text, 0.2, 4.0, True)


OVERVIEW = passage("E1", STAGE_IV_OVERVIEW, (
    "Stage IV prostate cancer is defined by the American Joint Committee on Cancer's TNM classification system:\n\n"
    "**Stage IVA**\n\n- Any T, N1, M0, any prostate-specific antigen (PSA), any Gleason.\n\n"
    "**Stage IVB**\n\n- Any T, N0, M1, any PSA, any Gleason.\n\n"
    "Extraprostatic extension with microscopic bladder neck invasion (T4) is included with T3a.\n\n"
    "Treatment selection depends on the following factors:\n\n- Age.\n- Coexisting medical illnesses.\n"
    "- The presence of distant metastases (most often bone) or regional lymph node involvement only.\n\n"
    "Bisphosphonates may also be used for the management of bone metastases."))
HORMONAL = passage("E2", OPTIONS, "Hormonal treatment is the mainstay of therapy.")


def test_rows_of_a_staging_table_are_never_offered() -> None:
    """The QA pass's newly diagnosed mHSPC case had "Any T, N0, M1, any PSA, any Gleason." and the T3a rule released
    as recommendations."""
    kept, dropped = locked_candidates([OVERVIEW, HORMONAL], MHSPC)
    offered = [t for _, t in kept.values()]
    assert not any("Any T" in t or "T3a" in t for t in offered)
    assert sorted(sid for sid, why in dropped.items() if why == STAGING_ROW_REASON) == ["E1.s1", "E1.s2", "E1.s3"]


def test_items_of_a_list_of_factors_come_after_what_to_do() -> None:
    kept, _ = locked_candidates([OVERVIEW, HORMONAL], MHSPC)
    offered = [t for _, t in kept.values()]
    factor = offered.index("The presence of distant metastases (most often bone) or regional lymph node "
                           "involvement only.")
    assert offered.index("Hormonal treatment is the mainstay of therapy.") < factor
    assert offered.index("Bisphosphonates may also be used for the management of bone metastases.") < factor
