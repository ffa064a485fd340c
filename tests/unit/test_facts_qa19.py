"""Case facts session 19 added: the patient's sex and menopausal status, and progression on a CDK4/6 inhibitor."""

from __future__ import annotations

import pytest

from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts, merge_facts
from engine.state import CaseFacts


def facts(note: str) -> CaseFacts:
    return extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])


@pytest.mark.parametrize(("note", "sex", "menopause"), [
    ("Postmenopausal 63-year-old with bone-only metastases, ER 95%. She has never had endocrine therapy.",
     "female", "post"),
    ("45F, premenopausal, ER+ breast cancer.", "female", "pre"),
    ("47-year-old perimenopausal woman with ER+ breast cancer.", "female", "pre"),
    ("70 yo F with breast cancer.", "female", "post"),  # 60 or more
    ("52-year-old woman with breast cancer.", "female", None),
    ("41-year-old woman after bilateral salpingo-oophorectomy, ER+ breast cancer.", "female", "post"),
    ("Premenopausal at diagnosis, now postmenopausal after chemotherapy: 50-year-old woman.", "female", "post"),
    ("She is not yet postmenopausal; 49-year-old with ER+ breast cancer.", "female", None),
    ("55-year-old woman with ER+ breast cancer; is she postmenopausal?", "female", None),  # asked
    ("67-year-old man with ER+ breast cancer.", "male", None),
    ("72 M with prostate cancer, T2N1M0.", "male", None),
    ("Breast cancer placed via a 12F catheter; his daughter and her husband are here.", None, None),
    ("Stage IIA breast cancer, ER-positive.", None, None),
    ("Postmenopausal hormone therapy for 10 years; 55-year-old woman with breast cancer.", "female", None),
])
def test_sex_and_menopausal_status(note: str, sex: str | None, menopause: str | None) -> None:
    f = facts(note)
    assert (f.sex, f.menopause) == (sex, menopause)
    assert ("postmenopausal" in f.groups) == (menopause == "post")


def test_a_later_turn_keeps_the_menopausal_status_the_first_stated() -> None:
    merged = merge_facts(facts("58-year-old postmenopausal woman, ER+ HER2- metastatic breast cancer."),
                         facts("What about after progression?"))
    assert (merged.sex, merged.menopause) == ("female", "post")


@pytest.mark.parametrize(("note", "given"), [
    ("Metastatic ER+ breast cancer that progressed on letrozole plus palbociclib after 2 years.", ("palbociclib",)),
    ("HR+ MBC, progression after a CDK4/6 inhibitor and anastrozole.", ("CDK4/6 inhibitor",)),
    ("HR+ MBC on ribociclib and letrozole, responding.", ()),
    ("HR+ breast cancer, recurred after adjuvant abemaciclib.", ()),  # adjuvant: may be given again
])
def test_progression_on_a_cdk46_inhibitor(note: str, given: tuple[str, ...]) -> None:
    assert facts(note).progressed_after == given


@pytest.mark.parametrize(("note", "cancer_type"), [
    ("70-year-old man with newly found bone metastases from breast cancer, ER+/PR+ HER2-negative.",
     "male breast cancer"),
    ("Male breast cancer, stage II, ER-positive.", "male breast cancer"),
    ("70-year-old woman with breast cancer.", "breast cancer"),
    ("Breast cancer, ER-positive, stage II; he has no family history of cancer.", "male breast cancer"),
])
def test_a_mans_breast_cancer_is_read_as_male_breast_cancer(note: str, cancer_type: str) -> None:
    """PDQ treats it in a summary of its own; the audit's 70-year-old man was answered from the women's."""
    f = facts(note)
    assert f.cancer_type == cancer_type
    assert f.stage in (None, "II", "IV")


@pytest.mark.parametrize(("text", "lo", "hi"), [
    ("KEYNOTE-590 enrolled patients with PD-L1 CPS of 10 or more.", 10, 100),  # had been read as exactly 10
    ("PD-L1 TPS 50% or higher", 50, 100),
    ("PD-L1 of 10% or greater", 10, 100),
    ("PD-L1 CPS 5", 5, 5),
])
def test_pdl1_or_more(text: str, lo: int, hi: int) -> None:
    from engine.facts import PDL1_RE, pdl1_range
    m = PDL1_RE.search(text)
    assert m is not None and pdl1_range(m)[:2] == (lo, hi)


@pytest.mark.parametrize(("note", "cancer_type"), [
    ("68F metastatic breast ca, ER+, progressed on palbociclib.", "breast cancer"),  # had been refused: no type
    ("Lung ca, stage IV, EGFR exon 19.", "non-small cell lung cancer"),  # an EGFR driver: non-small cell
    ("CA 19-9 elevated; pancreatic mass, biopsy pending.", None),  # a tumour marker
    ("Serum Ca 10.2; colon cancer stage III.", "colon cancer"),  # calcium
])
def test_the_shorthand_ca_is_cancer(note: str, cancer_type: str | None) -> None:
    assert facts(note).cancer_type == cancer_type


def test_a_parenthesis_between_site_and_tumour_keeps_the_gut_net() -> None:
    """A QA pass's "small bowel (ileal) neuroendocrine tumor" was answered from the pancreatic NET summary."""
    note = "66F well-differentiated grade 2 small bowel (ileal) neuroendocrine tumor, metastatic to liver. Next?"
    assert facts(note).cancer_type == "gastrointestinal neuroendocrine tumor"
