"""A patient's thread may hold more than one case: a follow-up keeps what earlier turns of its own case established,
not the facts of another cancer asked about earlier on the same patient (a breast case's HER2/ER/PR markers had
shown up on a later lung case, then a colon case, in the patient pane and in case fit)."""

from __future__ import annotations

from engine.nodes.ingestion import same_case_turns
from tests.fakes import collect, make_engine

BREAST = "Metastatic breast cancer, HER2 IHC 3+, ER negative, PR negative. First-line treatment?"
LUNG = "Stage IV lung adenocarcinoma, EGFR exon 19 deletion. What first-line treatment?"


def test_a_new_cancer_on_the_same_patient_starts_from_its_own_facts(tmp_path):
    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", BREAST))
    collect(lambda: engine.stream("PT-0001", LUNG))
    lung = engine.store.latest("PT-0001").state.facts
    assert lung.cancer_type and "lung" in lung.cancer_type
    assert not any("HER2" in m or "ER" in m.split("-")[0] for m in lung.markers), lung.markers
    assert "EGFR" in lung.genes
    # a follow-up naming no cancer is still the lung case's
    collect(lambda: engine.stream("PT-0001", "And after progression on osimertinib?"))
    follow = engine.store.latest("PT-0001").state.facts
    assert "lung" in (follow.cancer_type or "") and "EGFR" in follow.genes and follow.stage == "IV"
    assert not any("HER2" in m for m in follow.markers)


def test_same_case_turns_go_back_to_the_turn_naming_another_cancer():
    types = {"breast q": "breast cancer", "lung q": "non-small cell lung cancer", "nsclc q": "lung cancer",
             "follow q": None}
    of = types.get
    assert same_case_turns(["breast q", "lung q", "follow q"], "lung cancer", of) == ["lung q", "follow q"]
    assert same_case_turns(["breast q", "lung q", "follow q"], None, of) == ["lung q", "follow q"]
    assert same_case_turns(["lung q", "nsclc q"], "non-small cell lung cancer", of) == ["lung q", "nsclc q"]
    assert same_case_turns(["lung q"], "breast cancer", of) == []
    assert same_case_turns([], "breast cancer", of) == []
