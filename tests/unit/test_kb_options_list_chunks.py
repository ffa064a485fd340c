"""A kept passage that is itself part of an options list (kb.store Stage 3b, ``KnowledgeBase.list_lead_ins``): PDQ's
chunks end at an item line ("6. ALK inhibitors (for patients with ALK translocations).") and the next chunk opens with
its drugs ("- Alectinib." "- Lorlatinib."). Retrieved alone, the drugs said nothing of what they are options for; the
passage now opens with the list's lead-in and that item line, verbatim, when no kept passage holds them."""

from __future__ import annotations

import pytest

from engine.casefit import bullets_under, locked_candidates
from engine.nodes.corrective_rag import to_passages
from engine.state import CaseFacts
from kb.store import RetrievalParams
from tests.unit.test_kb_outline import LIST, OPTIONS, store_with

LEAD_IN = LIST.split("\n", 1)[0]
ITEM = "6. [ALK inhibitors](/x#_7) (for patients with *ALK* translocations)."
CUT = LIST.index("- [Alectinib]")
EVIDENCE = """Evidence (first-line alectinib):

1. The phase III ALEX trial randomly assigned 303 patients with untreated ALK-positive NSCLC to alectinib or
crizotinib.
- The median PFS was 34.8 months with alectinib and 10.9 months with crizotinib."""
BULLETED = """Treatment options for men with locally advanced breast cancer include:[[1](#cit/section_3.1)]

- [Neoadjuvant chemotherapy](/mb#_1).
- [Surgery with or without radiation therapy](/mb#_2).
- [Radiation therapy after surgery](/mb#_3)."""


@pytest.fixture()
def kb():
    results = EVIDENCE.index("- The median")
    bulleted = BULLETED.index("- [Surgery")
    # (text, section, vector): the list's first part far from the query, the drugs near it
    chunks = {"c0": (LIST[:CUT].rstrip(), OPTIONS, [0, 0, 1, 0]), "c1": (LIST[CUT:], OPTIONS, [1, 0.1, 0, 0]),
              "e0": (EVIDENCE[:results].rstrip(), "## Evidence", [0, 0, 0, 1]),
              "e1": (EVIDENCE[results:], "## Evidence", [1, 0.12, 0, 0]),
              "b0": (BULLETED[:bulleted].rstrip(), "## Male", [0, 1, 0, 0.2]),
              "b1": (BULLETED[bulleted:], "## Male", [1, 0.14, 0, 0])}
    k = store_with("list-chunks-test", chunks)
    yield k
    k.close()


def test_a_chunk_of_drugs_opens_with_the_lead_in_and_the_item_it_continues(kb):
    result = kb.retrieve("ALK-positive NSCLC first-line", RetrievalParams(recall_k=1, rerank_k=1,
                                                                         distance_threshold=0.3))
    (hit,) = result.hits
    assert hit.chunk_id == "c1" and hit.origin != "options"
    assert hit.text == f"{LEAD_IN}\n\n{ITEM}\n{LIST[CUT:]}"  # verbatim, nothing between invented
    off = kb.retrieve("ALK-positive NSCLC first-line", RetrievalParams(recall_k=1, rerank_k=1, distance_threshold=0.3,
                                                                      options_lists=0))
    assert off.hits[0].text == LIST[CUT:]  # Stage 3b off: as stored


def test_through_case_fit_the_item_is_offered_with_its_drugs_listed_under_it(kb):
    result = kb.retrieve("q", RetrievalParams(recall_k=1, rerank_k=1, distance_threshold=0.3))
    (passage,) = to_passages(result)
    alk = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", markers=("ALK rearrangement",))
    kept, _ = locked_candidates([passage], alk)
    first = next(iter(kept))
    assert kept[first][1] == "[ALK inhibitors](/x#_7) (for patients with *ALK* translocations)."
    assert bullets_under(passage, first) == ["[Alectinib](/x#_8).", "[Lorlatinib](/x#_9)."]


def test_nothing_is_repeated_that_a_kept_passage_holds(kb):
    both = kb.retrieve("q", RetrievalParams(recall_k=6, rerank_k=6, distance_threshold=2.0))
    texts = {h.chunk_id: h.text for h in both.hits}
    assert texts["c1"] == LIST[CUT:] and texts["c0"] == LIST[:CUT].rstrip()  # c0 holds the lead-in and item 6
    assert not [h for h in both.hits if h.origin == "options"]


def test_trial_results_bring_their_trial_and_a_bulleted_list_its_lead_in_only(kb):
    hits = kb.retrieve("q", RetrievalParams(recall_k=3, rerank_k=3, distance_threshold=0.3)).hits
    texts = {h.chunk_id: h.text for h in hits}
    # "Evidence (...):" opens no options list, but the results are the numbered trial's (its population theirs)
    trial = EVIDENCE[EVIDENCE.index("1. The phase"):EVIDENCE.index("- The median")].rstrip()
    assert texts["e1"] == f"{trial}\n{EVIDENCE[EVIDENCE.index('- The median'):]}"
    assert texts["b1"] == f"{BULLETED.split(chr(10), 1)[0]}\n\n{BULLETED[BULLETED.index('- [Surgery'):]}"
    assert texts["c1"].startswith(LEAD_IN)
