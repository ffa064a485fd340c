"""PDQ's options lists nest each option's drugs under it ("6. ALK inhibitors (for patients with ALK translocations)."
then "- Lorlatinib ..."): a nested item holds only where its parent item does, as under a heading. An EGFR case was
offered "Repotrectinib (for both ROS1 TKI-naive and ROS1 TKI-treated patients)" as fitting (its "TKI-naive" read as
untreated), and "ALK inhibitors (for patients with ALK translocations)" as having no condition ("translocations" was
no gene status)."""

from __future__ import annotations

from engine.casefit import locked_candidates, sentence_parents
from engine.facts import extract_facts
from engine.state import Passage

OPTIONS = """Treatment options for patients with newly diagnosed stage IV disease include:

1. [Cytotoxic combination chemotherapy](/x#_1) with platinum and pemetrexed.
4. [EGFR tyrosine kinase inhibitors](/x#_2) (for patients with *EGFR* variants).

- [Osimertinib alone with no other agent](/x#_3).
6. [ALK inhibitors](/x#_4) (for patients with *ALK* translocations).

- [Lorlatinib for previously untreated patients](/x#_5).
8. [ROS1 inhibitors](/x#_6) (for patients with *ROS1* rearrangements).

- [Repotrectinib](/x#_7) (for both ROS1 TKI-naive and ROS1 TKI-treated patients).
"""
PASSAGE = Passage(id="E1", chunk_id="c1", title="Non-Small Cell Lung Cancer Treatment", source="nsclc.md",
                  section="## Treatment Options for Newly Diagnosed Stage IV NSCLC (First-Line Therapy)", page=None,
                  text=OPTIONS, distance=0.2, rerank_score=3.0)


def offered(case: str) -> list[str]:
    facts = extract_facts(case, genes=["EGFR", "ALK", "ROS1"], treatment_keywords=[], rare_cancers=[])
    kept, _ = locked_candidates([PASSAGE], facts)
    return [text for _, text in kept.values()]


def test_a_nested_drug_holds_only_where_its_option_does():
    egfr = " ".join(offered("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, treatment naive. First line?"))
    assert "EGFR tyrosine kinase inhibitors" in egfr and "Osimertinib alone" in egfr
    assert "Repotrectinib" not in egfr and "Lorlatinib" not in egfr and "ALK inhibitors" not in egfr
    ros1 = " ".join(offered("Stage IV NSCLC, ROS1 fusion, treatment naive. First line?"))
    assert "Repotrectinib" in ros1 and "ROS1 inhibitors" in ros1 and "Osimertinib" not in ros1
    alk = offered("Stage IV NSCLC, ALK rearrangement, treatment naive. First line?")
    assert any("ALK inhibitors" in t for t in alk) and any("Lorlatinib" in t for t in alk)
    assert not any("EGFR" in t or "ROS1" in t for t in alk)


def test_only_bullets_under_a_numbered_item_have_a_parent():
    parents = sentence_parents([PASSAGE])
    assert set(parents.values()) == {"EGFR tyrosine kinase inhibitors (for patients with *EGFR* variants).",
                                     "ALK inhibitors (for patients with *ALK* translocations).",
                                     "ROS1 inhibitors (for patients with *ROS1* rearrangements)."}
    assert len(parents) == 3  # the numbered items themselves and the header have none
