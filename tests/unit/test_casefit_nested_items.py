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


def test_the_governor_judges_a_quoted_sentence_where_it_stands():
    """A released quote keeps the qualifier its list item gives it: with no driver stated, "Repotrectinib ..." is
    released only as "applies if ... ROS1 rearrangements" (the governor read the sentence alone and found it fit an
    untreated case by its "TKI-naive")."""
    from engine.governor import govern
    from engine.safety import passage_sentences
    from engine.state import Claim, Ledger

    sid = next(s for s, (_, text) in passage_sentences([PASSAGE]).items() if text.startswith("[Repotrectinib]"))
    text = passage_sentences([PASSAGE])[sid][1]
    claim = Claim(id="C1", recommendation=1, text=text, evidence=("E1",), sentence_ids=(sid,), support=1.0)
    facts = extract_facts("Stage IV NSCLC, treatment naive. First line?", genes=["EGFR", "ALK", "ROS1"],
                          treatment_keywords=[], rare_cancers=[])
    governed = govern(Ledger(claims=(claim,), evidence_locked=True), 0.9, 0.3, facts, [PASSAGE]).claims[0]
    assert governed.state == "qualified" and "ROS1 rearrangements" in governed.reasons[0], governed
    egfr = extract_facts("Stage IV NSCLC, EGFR exon 19 deletion, treatment naive. First line?",
                         genes=["EGFR", "ALK", "ROS1"], treatment_keywords=[], rare_cancers=[])
    assert govern(Ledger(claims=(claim,), evidence_locked=True), 0.9, 0.3, egfr, [PASSAGE]).claims[0].state \
        == "blocked"
