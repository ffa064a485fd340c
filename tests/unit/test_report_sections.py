"""Reports show heading paths as people read them, not the Markdown marks the store keeps."""

from __future__ import annotations

from dataclasses import replace

from engine.nodes.formatter import evidence_list, recommendation_lines, section_label
from engine.state import Claim, ConsultState, Ledger, Passage, Retrieval


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


LORLATINIB = ("## Treatment of Newly Diagnosed Stage IV NSCLC > ### Treatment Options for Newly Diagnosed Stage IV NSCLC "
              "(First-Line Therapy) > #### ALK inhibitors (for patients with *ALK* translocations) > ##### Lorlatinib")


def test_each_released_claim_names_the_section_it_quotes_once_per_run():
    """PDQ names the option in its headings and gives only the trial under them: "The phase III CROWN trial included
    patients ..." says nothing about what to give unless the reader sees it is the first-line ALK-inhibitor
    section's lorlatinib entry."""
    passages = tuple(Passage(id=pid, chunk_id=pid, title="NSCLC", source="nsclc.md", section=section, page=None,
                             text="x", distance=0.2, rerank_score=5.0) for pid, section in
                     (("E4", LORLATINIB), ("E5", "## Treatment > ### Ceritinib")))
    claims = tuple(Claim(id=f"C{i}", recommendation=i, text=text, evidence=(sid.split(".")[0],),
                         sentence_ids=(sid,), state=st, support=1.0)  # type: ignore[arg-type]
                   for i, (text, sid, st) in enumerate((
                       ("The phase III CROWN trial included patients with no prior systemic therapy.", "E4.s1",
                        "supported"),
                       ("The primary end point was PFS.", "E4.s3", "supported"),
                       ("Crossover to ceritinib was allowed.", "E5.s2", "supported"),
                       ("Withheld line.", "E4.s9", "blocked")), 1))
    state = ConsultState(thread_id="PT-0001", consult_id="c", ledger=Ledger(claims=claims, governed=True),
                         retrieval=Retrieval(query="q", passages=passages, gate_passed=True, closest_title=None,
                                             closest_distance=None, threshold=0.3, rewritten_query=None,
                                             rag_confidence=0.9, attempts=1))
    lines = recommendation_lines(state)
    assert len(lines) == 3  # the blocked claim is never listed
    first = ("in: Treatment of Newly Diagnosed Stage IV NSCLC > Treatment Options for Newly Diagnosed Stage IV NSCLC "
             "(First-Line Therapy) > ALK inhibitors (for patients with ALK translocations) > Lorlatinib")
    assert lines[0].startswith("1. The phase III CROWN trial") and lines[0].endswith(f"\\\n   _{first}_")
    assert "in:" not in lines[1]  # same section as the claim before it: not repeated
    assert lines[2].endswith("\\\n   _in: Treatment > Ceritinib_")


OPTIONS = "## Treatment of Stage IV NSCLC > ### Treatment Options for Newly Diagnosed Stage IV NSCLC (First-Line Therapy)"
LISTED = ("Treatment options for patients with newly diagnosed [stage IV](/x#_1) disease include:\n\n"
          "6. [ALK inhibitors](/x#_7) (for patients with *ALK* translocations).\n- [Alectinib](/x#_8).\n"
          "- [Lorlatinib](/x#_9) (first-line).\n\n7. [BRAF V600E and MEK inhibitors](/x#_10) (for patients with *BRAF* "
          "V600E variants).\n- [Dabrafenib and trametinib](/x#_11).")


def test_a_quoted_options_item_shows_the_drugs_listed_under_it():
    """The options list names the drugs in bullets too short to quote ("- Alectinib."): the item alone ("ALK
    inhibitors (for patients with ALK translocations).") would leave the clinician to open the evidence."""
    p = Passage(id="E6", chunk_id="c:6", title="NSCLC", source="nsclc.md", section=OPTIONS, page=None, text=LISTED,
                distance=0.2, rerank_score=4.5)
    claims = tuple(Claim(id=f"C{i}", recommendation=i, text=text, evidence=("E6",), sentence_ids=(sid,),
                         state="supported", support=1.0) for i, (text, sid) in enumerate((
                             ("[ALK inhibitors](/x#_7) (for patients with *ALK* translocations).", "E6.s1"),
                             ("[BRAF V600E and MEK inhibitors](/x#_10) (for patients with *BRAF* V600E variants).",
                              "E6.s2")), 1))
    state = ConsultState(thread_id="PT-0001", consult_id="c", ledger=Ledger(claims=claims, governed=True),
                         retrieval=Retrieval(query="q", passages=(p,), gate_passed=True, rag_confidence=0.9))
    first, second = recommendation_lines(state)
    assert first.startswith("1. ALK inhibitors (for patients with ALK translocations). [E6.s1]")
    assert "\\\n   _listed under it: Alectinib; Lorlatinib (first-line)_" in first
    assert "Dabrafenib" not in first and second.endswith("\\\n   _listed under it: Dabrafenib and trametinib_")
    # a claim that is not a list item with bullets under it gets no such line
    plain = replace(state, retrieval=replace(state.retrieval, passages=(replace(p, text=LISTED.replace("\n- ", " ")),)))
    assert all("listed under it" not in line for line in recommendation_lines(plain))
    # nor an item of another list: a trial's results in bullets under it are not its options
    trial = replace(state, retrieval=replace(state.retrieval, passages=(replace(p, text=LISTED.replace(
        "Treatment options for patients with newly diagnosed [stage IV](/x#_1) disease include:",
        "Evidence (ALK inhibitors):")),)))
    assert all("listed under it" not in line for line in recommendation_lines(trial))


def test_the_evidence_list_says_which_passage_is_an_options_list():
    """An options list (kb/outline.py) carries the distance of the passage that led to it, not its own."""
    p = Passage(id="E6", chunk_id="c:6", title="NSCLC", source="nsclc.md", section=OPTIONS, page=None, text=LISTED,
                distance=0.2, rerank_score=4.5, origin="options")
    state = ConsultState(thread_id="PT-0001", consult_id="c", retrieval=Retrieval(query="q", passages=(p,),
                                                                                  gate_passed=True))
    line = evidence_list(state, only_cited=False)[0]
    assert line.endswith("(options list above a kept passage: that passage's distance 0.200, rerank 4.50)")


def test_the_report_says_what_was_set_aside_for_the_case_and_why():
    """A QA pass's Child-Pugh B case had every first-line trial set aside (they were of Child-Pugh class A) and the
    answer did not say so."""
    from engine.facts import extract_facts
    from engine.nodes.formatter import set_aside_lines
    from tests.unit.test_casefit_qa19 import IMBRAVE
    p = Passage("E1", "c1", "Adult Primary Liver Cancer Treatment", "liver.md",
                "Treatment of Advanced HCC > Atezolizumab and bevacizumab", None, IMBRAVE, 0.2, 4.0, True)
    facts = extract_facts("67-year-old man with unresectable hepatocellular carcinoma, Child-Pugh B8.", genes=[],
                          treatment_keywords=[], rare_cancers=[])
    state = ConsultState(thread_id="PT-0001", consult_id="c", facts=facts, evidence_locked=True,
                         retrieval=Retrieval(query="q", passages=(p,), gate_passed=True, closest_title=None,
                                             closest_distance=None, threshold=0.3, rewritten_query=None,
                                             rag_confidence=0.9, attempts=1))
    lines = set_aside_lines(state)
    assert lines[0] == "## Set aside for this case"
    assert lines[2].startswith("- 3 sentences: states Child-Pugh class A; the case is Child-Pugh class B")
    assert set_aside_lines(replace(state, evidence_locked=False)) == []  # free text: no sentence selection
