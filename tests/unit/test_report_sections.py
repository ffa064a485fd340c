"""Reports show heading paths as people read them, not the Markdown marks the store keeps."""

from __future__ import annotations

from engine.nodes.formatter import evidence_list, section_label
from engine.state import ConsultState, Passage, Retrieval


def test_section_label_drops_markdown_marks():
    assert section_label("## Treatment by Stage > ### Advanced or Metastatic Disease") == \
        "Treatment by Stage > Advanced or Metastatic Disease"
    assert section_label("") == "(no heading)"


def test_evidence_list_prints_plain_heading_paths():
    p = Passage(id="E1", chunk_id="c1", title="Pancreatic (Demo)", source="pancreatic.md",
                section="## Treatment by Stage > ### Advanced or Metastatic Disease", page=None, text="x",
                distance=0.2, rerank_score=3.6, relevant=True)
    state = ConsultState(thread_id="PT-0001", consult_id="c", retrieval=Retrieval(
        query="q", passages=(p,), gate_passed=True, closest_title=None, closest_distance=None, threshold=0.3,
        rewritten_query=None, rag_confidence=0.9, attempts=1))
    line = evidence_list(state, only_cited=False)[0]
    assert "— Treatment by Stage > Advanced or Metastatic Disease (distance 0.200" in line and "##" not in line
