"""A metastatic GIST with a PDGFRA exon 18 D842V mutation, asking "What tyrosine kinase inhibitor is recommended ...,
and what side effects need monitoring?" (long note l26): PDQ's answer is avapritinib, under "Initial TKI therapy for
PDGFRA D842V-variant GISTs". Its passages were never offered: the question was read as asking for active
surveillance, and case fit read the note's variant as "exon 18" only, so the D842V heading did not apply."""

from __future__ import annotations

from engine.casefit import assess, case_from_facts
from engine.config import Settings
from engine.facts import extract_facts
from engine.nodes.corrective_rag import focused_query, intent_phrases
from engine.state import CaseFacts

NOTE = ("Gastric GIST resected in 2019; adjuvant imatinib was stopped after four months when mutation testing showed "
        "a PDGFRA exon 18 D842V mutation. In 2025 CT showed peritoneal implants and liver metastases. What tyrosine "
        "kinase inhibitor is recommended for her metastatic disease, and what side effects need monitoring?")


def facts(note: str) -> CaseFacts:
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def test_a_treatments_side_effects_to_monitor_are_no_surveillance_question() -> None:
    assert "active surveillance" not in intent_phrases("What TKI is recommended, and what side effects need "
                                                       "monitoring?")
    assert "active surveillance" not in intent_phrases("Which regimen, and which toxicities should we monitor?")
    assert intent_phrases("Is active surveillance reasonable for her?") == ["active surveillance"]
    query = focused_query(NOTE, facts(NOTE))
    assert "surveillance" not in query and "TKI therapy" in query


def test_an_exon_and_its_point_mutation_side_by_side_are_one_alteration() -> None:
    case = case_from_facts(facts(NOTE))
    assert case.altered["PDGFRA"] == {"exon 18", "D842V"}
    assert assess("Initial TKI therapy for *PDGFRA* D842V-variant GISTs", case).verdict == "fits"
    assert assess("Patients with GISTs that harbor a *PDGFRA* exon 18 D842V variant should initially be given "
                  "avapritinib.", case).verdict == "fits"
    # another exon of the gene still does not apply
    assert assess("PDGFRA exon 14 variants respond to imatinib.", case).verdict == "contradicts"
