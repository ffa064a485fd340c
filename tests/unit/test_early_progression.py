"""Cytotoxics the disease progressed on or within six months of (engine.facts ``_early_progression``) are not offered
again (session 23: a clinician review of the long notes graded liposomal doxorubicin unsafe for an ovarian cancer
that came back three months after carboplatin and liposomal doxorubicin)."""

from __future__ import annotations

import pytest

from engine.casefit import locked_candidates
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts
from engine.state import CaseFacts, Passage

OVARIAN_NOTE = (
    "60-year-old woman with stage IIIC high-grade serous ovarian cancer. She had primary debulking, "
    "carboplatin-paclitaxel and bevacizumab maintenance. A platinum-sensitive recurrence in 2023 was treated with "
    "carboplatin and pegylated liposomal doxorubicin, but in 2025, three months after her last platinum dose, she "
    "developed ascites and enlarging peritoneal disease. What treatment is appropriate for her recurrence?")


def facts(note: str) -> CaseFacts:
    return extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])


@pytest.mark.parametrize(("note", "resisted"), [
    # the drugs of the last regimen, not those of the first line two years before
    (OVARIAN_NOTE, ("carboplatin", "doxorubicin")),
    ("Recurrent endometrial cancer. In 2024 she relapsed with lung nodules and received six cycles of carboplatin "
     "and paclitaxel without immunotherapy, but CT five months after finishing shows progression.",
     ("carboplatin", "paclitaxel")),
    ("Head and neck SCC treated with adjuvant radiation and three cycles of cisplatin. Four months after finishing "
     "chemoradiation, CT shows a new neck recurrence and lung metastases.", ("cisplatin",)),
    ("Platinum-resistant ovarian cancer that progressed on weekly paclitaxel.", ("paclitaxel",)),
    ("Small cell lung cancer refractory to topotecan, now with new liver metastases.", ("topotecan",)),
    # a late relapse may be re-treated (platinum-sensitive), and no progression is no resistance
    ("Ovarian cancer treated with carboplatin and paclitaxel; a recurrence was found 20 months after her last dose.",
     ()),
    ("Carboplatin and pemetrexed; no progression within 6 months of completing it, now slow growth in the lung.", ()),
    ("She had carboplatin and paclitaxel, completed three months ago, and is well.", ()),
    # fluoropyrimidines go from line to line in colorectal cancer
    ("Metastatic colon cancer; progressed on capecitabine two months after starting.", ()),
])
def test_cytotoxics_the_disease_progressed_on_soon(note: str, resisted: tuple[str, ...]) -> None:
    assert tuple(d for d in facts(note).progressed_after if d not in ("bevacizumab",)) == resisted


def passage(pid: str, text: str) -> Passage:
    return Passage(pid, f"c-{pid}", "Ovarian Epithelial Cancer Treatment", "ovarian.md",
                   "Recurrent Ovarian Cancer > Chemotherapy", None, text, 0.2,
                   5.0, relevant=True)


def test_a_regimen_built_on_a_resisted_cytotoxic_is_not_offered() -> None:
    ps = [passage("E1", "Pegylated liposomal doxorubicin and topotecan have been compared in a randomized trial of "
                        "474 patients with recurrent ovarian cancer."),
          passage("E2", "In a phase I/II trial, 40 patients scheduled to receive pegylated liposomal doxorubicin also "
                        "received durvalumab."),
          passage("E3", "Topotecan is an option for patients with recurrent disease.")]
    kept, dropped = locked_candidates(ps, facts(OVARIAN_NOTE))
    texts = [text for _, text in kept.values()]
    assert texts == ["Topotecan is an option for patients with recurrent disease."]
    assert all("progressed after" in why and "doxorubicin" in why for why in dropped.values())
    # the same passage for a case whose recurrence came 20 months after that regimen: liposomal doxorubicin stays
    late = OVARIAN_NOTE.replace("three months after her last platinum dose", "20 months after her last platinum dose")
    kept, _ = locked_candidates(ps, facts(late))
    assert len(kept) == 3


def test_a_case_that_progressed_on_a_regimen_or_soon_after_is_at_a_later_line() -> None:
    """Its claims from the "Platinum-refractory or platinum-resistant recurrence" section had all been qualified
    "applies if the line of therapy ... (not stated for this case)"."""
    assert facts(OVARIAN_NOTE).line == "later"
    late = OVARIAN_NOTE.replace("three months after her last platinum dose", "20 months after her last platinum dose")
    assert facts(late).line is None


SCLC_NOTE = ("Extensive-stage small cell lung cancer treated with carboplatin, etoposide and atezolizumab. At "
             "progression in 2024 he received lurbinectedin for four cycles with brief stabilization, but CT now "
             "shows growth of liver disease. What treatment option exists after two prior lines?")


def test_a_regimen_the_statement_turns_from_to_growth_was_progressed_on() -> None:
    assert "lurbinectedin" in facts(SCLC_NOTE).progressed_after
    # not when a later time stands between them, nor a drug set aside in brackets
    assert facts("She received paclitaxel with a complete response, but relapsed two years later.").progressed_after \
        == ()
    assert facts("He received doxorubicin (ifosfamide was avoided because of his kidney) with stable disease, but "
                 "scans now show progression.").progressed_after == ("doxorubicin",)


def test_a_listed_drug_the_case_progressed_on_is_shown_apart() -> None:
    """A QA pass's SCLC after lurbinectedin had "Chemotherapy." released with "listed under it: Topotecan;
    Lurbinectedin"."""
    from engine.nodes.formatter import recommendation_lines
    from engine.state import Claim, ConsultState, Ledger, Retrieval

    text = ("Treatment options for patients with recurrent small cell lung cancer (SCLC) include:\n\n"
            "1. [Chemotherapy](/x#_1).\n- [Topotecan](/x#_2).\n- [Lurbinectedin](/x#_3).")
    p = Passage("E1", "c-E1", "SCLC Treatment", "sclc.md", "Treatment Options for Patients With Recurrent SCLC", None,
                text, 0.2, 4.0, relevant=True)
    claim = Claim(id="C1", recommendation=1, text="[Chemotherapy](/x#_1).", evidence=("E1",), sentence_ids=("E1.s1",),
                  state="supported", support=1.0)
    state = ConsultState(thread_id="PT-0001", consult_id="c", facts=facts(SCLC_NOTE),
                         ledger=Ledger(claims=(claim,), governed=True),
                         retrieval=Retrieval(query="q", passages=(p,), gate_passed=True, rag_confidence=0.9))
    line = recommendation_lines(state)[0]
    assert "_listed under it: Topotecan_" in line
    assert "_listed under it, not for this case: Lurbinectedin (names lurbinectedin therapy; the case progressed " \
           "after lurbinectedin)_" in line
