"""An options item too short to be quoted ("4. Immunotherapy.": fewer words than engine.safety.MIN_SENTENCE_WORDS)
offered nothing a locked answer could quote (kb.store Stage 3b). Its options passage now ends with the paragraph the
option's own section opens with, verbatim ("Pembrolizumab is a standard treatment option for ..."), unless a kept
passage holds it."""

from __future__ import annotations

import pytest

from engine.safety import MIN_SENTENCE_WORDS, passage_sentences
from engine.state import Passage
from kb.outline import MAX_OPENING_CHARS, SHORT_ITEM_WORDS, opening, short
from kb.store import RetrievalParams
from tests.unit.test_kb_outline import store_with
from tests.unit.test_kb_store_grade_queries import _unit

RECTAL = "## Treatment of Stage IV Rectal Cancer > ### Treatment Options for Stage IV and Recurrent Rectal Cancer"
LIST = """Treatment options for stage IV and recurrent rectal cancer include:

1. [Surgery with or without chemotherapy or radiation therapy](/r#_1).
4. [Immunotherapy](/r#_4).
- [Pembrolizumab](/r#_5).
- [Nivolumab](/r#_6)."""
OPENING = ("Pembrolizumab is a standard treatment option for patients with dMMR or MSI-H\nmetastatic colorectal "
           "cancer.[[3](#cit/section_9.3)] Approximately 4% of patients with stage IV colorectal cancer have such "
           "tumors.")
IMMUNO = OPENING + "\n\nEvidence (pembrolizumab):\n\n1. The KEYNOTE-177 trial randomly assigned 307 patients."
TRIAL = "In KEYNOTE-177, first-line pembrolizumab prolonged progression-free survival over chemotherapy."


def test_a_short_item_is_what_sentence_splitting_drops():
    assert SHORT_ITEM_WORDS == MIN_SENTENCE_WORDS
    assert short("4. [Immunotherapy](/r#_4).") and short("2. TUR with fulguration.[[3](#cit/x)]")
    assert short("- [Chemotherapy alone](/b#_1).")
    assert not short("6. [ALK inhibitors](/x#_7) (for patients with *ALK* translocations).")
    assert not short("1. [Surgery with or without chemotherapy or radiation therapy](/r#_1).")


def test_the_opening_paragraph_as_written():
    assert opening(IMMUNO) == OPENING  # to the end of the paragraph; hard-wrapped lines kept
    # cut after the sentence (and its citation markers) that fits
    long = OPENING.replace("tumors.", "tumors. " + "More words follow here. " * 30)
    assert opening(long).startswith(OPENING[:-1]) and len(opening(long)) <= MAX_OPENING_CHARS
    assert opening("Standard therapy includes rituximab.[[14](#cit/s)] Combinations include the following:\n\n"
                   "- R-bendamustine.") == "Standard therapy includes rituximab.[[14](#cit/s)]"  # not the lead-in
    for text in ("Evidence (immunotherapy):\n\n1. The KEYNOTE-A18 trial ...",  # a list's lead-in alone
                 "Chemotherapy for AML is divided into the following two general categories:\n\n1. Intensive.",
                 "##### Pembrolizumab\n\nPembrolizumab is an option.", "- [Pembrolizumab](/r#_5).", "", "| a | b |"):
        assert opening(text) is None, text


@pytest.fixture()
def kb():
    chunks = {"l0": (LIST, RECTAL, [0, 0, 1, 0]), "o0": (IMMUNO, RECTAL + " > #### Immunotherapy", [0, 1, 0, 0]),
              "t0": (TRIAL, RECTAL + " > #### Immunotherapy > ##### Pembrolizumab", [1, 0.1, 0, 0])}
    k = store_with("short-items-test", chunks, source="rectal.md", title="Rectal")
    yield k
    k.close()


def test_a_short_item_brings_the_opening_of_its_section_so_there_is_a_sentence_to_quote(kb):
    result = kb.retrieve("dMMR rectal cancer first-line", RetrievalParams(recall_k=1, rerank_k=1,
                                                                         distance_threshold=0.3))
    trial, listed = result.hits
    assert trial.chunk_id == "t0" and listed.origin == "options" and listed.chunk_id == "l0:4"
    assert listed.text == ("Treatment options for stage IV and recurrent rectal cancer include:\n\n"
                           "4. [Immunotherapy](/r#_4).\n- [Pembrolizumab](/r#_5).\n- [Nivolumab](/r#_6).\n\n"
                           + OPENING)
    assert listed.section == RECTAL + " > #### Immunotherapy"
    passage = Passage(id="E2", chunk_id=listed.chunk_id, title="Rectal", source="rectal.md", section=listed.section,
                      page=None, text=listed.text, distance=0.1, rerank_score=1.0)
    offered = [text for _, text in passage_sentences([passage]).values()]
    # the item itself (its drugs are listed under it: session 23), then the section's opening to quote
    assert offered[0] == "[Immunotherapy](/r#_4)."
    assert offered[1].startswith("Pembrolizumab is a standard treatment option for patients with dMMR")


def test_not_when_a_kept_passage_holds_the_opening_nor_for_an_item_long_enough(kb):
    both = kb.retrieve("q", RetrievalParams(recall_k=2, rerank_k=2, distance_threshold=2.0))
    assert {h.chunk_id for h in both.hits} >= {"t0", "o0"}
    listed = next(h for h in both.hits if h.origin == "options")
    assert listed.text.endswith("- [Nivolumab](/r#_6).")  # o0, kept, holds the opening
    surgery = RECTAL + " > #### Surgery with or without chemotherapy or radiation therapy"
    kb._collection.upsert(ids=["s0", "s1"], embeddings=[_unit([0, 0, 0.5, 1]), _unit([1, 0.1, 0.05, 0.01])],
                          documents=["Surgery is the standard treatment of isolated metastases.", "A trial."],
                          metadatas=[{"source": "rectal.md", "title": "Rectal", "section": s, "chunk_index": 3 + i}
                                     for i, s in enumerate((surgery, surgery + " > ##### Metastasectomy"))])
    hit = next(h for h in kb.retrieve("q", RetrievalParams(recall_k=1, rerank_k=1, distance_threshold=0.3)).hits)
    assert hit.chunk_id == "s1"
    (item,) = kb.options_lists([hit], 3)
    assert item.text.endswith("radiation therapy](/r#_1).")  # quotable itself: no opening added
