"""A chunk cut inside a long paragraph or list item is retrieved after that block's first sentence (kb.chunking
``Chunk.lead``, ``KnowledgeBase.block_leads``): CheckMate-649's "A total of 789 patients ..." had reached the model
without the item's head, which names the trial and its HER2-negative population (session 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.store import KnowledgeBase, RetrievalParams

HEAD = ("1. In a randomized phase III study (CheckMate-649), 1,581 patients with HER2-negative gastric cancer were "
        "assigned to nivolumab plus chemotherapy or chemotherapy.")
ITEM = (HEAD + " " + "Overall survival was longer with nivolumab in every subgroup that was studied. " * 8
        + "A total of 789 patients were assigned to the CPS 5 group.")
DOC = f"# Gastric\n\n## First-line therapy\n\n{ITEM}\n"


class KeywordEmbedder:
    """Near the query only what names the CPS 5 group."""
    query_prefix = ""

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.1] if "789 patients" in t else [0.0, 1.0] for t in texts]


@pytest.fixture()
def kb(tmp_path: Path):
    (tmp_path / "gastric.md").write_text(DOC, encoding="utf-8")
    k = KnowledgeBase(chroma_dir=None, collection="block-leads-test", embedder_spec="fake", reranker_spec="fake",
                      embedder=KeywordEmbedder())
    assert not k.ingest([tmp_path / "gastric.md"], chunk_chars=400).errors
    yield k
    k.close()


def test_the_chunk_is_retrieved_after_its_items_first_sentence(kb):
    params = RetrievalParams(recall_k=1, rerank_k=1, rerank=False, distance_threshold=0.3, options_lists=0)
    (hit,) = kb.retrieve("CPS 5 group", params).hits
    assert "789 patients" in hit.text and hit.text.startswith(HEAD + "\n")
    assert hit.text[len(HEAD) + 1:] in ITEM  # the rest verbatim as stored


def test_no_lead_is_repeated_when_a_kept_passage_holds_it(kb):
    params = RetrievalParams(recall_k=5, rerank_k=5, rerank=False, distance_threshold=2.0, options_lists=0)
    hits = kb.retrieve("CPS 5 group", params).hits
    assert len(hits) > 1 and sum(h.text.count(HEAD) for h in hits) == 1


def test_a_section_is_read_with_its_cut_item_on_one_line(kb):
    read = kb._section_reader()
    text, _, _, starts = read(str(Path(kb.sources()[0]["source"])), "## First-line therapy")
    assert text == ITEM  # not broken into lines where the chunks were cut
    assert all(text[at:].startswith(kb._collection.get(ids=[cid])["documents"][0]) for cid, at in starts.items())
