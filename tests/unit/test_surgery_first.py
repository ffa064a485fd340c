"""A population that had surgery first is not a case treated before its operation (session 23: a QA pass's TNBC
with residual disease after neoadjuvant chemotherapy had "For patients who undergo surgery first, combination
chemotherapy is typically given in the adjuvant setting." drafted)."""

from __future__ import annotations

import pytest

from engine.casefit import locked_candidates, treated_before_surgery
from engine.config import Settings
from engine.facts import extract_facts
from engine.state import Passage

NOTE = ("38-year-old woman with stage IIB triple-negative breast cancer. Her team avoided checkpoint inhibitors, and "
        "she received neoadjuvant doxorubicin-cyclophosphamide followed by paclitaxel with carboplatin. Lumpectomy "
        "showed residual disease. What postoperative systemic therapy is recommended?")
TEXT = ("For patients who undergo surgery first, combination chemotherapy is typically given in the adjuvant setting. "
        "While there is no established standard, anthracycline-containing regimens are often used.\n\n"
        "Capecitabine is a standard treatment option for patients with residual disease.")


@pytest.mark.parametrize(("note", "had"), [
    (NOTE, "and she received neoadjuvant doxorubicin-cyclophosphamide followed by paclitaxel with carboplatin"),
    ("After preoperative chemoradiation, he had a low anterior resection.", "After preoperative chemoradiation"),
    # not given, or only asked about
    ("She did not receive neoadjuvant chemotherapy; lumpectomy showed a 2 cm tumour.", ""),
    ("Stage II TNBC. Should she receive neoadjuvant chemotherapy?", ""),
])
def test_treatment_given_before_surgery_is_read_from_the_note(note: str, had: str) -> None:
    assert treated_before_surgery(note) == had


def test_a_surgery_first_paragraph_is_not_offered_to_a_case_treated_before_surgery() -> None:
    p = Passage("E1", "c-E1", "Breast Cancer Treatment", "breast.md", "Stages I-III TNBC > Postoperative therapy",
                None, TEXT, 0.2, 5.0, relevant=True)
    r = Settings().router

    def offered(note: str) -> tuple[list[str], dict[str, str]]:
        f = extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)
        kept, dropped = locked_candidates([p], f, note)
        return [text for _, text in kept.values()], dropped

    kept, dropped = offered(NOTE)
    assert kept == ["Capecitabine is a standard treatment option for patients with residual disease."]
    assert "had surgery first" in dropped["E1.s1"] and "its paragraph opens with" in dropped["E1.s2"]
    # a case that went to surgery first is offered the paragraph
    kept, _ = offered(NOTE.replace("she received neoadjuvant", "she later received adjuvant"))
    assert len(kept) == 3
