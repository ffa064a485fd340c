"""Case fit gaps from the audit (engine/casefit.py): a case that is not MSI-high is not fitted with MSI-H/dMMR
lines, HER2 read from an ISH result alone, and gene lists naming alternatives of different genes. Guideline sentences
are written for these tests in the manner of the PDQ summaries, not copied from them."""

from __future__ import annotations

import pytest

from engine.casefit import assess, case_from_facts
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts


def case(text: str):
    return case_from_facts(extract_facts(text, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS,
                                         rare_cancers=[]))


MSI_LINE = "Pembrolizumab is a first-line option for patients with metastatic MSI-H/dMMR colorectal cancer."
MSS_LINE = "For metastatic colorectal cancer that is non-MSI-H/dMMR, immune checkpoint inhibitors alone are not used."


@pytest.mark.parametrize("note", [
    "metastatic colon cancer, not MSI-H, KRAS G12D",
    "metastatic colon cancer, non-MSI-H",
    "metastatic colon cancer, MSS",
    "metastatic colon cancer, microsatellite stable",
    "metastatic colon cancer, MSI-low",
    "metastatic colon cancer, MSI-H negative",
])
def test_msi_high_lines_do_not_fit_a_case_that_is_not_msi_high(note: str) -> None:
    fit = assess(MSI_LINE, case(note))
    assert fit.verdict == "contradicts", fit
    assert "proficient" in fit.reason
    assert assess(MSS_LINE, case(note)).verdict == "fits"


def test_a_guideline_line_for_non_msi_high_disease_is_read_as_proficient() -> None:
    assert assess(MSS_LINE, case("metastatic colon cancer, MSI-H")).verdict == "contradicts"
    assert assess(MSI_LINE, case("metastatic colon cancer, MSI-H")).verdict == "fits"
    # a result not yet known is no status either way
    assert assess(MSI_LINE, case("metastatic colon cancer, MSI-H testing pending")).verdict == "unknown"


HER2_LINE = "For metastatic HER2-positive breast cancer, trastuzumab plus pertuzumab with a taxane is standard."
HER2_LOW_LINE = "Trastuzumab deruxtecan is an option for metastatic HER2-low breast cancer after chemotherapy."


@pytest.mark.parametrize("note, want", [
    ("metastatic breast cancer, ER-positive, HER2/CEP17 ratio 2.4, average HER2 copy number 5.6", "fits"),
    ("metastatic breast cancer, HER2 FISH amplified", "fits"),
    ("metastatic breast cancer, HER2 FISH ratio 1.3, copy number 3.1", "contradicts"),
    ("metastatic breast cancer, HER2 not amplified", "contradicts"),
    ("metastatic breast cancer, HER2/CEP17 ratio 2.1, copy number 3.4", "unknown"),   # ASCO/CAP group 2
    ("metastatic breast cancer, HER2/CEP17 ratio 2.4", "unknown"),                    # no copy number
])
def test_her2_ish_result_against_a_her2_positive_line(note: str, want: str) -> None:
    assert assess(HER2_LINE, case(note)).verdict == want


def test_her2_not_amplified_leaves_her2_low_open() -> None:
    # ISH-negative without an IHC score may be HER2-zero or HER2-low: not guessed
    assert assess(HER2_LOW_LINE, case("metastatic breast cancer, HER2 FISH not amplified")).verdict == "unknown"


def test_a_guideline_sentence_with_an_ish_result() -> None:
    line = "Patients whose tumours are HER2 ISH-amplified or IHC 3+ should receive adjuvant trastuzumab."
    assert assess("Tumours that are HER2 not amplified by FISH do not benefit from trastuzumab.",
                  case("breast cancer, HER2 3+")).verdict == "contradicts"
    assert assess(line, case("stage II breast cancer, HER2 3+")).verdict in ("fits", "none")


GENE_LINES = [
    "An oral SERD or a PI3K pathway agent is an option for tumours with a PIK3CA mutation or an ESR1 mutation.",
    "Treatment with the combination is recommended for EGFR- or PIK3CA-mutated tumours.",
    "Targeted therapy is an option for tumours with an EGFR mutation or a PIK3CA mutation.",
    "Targeted therapy is an option for tumours with EGFR or PIK3CA mutations.",
    "Targeted therapy is an option for tumours with mutations in EGFR or PIK3CA.",
]


@pytest.mark.parametrize("line", GENE_LINES)
def test_alternatives_of_different_genes(line: str) -> None:
    other = "ESR1" if "ESR1" in line else "EGFR"
    assert assess(line, case("breast cancer, PIK3CA H1047R")).verdict == "fits"
    assert assess(line, case(f"breast cancer, {other} mutation")).verdict == "fits"
    assert assess(line, case(f"breast cancer, PIK3CA and {other} negative")).verdict == "contradicts"
    # a case with another driver is not contradicted while the other alternative is open
    assert assess(line, case("NSCLC, KRAS G12C")).verdict == "unknown"
    assert assess(line, case("breast cancer, germline BRCA2 mutation")).verdict == "unknown"


def test_brca_palb2_list_forms_read_alike() -> None:
    for line in ("Olaparib is recommended for germline BRCA1, BRCA2, or PALB2 mutations.",
                 "Olaparib is recommended for a germline BRCA1 mutation, a BRCA2 mutation or a PALB2 mutation."):
        assert assess(line, case("breast cancer, germline PALB2 mutation")).verdict == "fits", line
        assert assess(line, case("breast cancer, BRCA1, BRCA2 and PALB2 negative")).verdict == "contradicts", line
        assert assess(line, case("breast cancer, BRCA2 negative")).verdict == "unknown", line


def test_a_gene_section_is_not_inherited_over_a_mixed_list_naming_it() -> None:
    """Guard for the mixed-family naming ("BRCA+PALB2"): the sentence's own list overrides its BRCA section."""
    line = "Olaparib is recommended for germline BRCA1, BRCA2, or PALB2 mutations."
    fit = assess(line, case("breast cancer, germline PALB2 mutation"), ("Germline BRCA1 and BRCA2 Variants",))
    assert fit.verdict == "fits", fit


# --------------------------------------------------------------------------- a stage that is not stated

NO_STAGE = "colon cancer, KRAS G12D; what are the treatment options?"


def test_a_stage_neutral_section_does_not_qualify_a_sentence() -> None:
    """Guard: a section naming no stage ("Treatment Option Overview ...") adds no stage to its sentences, so a case
    without a stage gets no "applies if ..." for a sentence that states none itself."""
    line = "Surgery is the mainstay of curative treatment, and systemic therapy is chosen by the tumour's biology."
    for section in ("## Treatment Option Overview for Colon Cancer", "## Treatment Option Overview",
                    "## General Information About Colon Cancer > ### Prognostic Factors"):
        assert assess(line, case(NO_STAGE), (section,)).verdict == "none", section
    # a section that names the stage still qualifies it
    fit = assess(line, case(NO_STAGE), ("## Treatment of Stage IV and Recurrent Colon Cancer",))
    assert fit.verdict == "unknown" and "Stage IV" in fit.reason


@pytest.mark.parametrize("line", [
    "Tumours with a high metastatic potential are offered adjuvant chemotherapy after resection.",
    "The metastatic risk of small tumours is low, and surgery alone is usually enough.",
    "Because of its propensity for metastatic spread, the tumour is staged with CT of the chest and abdomen.",
])
def test_metastatic_as_a_tumours_potential_is_no_stage_condition(line: str) -> None:
    fit = assess(line, case(NO_STAGE))
    assert "metastatic" not in fit.reason, fit
    # and a stage III case is not told the line does not apply because it "states metastatic"
    assert assess(line, case("stage III colon cancer, resected")).verdict != "contradicts"


def test_metastatic_disease_is_still_a_condition() -> None:
    line = "Patients with metastatic disease may receive FOLFOX with bevacizumab."
    assert assess(line, case(NO_STAGE)).verdict == "unknown"
    assert assess(line, case("stage III colon cancer")).verdict == "contradicts"


@pytest.mark.parametrize("line", [
    "Adjuvant chemotherapy is offered to patients with stage III colon cancer with or without dMMR.",
    "Adjuvant chemotherapy is offered for stage III colon cancer whether or not MSI-H is present.",
    "For stage III colon cancer, adjuvant chemotherapy is offered with or without KRAS mutations.",
    "For stage III colon cancer, adjuvant chemotherapy is offered regardless of BRAF V600E status.",
])
def test_either_way_is_no_condition(line: str) -> None:
    for note in ("stage III colon cancer, MSI-H, KRAS G12D, BRAF V600E", "stage III colon cancer, MSS, KRAS wild-type"):
        assert assess(line, case(note)).verdict == "fits", (line, note)


def test_endocrine_therapy_does_not_apply_to_a_hormone_receptor_negative_case():
    """The audit's ER/PR-negative, HER2-positive metastatic case was offered "Hormone therapy (tamoxifen, aromatase
    inhibitors, selective estrogen receptor [ER] degraders)." second (an options item stating no receptor)."""
    from engine.casefit import assess, case_from_facts
    from engine.facts import extract_facts
    item = "Hormone therapy (tamoxifen, aromatase inhibitors, selective estrogen receptor [ER] degraders)."

    def case(note: str):
        return case_from_facts(extract_facts(note, genes=["HER2"], treatment_keywords=[], rare_cancers=[]))
    negative = case("Metastatic breast cancer, HER2 IHC 3+, ER negative, PR negative. First-line treatment?")
    assert assess(item, negative).verdict == "contradicts"
    assert assess("Palbociclib plus letrozole improved PFS.", negative).verdict == "contradicts"
    assert assess("Trastuzumab plus pertuzumab and a taxane is a standard option.", negative).verdict != "contradicts"
    positive = case("Metastatic breast cancer, ER 90%, PR 50%, HER2 IHC 0. First-line treatment?")
    assert assess(item, positive).verdict != "contradicts"
    # no receptor stated (a prostate case): androgen deprivation is "hormone therapy" too, and is not judged
    prostate = case("Metastatic castration-sensitive prostate cancer. What systemic therapy?")
    assert assess("Hormone therapy with ADT is the standard of care.", prostate).verdict != "contradicts"
