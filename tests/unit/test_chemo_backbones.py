"""A case that progressed on an irinotecan or oxaliplatin regimen is not offered that backbone again (session 21: a
long note's colon cancer after FOLFOX and FOLFIRI had "FOLFIRI plus ramucirumab" drafted for its third line)."""

from __future__ import annotations

import pytest

from engine.casefit import case_from_facts, unusable_targets
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts
from engine.state import CaseFacts

THIRD_LINE = ("Metastatic colon cancer, KRAS G12D, microsatellite stable. First line was FOLFOX with bevacizumab for "
              "14 months and second line FOLFIRI with bevacizumab for 9 months; CT now shows further progression. "
              "Third-line options?")


def facts(note: str) -> CaseFacts:
    return extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])


@pytest.mark.parametrize(("note", "given"), [
    (THIRD_LINE, ("FOLFOX", "FOLFIRI")),
    ("Metastatic pancreatic adenocarcinoma progressed on mFOLFIRINOX. Options?", ("FOLFIRINOX",)),
    ("Metastatic colorectal cancer on FOLFOX-6 with bevacizumab, now progressing. Second line?", ("FOLFOX",)),
    # adjuvant chemotherapy before a relapse is not a line the case progressed on
    ("Stage III colon cancer treated with adjuvant CAPOX in 2019; liver metastases in 2023. Options?", ()),
    ("Metastatic colon cancer, starting FOLFOX next week. Is bevacizumab worth adding?", ()),
])
def test_the_backbones_a_case_progressed_on(note: str, given: tuple[str, ...]) -> None:
    assert facts(note).progressed_after == given


def test_a_backbone_the_case_progressed_on_is_not_offered_again() -> None:
    case = case_from_facts(facts(THIRD_LINE))
    assert unusable_targets("FOLFIRI plus ramucirumab improved overall survival.", [], case) == \
        "names irinotecan therapy; the case progressed after FOLFIRI"
    assert unusable_targets("FOLFOXIRI plus bevacizumab is an option.", [], case)
    # the later-line drugs stay, and so does bevacizumab (continued beyond progression in colorectal cancer)
    assert not unusable_targets("Trifluridine-tipiracil plus bevacizumab improved overall survival.", [], case)
    assert not unusable_targets("Regorafenib improved overall survival.", [], case)
    # a trial in irinotecan-refractory disease is about this case
    assert not unusable_targets("Cetuximab plus irinotecan was active in irinotecan-refractory disease.", [], case)


def test_a_backbone_the_case_has_not_had_is_no_reason_to_drop_a_sentence() -> None:
    second_line = case_from_facts(facts("Metastatic colon cancer, RAS wild-type, progressed on FOLFOX. Options?"))
    assert not unusable_targets("FOLFIRI plus cetuximab or panitumumab is an option.", [], second_line)
    kras = case_from_facts(facts("Metastatic colon adenocarcinoma, KRAS G12D, untreated. First-line?"))
    assert unusable_targets("FOLFOX plus panitumumab improved overall survival.", [], kras).startswith(
        "names an anti-EGFR antibody")


MYELOMA = ("Myeloma on lenalidomide maintenance, progressed in 2023 while on lenalidomide. Second-line daratumumab, "
           "pomalidomide and dexamethasone gave a very good partial response for 20 months, and now the M-protein "
           "has risen with a new painful lytic lesion in the femur. What cellular therapy is supported?")
HER2 = ("HER2-positive metastatic breast cancer. First line paclitaxel, trastuzumab and pertuzumab; third line "
        "trastuzumab emtansine gave stable disease for 9 months. MRI now shows three new brain metastases.")


def test_pomalidomide_anti_cd38_and_the_her2_conjugates_a_case_progressed_on() -> None:
    """A clinician QA pass found pomalidomide's trials drafted after daratumumab-pomalidomide, and EMILIA (T-DM1)
    after T-DM1; new disease ("a new painful lytic lesion", "new brain metastases") is the progression."""
    myeloma = case_from_facts(facts(MYELOMA))
    assert facts(MYELOMA).progressed_after == ("lenalidomide", "daratumumab", "pomalidomide")
    assert unusable_targets("Pomalidomide is a third-generation immunomodulatory agent.", [], myeloma)
    assert unusable_targets("Isatuximab plus pomalidomide and dexamethasone improved PFS.", [], myeloma)
    assert not unusable_targets("Ciltacabtagene autoleucel improved PFS in lenalidomide-refractory myeloma.", [],
                                myeloma)
    her2 = case_from_facts(facts(HER2))
    assert facts(HER2).progressed_after == ("trastuzumab emtansine",)
    assert unusable_targets("Patients were randomly assigned to receive either T-DM1 or lapatinib.", [], her2)
    assert not unusable_targets("Tucatinib plus trastuzumab and capecitabine improved survival.", [], her2)
    # trastuzumab is continued across the lines of HER2-positive disease: not read as exhausted
    assert "trastuzumab" not in facts(HER2).progressed_after


CERVIX = ("Stage IIIC1 cervical cancer treated with chemoradiation; in 2023 lung metastases, and she received "
          "carboplatin, paclitaxel, bevacizumab and pembrolizumab with a response lasting 11 months. CT now shows "
          "progression. What is an evidence-based second-line option?")


def test_bevacizumab_a_case_progressed_on_is_not_offered_again_but_in_colorectal_cancer() -> None:
    """A clinician QA pass graded "the addition of bevacizumab may be considered" unsafe for this cervical case."""
    cervix = case_from_facts(facts(CERVIX))
    assert facts(CERVIX).progressed_after == ("bevacizumab", "pembrolizumab")
    assert unusable_targets("The addition of bevacizumab may be considered for this population.", [], cervix)
    assert not unusable_targets("Tisotumab vedotin improved overall survival.", [], cervix)
    # colorectal cancer continues bevacizumab beyond progression (trifluridine-tipiracil plus bevacizumab)
    assert "bevacizumab" not in facts(THIRD_LINE).progressed_after
    # and bevacizumab a case has not progressed on is no reason to drop a sentence
    assert not unusable_targets("FOLFIRI plus bevacizumab is an option.", [], case_from_facts(
        facts("Metastatic colon cancer progressed on FOLFOX. Second line?")))
