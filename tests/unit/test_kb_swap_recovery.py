"""A crash inside `kb ingest --rebuild`'s swap (kb.store.finish_rebuild) is recovered at the next open."""

from __future__ import annotations

import pytest

from kb.store import KnowledgeBase


class FakeEmbedder:
    query_prefix = ""

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def _open(path, **kw) -> KnowledgeBase:
    return KnowledgeBase(chroma_dir=path, collection="guides", embedder_spec="fake", reranker_spec="fake",
                         embedder=FakeEmbedder(), **kw)


def _put(kb: KnowledgeBase, cid: str) -> None:
    kb._collection.upsert(ids=[cid], embeddings=[[1.0, 0.0]], documents=[cid],
                          metadatas=[{"source": f"{cid}.md", "title": cid, "section": "", "chunk_index": 0}])


def _names(kb: KnowledgeBase) -> set[str]:
    return {getattr(c, "name", c) for c in kb._client.list_collections()}


@pytest.fixture()
def crashed(tmp_path):
    """An old collection with chunk 'old' and a finished replacement with chunk 'new', as finish_rebuild finds
    them; the test then performs part of the swap, as a crash would leave it."""
    kb = _open(tmp_path)
    _put(kb, "old")
    kb.close()
    kb = _open(tmp_path, rebuild=True)
    _put(kb, "new")
    kb.lexical.add([("new", "new.md", "new")])
    return tmp_path, kb


def test_a_crash_between_the_two_renames_gives_the_old_data_back(crashed):
    path, kb = crashed
    kb._client.get_collection("guides").modify(name="guides-replaced")  # the swap's first step, then the crash
    kb._rebuild_of = None  # a crash does not abandon the rebuild
    kb._client = None
    with _open(path) as again:
        assert again._collection.get()["ids"] == ["old"]
        assert "guides-replaced" not in _names(again)
    with _open(path, rebuild=True) as rebuilt:  # the next rebuild starts from an empty replacement, as always
        assert rebuilt.count() == 0 and rebuilt.collection_name == "guides-rebuild"
        rebuilt.abandon_rebuild()
        assert rebuilt._collection.get()["ids"] == ["old"]


def test_a_crash_after_the_new_collection_took_the_name_finishes_the_swap(crashed):
    path, kb = crashed
    kb._client.get_collection("guides").modify(name="guides-replaced")
    kb._collection.modify(name="guides")  # the second step, then the crash before the old one was dropped
    kb._lexical.close()
    kb._rebuild_of = None
    kb._client = None
    assert (path / "lexical-guides-rebuild.sqlite3").exists()
    with _open(path) as again:
        assert again._collection.get()["ids"] == ["new"]
        assert "guides-replaced" not in _names(again)
        assert not (path / "lexical-guides-rebuild.sqlite3").exists()
        assert [cid for cid, _s in again.lexical.search("new", 5)] == ["new"]
