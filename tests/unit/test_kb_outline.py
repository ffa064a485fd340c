"""Options lists (kb/outline.py, kb.store Stage 3b): a passage under a treatment section that opens with its options
brings the list's lead-in and the item naming its option. Fake embedder and reranker, no models."""

from __future__ import annotations

import pytest

from engine.casefit import locked_candidates
from engine.nodes.corrective_rag import to_passages
from engine.state import CaseFacts, Passage
from kb.outline import MAX_ITEM_CHARS, names, option_item
from kb.store import KnowledgeBase, RetrievalParams
from tests.unit.test_kb_store_grade_queries import FakeEmbedder, _unit

LIST = """Treatment options for patients with newly diagnosed [stage IV](/x#_1), relapsed, and recurrent disease include:

1. [Cytotoxic combination chemotherapy](/x#_2) with platinum.

- [Combination chemotherapy](/x#_3).
4. [EGFR tyrosine kinase inhibitors (TKIs) with or without chemotherapy](/x#_4) (for patients with *EGFR* variants).

- [Osimertinib alone](/x#_5).
- [Gefitinib](/x#_6).
6. [ALK inhibitors](/x#_7) (for patients with *ALK* translocations).

- [Alectinib](/x#_8).
- [Lorlatinib](/x#_9).
7. [BRAF V600E and MEK inhibitors](/x#_10) (for patients with *BRAF* V600E variants)."""
OPTIONS = "## Treatment of Stage IV NSCLC > ### Treatment Options for Newly Diagnosed Stage IV NSCLC (First-Line Therapy)"
ALK = OPTIONS + " > #### ALK inhibitors (for patients with *ALK* translocations) > ##### Lorlatinib"
TRIAL = "The phase III CROWN trial randomly assigned 296 patients with ALK-positive NSCLC to lorlatinib or crizotinib."


def test_the_item_the_heading_names_with_its_bullets_under_the_lead_in():
    item = option_item(LIST, "#### ALK inhibitors (for patients with *ALK* translocations)")
    assert item == ("Treatment options for patients with newly diagnosed [stage IV](/x#_1), relapsed, and recurrent "
                    "disease include:\n\n6. [ALK inhibitors](/x#_7) (for patients with *ALK* translocations).\n"
                    "- [Alectinib](/x#_8).\n- [Lorlatinib](/x#_9).")
    # the last item has no bullets; an item one heading names more briefly is still that item
    assert option_item(LIST, "BRAF V600E and MEK inhibitors").endswith("(for patients with *BRAF* V600E variants).")
    assert "1. [Cytotoxic" in option_item(LIST, "#### Cytotoxic combination chemotherapy")


def test_no_item_without_a_list_a_match_or_a_lead_in():
    assert option_item(LIST, "#### ALK-directed TKIs") is None  # other words before the shared ones
    assert option_item(LIST, "#### Lorlatinib") is None  # a drug is a bullet, not an option
    assert option_item(LIST.split("\n", 1)[1], "ALK inhibitors") is None  # no "... include:" lead-in
    prose = LIST.replace("6. [ALK", "Other trials are described below.\n\n6. [ALK")
    assert option_item(prose, "ALK inhibitors") is None  # prose ended the list
    assert not names("1. Surgery.", "Sur")  # too short to be a name


def test_a_long_item_is_cut_at_a_bullet():
    many = LIST.replace("- [Lorlatinib](/x#_9).", "\n".join(f"- [Drug {i}](/x#_{i})." for i in range(60)))
    item = option_item(many, "ALK inhibitors")
    assert len(item) <= MAX_ITEM_CHARS + 200 and item.endswith(").") and "- [Drug 0]" in item
    assert "Drug 59" not in item


class FakeReranker:
    def score(self, query: str, texts: list[str]) -> list[float]:
        return [2.5 if "include:" in t else 1.0 for t in texts]


def store_with(collection: str, chunks: dict[str, tuple[str, str, list[float]]], source: str = "nsclc.md",
               title: str = "NSCLC") -> KnowledgeBase:
    """An in-memory store of one document ``source`` holding ``chunks`` (id -> (text, section, vector)), in order,
    with the fake embedder and ``FakeReranker``."""
    k = KnowledgeBase(chroma_dir=None, collection=collection, embedder_spec="fake", reranker_spec="fake",
                      embedder=FakeEmbedder())
    k._collection.upsert(ids=list(chunks), embeddings=[_unit(v) for _, _, v in chunks.values()],
                         documents=[t for t, _, _ in chunks.values()],
                         metadatas=[{"source": source, "title": title, "section": s, "chunk_index": i}
                                    for i, (_, s, _) in enumerate(chunks.values())])
    k._reranker = FakeReranker()
    return k


@pytest.fixture()
def kb():
    half = LIST.index("6. [ALK")  # the list spans two chunks, far from the query
    k = store_with("outline-test", {"c0": (LIST[:half], OPTIONS, [0, 0, 1, 0]),
                                    "c1": (LIST[half:], OPTIONS, [0, 0, 0, 1]), "c2": (TRIAL, ALK, [1, 0.1, 0, 0])})
    yield k
    k.close()


def test_a_trial_passage_brings_its_option_from_the_list_above_it(kb):
    result = kb.retrieve("ALK-positive NSCLC first-line", RetrievalParams(recall_k=1, rerank_k=1,
                                                                         distance_threshold=0.3))
    assert [h.chunk_id for h in result.hits] == ["c2", "c0:6"]
    trial, listed = result.hits
    assert listed.origin == "options" and listed.rerank_score == 2.5
    assert listed.section == OPTIONS + " > #### ALK inhibitors (for patients with *ALK* translocations)"
    assert listed.text.startswith("Treatment options for patients with newly diagnosed")
    assert "- [Lorlatinib](/x#_9)." in listed.text and "Osimertinib" not in listed.text
    assert listed.distance == trial.distance  # the passage that led to it
    assert [p.origin for p in to_passages(result)] == ["", "options"]  # the consult's passages say which is which
    off = kb.retrieve("ALK-positive NSCLC first-line", RetrievalParams(recall_k=1, rerank_k=1, distance_threshold=0.3,
                                                                      options_lists=0))
    assert [h.chunk_id for h in off.hits] == ["c2"]


def test_no_list_item_a_passage_already_holds(kb):
    both = kb.retrieve("q", RetrievalParams(recall_k=3, rerank_k=3, distance_threshold=2.0))
    assert sorted(h.chunk_id for h in both.hits) == ["c0", "c1", "c2"]  # c1 holds item 6 itself


def test_the_options_item_is_a_recommendation_that_holds_only_for_its_marker():
    """Through case fit: for an ALK case the item is offered first, before the trial (a recommendation); for an EGFR
    case it is withheld. (The drugs' one-word bullets are too short to be offered as statements; they stay in the
    passage the evidence pane shows.)"""
    listed = option_item(LIST, "ALK inhibitors (for patients with *ALK* translocations)")
    passages = [Passage(id="E1", chunk_id="c2", title="NSCLC", source="nsclc.md", section=ALK, page=None, text=TRIAL,
                        distance=0.1, rerank_score=1.0),
                Passage(id="E2", chunk_id="c0:6", title="NSCLC", source="nsclc.md", section=OPTIONS, page=None,
                        text=listed, distance=0.1, rerank_score=2.5)]
    alk = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", markers=("ALK rearrangement",))
    kept, dropped = locked_candidates(passages, alk)
    assert list(kept) == ["E2.s1", "E1.s1"] and not dropped
    assert kept["E2.s1"][1] == "[ALK inhibitors](/x#_7) (for patients with *ALK* translocations)."
    egfr = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", markers=("EGFR exon 19 deletion",))
    kept, dropped = locked_candidates(passages, egfr)
    assert not kept and set(dropped) == {"E1.s1", "E2.s1"}


NESTED = """Treatment options for unresectable stage III, stage IV, and recurrent melanoma include the following:

1. [Immunotherapy](/m#_1).

1. [Checkpoint inhibitors](/m#_2).

- [Pembrolizumab](/m#_3).
2. [Signal transduction inhibitors](/m#_4).

1. [BRAF inhibitors](/m#_5) (for patients who test positive for the *BRAF* V600 pathogenic variant).

- [Vemurafenib](/m#_6).
- [Dabrafenib](/m#_7).
2. [Mitogen-activated protein kinase (MEK) inhibitors](/m#_8)."""
MELANOMA = "## Treatment of Stage IV Melanoma > ### Treatment Options for Unresectable Stage III, Stage IV, and Recurrent Melanoma"


def test_a_nested_option_is_found_by_the_deepest_heading_that_names_it(kb):
    """PDQ's nested numbering comes flattened ("2. Signal transduction inhibitors." then "1. BRAF inhibitors (for
    patients who test positive for the BRAF V600 pathogenic variant)."): the passage under "... > Signal transduction
    inhibitors > BRAF inhibitors > Vemurafenib" brings the BRAF item with its drugs, not the group's bare name."""
    vemurafenib = MELANOMA + " > #### Signal transduction inhibitors > ##### BRAF inhibitors > ###### Vemurafenib"
    kb._collection.upsert(ids=["m0", "m1"], embeddings=[_unit([0, 1, 0, 0]), _unit([1, 0.1, 0, 0.01])],
                          documents=[NESTED, "Vemurafenib improved survival in a phase III trial of 675 patients."],
                          metadatas=[{"source": "melanoma.md", "title": "Melanoma", "section": s, "chunk_index": i}
                                     for i, s in enumerate((MELANOMA, vemurafenib))])
    hit = next(h for h in kb.retrieve("q", RetrievalParams(recall_k=4, rerank_k=4, distance_threshold=2.0)).hits
               if h.chunk_id == "m1")
    (listed,) = kb.options_lists([hit], 3)
    assert listed.text.split("\n\n", 1)[1] == ("1. [BRAF inhibitors](/m#_5) (for patients who test positive for the "
                                               "*BRAF* V600 pathogenic variant).\n- [Vemurafenib](/m#_6).\n"
                                               "- [Dabrafenib](/m#_7).")


def test_an_options_passage_sits_in_its_options_section_so_a_paraphrase_citing_it_is_judged_by_it(kb):
    """A free draft paraphrases ("Treatment options include alectinib or lorlatinib [E2]"): the claim names no
    condition, so the governor judges it by the cited passage's section. The options passage's section is the
    option's own heading ("... > ALK inhibitors (for patients with ALK translocations)"), whose condition the trial
    passages under it carry too; under the list's section alone an EGFR case had it released as supported."""
    from engine.governor import govern
    from engine.ledger import build_ledger
    from engine.state import Draft, Recommendation

    result = kb.retrieve("ALK-positive NSCLC first-line", RetrievalParams(recall_k=1, rerank_k=1,
                                                                         distance_threshold=0.3))
    listed = to_passages(result)[1]
    assert listed.section == OPTIONS + " > #### ALK inhibitors (for patients with *ALK* translocations)"
    draft = Draft("x", (Recommendation("Treatment options include alectinib or lorlatinib.", ("E2",)),))
    egfr = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", markers=("EGFR exon 19 deletion",))
    ledger = govern(build_ledger(draft, [listed], None, cancer_type=egfr.cancer_type), 0.9, 0.3, egfr, [listed])
    assert ledger.claims[0].state == "blocked" and "ALK translocations" in ledger.claims[0].reasons[0]
    alk = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", markers=("ALK rearrangement",),
                    line="first")
    ledger = govern(build_ledger(draft, [listed], None, cancer_type=alk.cancer_type), 0.9, 0.3, alk, [listed])
    assert ledger.claims[0].state == "supported", ledger.claims[0]


OVARIAN = """Treatment options for advanced-stage ovarian epithelial cancer, FTC, and PPC include:

1. [Surgery followed by platinum-based chemotherapy.](/o#_684)
2. [Surgery before or after platinum-based chemotherapy and/or additional consolidation therapy](/o#_595).
5. [Surgery before or after platinum-based chemotherapy and the addition of PARP inhibitors to induction therapy and/or consolidation therapy](/o#_1).
6. Chemotherapy for patients who cannot have surgery (although the impact on OS has not been proven)."""


def test_a_heading_that_spells_out_the_items_words_still_names_it():
    """PDQ's heading "Surgery before or after platinum-based chemotherapy and the addition of poly (ADP-ribose)
    polymerase (PARP) inhibitors to induction and/or consolidation therapy" words item 5 more fully: every word of
    the item is in it. A shorter item whose words are a small part of a heading is not named by it."""
    heading = ("#### Surgery before or after platinum-based chemotherapy and the addition of poly (ADP-ribose) "
               "polymerase (PARP) inhibitors to induction and/or consolidation therapy")
    assert option_item(OVARIAN, heading).endswith("consolidation therapy](/o#_1).")
    assert option_item(OVARIAN, "#### Surgery followed by platinum-based chemotherapy").endswith("(/o#_684)")
    assert option_item(OVARIAN, "#### Surgery and PARP inhibitors") is None  # a few of item 5's words
    assert option_item(OVARIAN, "#### Surgery before or after platinum-based chemotherapy") is None  # two items
