"""The first line is behind a case that counts its prior lines or was treated at a progression (session 21: a long
note's third-line SCLC case, "At progression in 2024 he received lurbinectedin ... after two prior lines", had
first-line options such as prophylactic cranial irradiation drafted)."""

from __future__ import annotations

import pytest

from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts


@pytest.mark.parametrize(("note", "done"), [
    ("Metastatic NSCLC, progressed after two prior lines. Options?", True),
    ("Myeloma after 3 previous lines of therapy, now progressing. Options?", True),
    ("Extensive-stage SCLC. At progression he received topotecan for four cycles. Next?", True),
    # a progression with no treatment after it, or a treatment that is no drug: the line is not counted
    ("Metastatic NSCLC, progressed on chemotherapy. Options?", False),
    ("Progressive disease; he received radiation to the spine. Options?", False),
    ("Metastatic NSCLC with progression. Should he receive docetaxel?", False),
])
def test_the_first_line_is_behind(note: str, done: bool) -> None:
    facts = extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])
    assert facts.line == "later" and facts.first_line_done is done


@pytest.mark.parametrize(("sentence", "kind"), [
    ("Antibody therapy targeting the HER2 pathway has been used since the 1990s and has revolutionized the "
     "treatment of HER2-positive metastatic breast cancer.", 2),
    ("Tucatinib, trastuzumab and capecitabine is a standard option after two HER2-directed lines.", 0),
    ("Trastuzumab has been used in this setting.", 1),
])
def test_how_a_therapy_came_to_be_is_offered_after_the_advice(sentence: str, kind: int) -> None:
    """A long note's HER2-positive case had the history of antibody therapy drafted among its first five."""
    from engine.casefit import sentence_kind

    assert sentence_kind(sentence) == kind


@pytest.mark.parametrize(("note", "stage"), [
    ("A 1.2 mm melanoma of the back excised in 2021 with a negative sentinel node biopsy (stage IB). In 2025 he "
     "noticed a lump in the axilla; PET-CT shows bulky axillary nodal disease only. Neoadjuvant therapy?", "III"),
    ("Stage IB melanoma excised in 2021. In 2024 an inguinal nodal recurrence was resected. Adjuvant?", "III"),
    # no nodes involved since: the stage stated stays
    ("Stage IIA melanoma of the thigh, excised in 2022. No nodal disease on PET-CT. Adjuvant therapy?", "II"),
    ("Stage IIB melanoma with a negative sentinel lymph node biopsy. Adjuvant therapy?", "II"),
])
def test_a_melanoma_whose_nodes_are_involved_since_its_staging_is_stage_iii(note: str, stage: str) -> None:
    facts = extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])
    assert facts.cancer_type == "melanoma" and facts.stage == stage


def test_a_sentence_that_points_back_goes_with_an_unstated_sentence_before_it() -> None:
    """The advice it points to applies only if a condition the case does not state: "This drug ..." had stayed
    among the sentences that fit, offered before the drug it means."""
    from engine.casefit import locked_candidates
    from engine.state import CaseFacts, Passage

    text = ("Olaparib is an option for germline BRCA1/2 carriers with platinum-sensitive disease. This drug has "
            "shown activity in heavily pretreated patients. Platinum-resistant disease responds poorly to further "
            "chemotherapy.")
    p = Passage("E1", "c-E1", "Ovarian Cancer Treatment", "ovarian.md", "## Recurrent Ovarian Cancer", None, text,
                0.2, 4.0, True)
    kept, _ = locked_candidates([p], CaseFacts(cancer_type="ovarian cancer", line="later", recurrent=True))
    assert list(kept) == ["E1.s3", "E1.s1", "E1.s2"]


def test_a_sentence_that_points_back_is_offered_after_the_advice() -> None:
    """"This drug has shown activity ..." was drafted alone, without the drug it means (a clinician QA pass)."""
    from engine.casefit import locked_candidates
    from engine.state import CaseFacts, Passage

    text = ("Mirvetuximab soravtansine is an option for FRα-positive platinum-resistant disease. This drug has shown "
            "activity in heavily pretreated patients. Platinum-resistant disease responds poorly to further "
            "chemotherapy.")
    p = Passage("E1", "c-E1", "Ovarian Cancer Treatment", "ovarian.md", "## Recurrent Ovarian Cancer", None, text,
                0.2, 4.0, True)
    kept, _ = locked_candidates([p], CaseFacts(cancer_type="ovarian cancer", line="later", recurrent=True))
    order = [t for _, t in kept.values()]
    assert order[-1].startswith("This drug has shown activity")
    # one that names what it means is offered as any other ("These treatment options include CDK4/6 inhibitors")
    p = Passage("E1", "c-E1", "Breast Cancer Treatment", "breast.md", "## Metastatic Breast Cancer", None,
                "Treatment is palliative. These treatment options include CDK4/6 inhibitors and mTOR inhibitors. "
                "Visceral crisis needs chemotherapy.", 0.2, 4.0, True)
    kept, _ = locked_candidates([p], CaseFacts(cancer_type="breast cancer", stage="IV"))
    assert [t for _, t in kept.values()].index("These treatment options include CDK4/6 inhibitors and mTOR "
                                               "inhibitors.") < 2


@pytest.mark.parametrize(("note", "prior"), [
    ("Metastatic breast cancer, referred for second-line treatment after docetaxel, trastuzumab and pertuzumab. "
     "What is the preferred next-line HER2-directed therapy?", 1),
    ("Metastatic colon cancer after FOLFOX and FOLFIRI, now progressing. What is the recommended third-line "
     "regimen?", 2),
    ("Extensive-stage SCLC, progressing. What treatment exists after two prior lines?", 2),
    # history alone does not say which line is asked for; nor a lower bound
    ("First line paclitaxel, second line T-DXd, third line T-DM1; now progressing. Options?", None),
    ("Myeloma after three or more prior lines, now progressing. Options?", None),
])
def test_the_line_a_case_is_at(note: str, prior: int | None) -> None:
    facts = extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])
    assert facts.prior_lines == prior


def test_a_population_after_more_prior_lines_than_the_case_had_does_not_apply() -> None:
    """A long note's second-line HER2-positive case had neratinib's population drafted first (a clinician QA pass)."""
    from engine.casefit import case_from_facts, unusable_lines

    second = case_from_facts(extract_facts(
        "Metastatic HER2-positive breast cancer, progressed on first-line docetaxel, trastuzumab and pertuzumab. "
        "What second-line therapy?", genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS,
        rare_cancers=[]))
    neratinib = ("Neratinib is approved with capecitabine for patients who have received two or more prior "
                 "anti-HER2-based regimens in the metastatic setting.")
    assert unusable_lines(neratinib, second).endswith("the case is at line 2 (1 prior)")
    assert not unusable_lines("Trastuzumab deruxtecan is a second-line option after a taxane and trastuzumab.",
                              second)
    third = case_from_facts(extract_facts(
        "Metastatic HER2-positive breast cancer after two prior lines. What third-line therapy?", genes=DEFAULT_GENES,
        treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[]))
    assert not unusable_lines(neratinib, third)


def test_a_counted_population_is_read_across_an_en_dash() -> None:
    """PDQ writes "anti–HER2-based" with an en dash."""
    from engine.casefit import case_from_facts, unusable_lines

    second = case_from_facts(extract_facts("Metastatic breast cancer. What second-line therapy?", genes=DEFAULT_GENES,
                                           treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[]))
    assert unusable_lines("Approved for patients who have received two or more prior anti\u2013HER2-based regimens.",
                          second)
