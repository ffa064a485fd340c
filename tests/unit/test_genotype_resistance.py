"""A genotype the drugs cannot treat: a GIST's PDGFRA D842V mutation resists imatinib and the other type II kinase
inhibitors (session 23: a QA pass graded unsafe a D842V case's draft that put sunitinib and regorafenib forward)."""

from __future__ import annotations

from engine.casefit import locked_candidates
from engine.config import Settings
from engine.facts import extract_facts
from engine.state import CaseFacts, Passage

NOTE = ("Metastatic gastric GIST. Adjuvant imatinib was started but stopped after four months when mutation testing "
        "showed a PDGFRA exon 18 D842V mutation. What systemic therapy is active?")


def facts(note: str) -> CaseFacts:
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def test_the_type_ii_kinase_inhibitors_are_avoided_for_d842v() -> None:
    f = facts(NOTE)
    assert f.avoided_names == ("imatinib", "sunitinib", "regorafenib", "nilotinib", "sorafenib")
    assert f.avoided_drugs[1].endswith("showed a PDGFRA exon 18 D842V mutation (resists it)")
    assert facts(NOTE.replace("PDGFRA exon 18 D842V", "KIT exon 11")).avoided_names == ("imatinib",)


def test_they_are_not_offered_but_avapritinib_is() -> None:
    p = Passage("E1", "c-E1", "GIST Treatment", "gist.md", "Treatment of Metastatic GIST", None,
                "Regorafenib is a multikinase inhibitor with activity against KIT, PDGFRA, and VEGFR. Avapritinib is "
                "a standard treatment option for patients with metastatic GIST.", 0.2, 5.0, relevant=True)
    kept, dropped = locked_candidates([p], facts(NOTE), NOTE)
    assert [text for _, text in kept.values()] == ["Avapritinib is a standard treatment option for patients with "
                                                   "metastatic GIST."]
    assert "regorafenib" in dropped["E1.s1"] and "D842V" in dropped["E1.s1"]
