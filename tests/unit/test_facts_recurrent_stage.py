"""A metastatic recurrence is stage IV now, whatever the stage at diagnosis (QA session 17: "hysterectomy/BSO for
stage IB disease two years ago", now "recurrent ... with lung and nodal metastases", was offered adjuvant vaginal
brachytherapy for stage I; "stage II colon adenocarcinoma resected 3 years ago", now liver metastases and a
biopsy-confirmed recurrence, was refused: every stage IV line contradicted "stage II")."""

from __future__ import annotations

import pytest

from engine.facts import extract_facts


def stage(note: str) -> str | None:
    return extract_facts(note, genes=[], treatment_keywords=[], rare_cancers=[]).stage


@pytest.mark.parametrize("note, group", [
    ("Recurrent endometrial carcinoma with lung and nodal metastases. Hysterectomy for stage IB disease two years "
     "ago.", "IV"),
    ("Stage II colon adenocarcinoma resected 3 years ago. Now unresectable liver metastases, biopsy-confirmed "
     "recurrence.", "IV"),
    # not a metastatic recurrence: regional or in-transit disease, denied metastases, no recurrence said
    ("Recurrent breast cancer, stage II at diagnosis, now with axillary nodal metastases.", "II"),
    ("Stage IIIB melanoma with in-transit metastases, recurrent.", "III"),
    ("Stage II colon cancer, no recurrence, no metastases.", "II"),
    ("Stage III colon cancer; risk of metastases discussed.", "III"),
])
def test_a_metastatic_recurrence_is_stage_iv(note: str, group: str) -> None:
    assert stage(note) == group


def test_a_negation_reaches_across_gene_symbols_that_are_not_configured() -> None:
    """QA session 17: "No PIK3CA, AKT1, PTEN or ESR1 alterations" read ESR1 as altered (an elacestrant risk)."""
    f = extract_facts("ER-positive metastatic breast cancer. No PIK3CA, AKT1, PTEN or ESR1 alterations on ctDNA.",
                      genes=["PIK3CA", "ESR1"], treatment_keywords=[], rare_cancers=[])
    assert "ESR1 negative" in f.markers and "ESR1" not in f.genes
    f = extract_facts("EGFR exon 19 deletion, TP53 and STK11 co-mutations.", genes=["EGFR", "TP53"],
                      treatment_keywords=[], rare_cancers=[])
    assert set(f.genes) == {"EGFR", "TP53"}
