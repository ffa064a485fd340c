"""A list item says little without its lead-in ("Features in patients with stage II colon cancer that are associated
with an increased risk of recurrence include:" then "- Inadequate lymph node sampling."). The lead-in is never offered,
so the audit's stage III colon case was offered the stage II risk features as if they were options, and a report that
quoted one showed the item alone. Items are now judged under their lead-in, as under a heading, and the report shows
it."""

from __future__ import annotations

from engine.casefit import list_lead_ins, locked_candidates, sentence_context
from engine.facts import extract_facts
from engine.governor import govern
from engine.nodes.formatter import recommendation_lines
from engine.state import Claim, ConsultState, Ledger, Passage, Retrieval

LEAD = ("Features in patients with [stage II colon cancer](/x#_1) that are associated with an increased risk of "
        "recurrence include:")
TEXT = f"""The potential value of adjuvant chemotherapy for patients with colon cancer remains controversial.

{LEAD}

- Inadequate lymph node sampling.
- Involvement of the visceral peritoneum.

The decision to use adjuvant chemotherapy requires thoughtful consideration by patients and their physicians."""
PASSAGE = Passage(id="E1", chunk_id="c1", title="Colon Cancer Treatment", source="colon.md",
                  section="## Treatment of Colon Cancer > ### Adjuvant chemotherapy", page=None, text=TEXT,
                  distance=0.2, rerank_score=3.0, relevant=True)


def facts(case: str):
    return extract_facts(case, genes=[], treatment_keywords=[], rare_cancers=[])


def test_only_the_items_of_a_list_have_its_lead_in():
    leads = list_lead_ins([PASSAGE])
    assert leads == {"E1.s2": LEAD, "E1.s3": LEAD}  # s1 and s4 are paragraphs, the lead-in is never a sentence
    assert sentence_context([PASSAGE])["E1.s2"] == LEAD.replace("](/x#_1)", "]").replace("[", "").replace("]", "")
    # a chunk that starts inside the list does not see its lead-in
    assert list_lead_ins([Passage(**{**PASSAGE.__dict__, "text": TEXT[TEXT.index("- Inadequate"):]})]) == {}


def test_items_under_another_stage_s_lead_in_are_not_offered_to_a_stage_iii_case():
    stage3, dropped = locked_candidates([PASSAGE], facts("67-year-old man, stage III colon adenocarcinoma after "
                                                         "resection, node-positive. Adjuvant chemotherapy?"))
    assert "E1.s2" not in stage3 and "E1.s3" not in stage3 and "stage" in dropped["E1.s2"].lower()
    assert "E1.s1" in stage3 and "E1.s4" in stage3  # the paragraphs name no stage
    stage2, _ = locked_candidates([PASSAGE], facts("Stage II colon adenocarcinoma after resection. Adjuvant therapy?"))
    assert "E1.s2" in stage2 and "E1.s3" in stage2


def _state(sentence_ids: list[str], case: str) -> ConsultState:
    sentences = {"E1.s1": "The potential value of adjuvant chemotherapy for patients with colon cancer remains "
                          "controversial.", "E1.s2": "Inadequate lymph node sampling.",
                 "E1.s3": "Involvement of the visceral peritoneum."}
    claims = tuple(Claim(id=f"C{i}", recommendation=i, text=sentences[sid], evidence=("E1",), sentence_ids=(sid,),
                         support=1.0) for i, sid in enumerate(sentence_ids, 1))
    f = facts(case)
    ledger = govern(Ledger(claims=claims), 0.9, 0.5, f, (PASSAGE,))
    return ConsultState(thread_id="PT-0001", consult_id="c", facts=f, ledger=ledger,
                        retrieval=Retrieval(query="q", passages=(PASSAGE,), gate_passed=True, rag_confidence=0.9))


def test_the_report_shows_a_quoted_item_under_its_lead_in_once_per_run():
    lines = recommendation_lines(_state(["E1.s1", "E1.s2", "E1.s3"], "Stage II colon cancer after resection."))
    shown = ("_an item of the list: \u201cFeatures in patients with stage II colon cancer that are associated with an "
             "increased risk of recurrence include:\u201d_")
    assert len(lines) == 3 and "an item of the list" not in lines[0]
    assert lines[1].startswith("2. Inadequate lymph node sampling.")
    assert lines[1].endswith(shown) and "an item of the list" not in lines[2]  # the next item of the same list


def test_the_governor_blocks_an_item_whose_lead_in_names_another_stage():
    ledger = _state(["E1.s2"], "Stage III colon cancer, pT3N1, after resection.").ledger
    assert ledger is not None and ledger.claims[0].state == "blocked" and "stage" in ledger.claims[0].reasons[0]


GBM = Passage(id="E1", chunk_id="c2", title="Central Nervous System Tumors Treatment", source="cns.md",
              section="## Treatment of Primary CNS Tumors by Tumor Type > #### Glioblastomas treatment",
              page=None, distance=0.2, rerank_score=3.0, relevant=True,
              text="For patients with glioblastoma, the cure rate is very low with standard local treatment.\n\n"
                   "Treatment options for patients with newly diagnosed glioblastoma include:\n\n"
                   "1. Surgery plus radiation therapy and chemotherapy.\n2. Radiation therapy and concurrent "
                   "chemotherapy.")


def test_a_lead_in_s_line_is_judged_only_for_a_case_that_states_one():
    """The audit's glioblastoma case named no line: its options list, under "... newly diagnosed glioblastoma
    include:", had been offered after every other sentence as "applies if the line of therapy of its section"."""
    kept, _ = locked_candidates([GBM], facts("Glioblastoma, MGMT promoter methylated, 60 years old, after resection. "
                                             "Adjuvant treatment?"))
    assert list(kept)[:2] == ["E1.s2", "E1.s3"]  # the items: recommendations, first
    # a case that states its line: the lead-in's is judged (a first-line option stays open after progression, and
    # is qualified, so it goes after the sentence that states no line)
    kept, _ = locked_candidates([GBM], facts("Glioblastoma that progressed after radiation therapy and temozolomide."))
    assert list(kept) == ["E1.s1", "E1.s2", "E1.s3"]
