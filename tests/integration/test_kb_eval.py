"""Hybrid recall, the ONNX BGE embedder, calibrated thresholds and the `kb`/`eval` commands on small generated docs.

The one whole-corpus test (dev-set evaluation over ../shared/corpus/pdq) is marked slow.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kb.errors import KBError
from kb.store import KnowledgeBase, RetrievalParams

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
MINILM = "embedded:all-minilm-l6-v2"
BGE = "embedded:bge-small-en-v1.5-int8"
RERANKER = "embedded:ms-marco-minilm-l12-int8"

ANAL = """---
title: "Anal Cancer Test Guide"
---
# Anal Cancer Test Guide

## General Information About Anal Cancer

### Prognosis
Five-year survival of localized anal cancer exceeds 80 percent; nodal involvement lowers it.

### Risk Factors
Human papillomavirus infection is the main risk factor for anal squamous cell carcinoma.

## Treatment Option Overview
Chemoradiation with mitomycin and fluorouracil (Nigro protocol) is standard for localized disease.
"""

BLADDER = """---
title: "Bladder Cancer Test Guide"
---
# Bladder Cancer Test Guide

## Diagnosis
Cystoscopy with transurethral resection establishes the diagnosis of bladder cancer.

## Treatment of Muscle-Invasive Disease
Radical cystectomy after cisplatin-based neoadjuvant chemotherapy is standard.
"""

RETRIEVAL_SET = [
    {"query": "What is the outlook (prognosis) for anal cancer?", "relevant_doc": "anal.md",
     "relevant_section": "(?i)prognos|survival"},
    {"query": "Who is at risk for anal cancer?", "relevant_doc": "anal.md", "relevant_section": "(?i)risk"},
    {"query": "How is bladder cancer diagnosed?", "relevant_doc": "bladder.md", "relevant_section": "(?i)diagnos"},
    {"query": "What are the treatments for muscle-invasive bladder cancer?", "relevant_doc": "bladder.md"},
]
OOD_SET = [{"query": q} for q in ("How do I replace the timing belt on a car engine?", "Best banana bread recipe",
                                  "How to configure a Kubernetes ingress controller?")]


def _shared_or_skip() -> Path:
    if not (SHARED / "corpus" / "pdq").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHARED} is missing on CI")
        pytest.skip(f"{SHARED} is not there")
    return SHARED


@pytest.fixture(scope="module")
def models():
    from kb.embed import get_embedder
    from kb.rerank import get_reranker

    return get_embedder(MINILM).load(), get_reranker(RERANKER).load()


@pytest.fixture()
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "anal.md").write_text(ANAL)
    (folder / "bladder.md").write_text(BLADDER)
    return folder


@pytest.fixture()
def kb(tmp_path, models, docs):
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="eval-test", embedder_spec=MINILM,
                       reranker_spec=RERANKER, embedder=models[0], reranker=models[1]) as k:
        k.ingest([docs])
        yield k


def test_bge_onnx_embedder():
    from kb.embed import Embedder

    emb = Embedder(BGE).load()
    assert emb.backend == "onnx" and emb.query_prefix.startswith("Represent this sentence")
    vecs = emb.embed(["Osimertinib treats EGFR-mutant lung cancer.", "Bake the banana bread for an hour."])
    assert len(vecs[0]) == emb.dim == 384
    assert abs(sum(v * v for v in vecs[0]) - 1.0) < 1e-3
    q = emb.embed_query("drug for EGFR lung cancer")
    assert q != emb.embed(["drug for EGFR lung cancer"])[0]  # the query prefix is applied
    dot = [sum(a * b for a, b in zip(q, v)) for v in vecs]
    assert dot[0] > dot[1]
    assert emb.embed([]) == []


@pytest.mark.parametrize("spec", [BGE, MINILM])
def test_embedding_max_tokens_truncates_passages_but_not_a_long_case_typed_as_the_query(spec):
    from kb.embed import Embedder

    emb = Embedder(spec, max_tokens=16).load()
    history = "A 61-year-old woman with hypertension and type 2 diabetes, former smoker, ECOG 1, presents with "
    lung, melanoma = history + "EGFR exon 19 deleted lung adenocarcinoma.", history + "BRAF V600E mutant melanoma."
    first, second = emb.embed([lung, melanoma])
    assert first == pytest.approx(second, abs=1e-5)  # the passage tail beyond 16 tokens is not embedded
    q_lung, q_melanoma = emb.embed_query(lung), emb.embed_query(melanoma)
    assert sum(a * b for a, b in zip(q_lung, q_melanoma)) < 0.99  # the query's tail is
    assert emb.embed([lung])[0] == pytest.approx(first, abs=1e-5)  # and passages are still cut afterwards


def test_hybrid_recall_and_lexical_index(kb, tmp_path):
    res = kb.retrieve("Nigro protocol mitomycin", RetrievalParams(distance_threshold=2.0, hybrid=True))
    assert res.gate_passed and Path(res.hits[0].source).name == "anal.md"
    assert "Nigro" in res.hits[0].text
    assert {h.origin for h in res.candidates} <= {"dense", "lexical", "dense+lexical"}
    assert any("lexical" in h.origin for h in res.candidates)
    assert "lexical" in res.timings and res.ranked[0].chunk_id == res.hits[0].chunk_id
    assert kb.lexical.count() == kb.count()
    dense = kb.retrieve("Nigro protocol mitomycin", RetrievalParams(distance_threshold=2.0, hybrid=False))
    assert all(h.origin == "dense" for h in dense.candidates) and "lexical" not in dense.timings
    # the lexical index follows removals and is rebuilt from the collection when out of step
    n = kb.remove(str(tmp_path / "docs" / "bladder.md"))
    assert n > 0 and kb.lexical.count() == kb.count()
    kb.lexical.clear()
    assert kb.sync_lexical() == kb.count() and kb.sync_lexical() == 0


def test_no_rerank_keeps_recall_order(kb):
    res = kb.retrieve("anal cancer prognosis", RetrievalParams(distance_threshold=2.0, rerank=False))
    assert all(h.rerank_score is None for h in res.ranked)
    assert [h.chunk_id for h in res.ranked] == [h.chunk_id for h in res.candidates]


def test_threshold_precedence_and_persistence(kb, tmp_path, models):
    assert kb.threshold_for(0.0) == (0.75, "built-in default for this embedder")
    kb.set_threshold(0.42, calibrated_at="2025-01-01T00:00:00+00:00")
    assert kb.threshold_for(0.0)[0] == 0.42 and "calibrated" in kb.threshold_for(0.0)[1]
    assert kb.threshold_for(0.6)[0] == 0.6  # an explicit config value wins
    assert kb.retrieve("anal cancer prognosis").threshold == 0.42
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="eval-test", embedder_spec=MINILM,
                       reranker_spec=RERANKER, embedder=models[0]) as again:
        assert again.calibrated_threshold() == 0.42 and again.stats()["threshold"] == 0.42
        assert again.metadata["embedding_model"] == MINILM
    with pytest.raises(KBError, match="built with embedded:all-minilm-l6-v2.*--rebuild"):
        KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="eval-test", embedder_spec=BGE,
                      reranker_spec=RERANKER)
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="eval-test", embedder_spec=MINILM,
                       reranker_spec=RERANKER, embedder=models[0], rebuild=True) as rebuilt:
        assert rebuilt.calibrated_threshold() is None and rebuilt.lexical.count() == 0


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_kb_and_eval_commands(tmp_path, docs, models, monkeypatch, capsys):
    from oncotui.cli import main

    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCOTUI_EMBEDDING__MODEL", MINILM)
    monkeypatch.setenv("ONCOTUI_KB__DISTANCE_THRESHOLD", "0")
    assert main(["kb", "ingest", str(docs)]) == 0
    capsys.readouterr()
    ret = _write_jsonl(tmp_path / "ret.jsonl", RETRIEVAL_SET)
    ood = _write_jsonl(tmp_path / "ood.jsonl", OOD_SET)

    keys = {"doc_recall@1", "doc_recall@5", "doc_recall@15", "doc_mrr", "section_recall@1", "section_recall@5",
            "section_recall@15", "section_mrr", "n"}
    for extra in ([], ["--no-rerank"]):
        assert main(["eval", "retrieval", "--set", str(ret), "--json", *extra]) == 0
        data = json.loads(capsys.readouterr().out)
        assert keys <= set(data) and data["n"] == 4 and data["n_section"] == 3
        assert data["doc_recall@5"] == 1.0 and data["section_recall@15"] == 1.0
        assert all(0.0 <= data[k] <= 1.0 for k in keys - {"n"})
    assert main(["eval", "retrieval", "--set", str(ret)]) == 0
    assert "section  recall@1" in capsys.readouterr().out

    assert main(["kb", "calibrate", "--in", str(ret), "--out", str(ood)]) == 0
    out = capsys.readouterr().out
    assert "balanced accuracy" in out and "out-of-domain" in out and "p50=" in out and "<- threshold" in out
    assert "mean of the  1 nearest" in out and "mean of the 10 nearest" in out and "<- chosen" in out
    assert main(["kb", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["documents"] == 2 and stats["embedding_model"] == MINILM and "calibrated" in stats["threshold_source"]
    assert stats["gate_k"] in (1, 3, 5, 10)
    assert main(["eval", "gate", "--in", str(ret), "--out", str(ood), "--json"]) == 0
    gate = json.loads(capsys.readouterr().out)
    assert set(gate) == {"in_domain_pass_rate", "out_of_domain_refusal_rate", "threshold", "gate_k"}
    assert gate["threshold"] == pytest.approx(stats["threshold"], abs=1e-4) and gate["gate_k"] == stats["gate_k"]
    assert gate["in_domain_pass_rate"] == 1.0 and gate["out_of_domain_refusal_rate"] == 1.0
    assert main(["kb", "status"]) == 0
    out = capsys.readouterr().out
    assert "documents        2" in out and "anal.md" in out

    assert main(["kb", "query", "What is the prognosis of anal cancer?", "--explain"]) == 0
    out = capsys.readouterr().out
    for word in ("Stage 1 recall", "Stage 2 gate", "Stage 3 rerank", "Stage 4 trim", "timings (ms)", "Prognosis"):
        assert word in out, word
    assert main(["kb", "query", "banana bread recipe", "--explain"]) == 0
    assert "gate refused" in capsys.readouterr().out


@pytest.mark.slow
def test_dev_set_over_the_pdq_corpus(tmp_path):
    """Whole-corpus evaluation with the default embedder (about an hour on a 2-core CPU; see kb/EVAL.md)."""
    shared = _shared_or_skip()
    from kb.evaluate import eval_retrieval, read_jsonl

    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="pdq", embedder_spec=BGE,
                       reranker_spec=RERANKER) as k:
        report = k.ingest([shared / "corpus" / "pdq"])
        assert report.added_docs == 80 and not report.errors
        rows = read_jsonl(shared / "eval" / "retrieval_dev.jsonl")
        m = eval_retrieval(k, rows, RetrievalParams(distance_threshold=2.0), rerank=True)
        assert m["n"] == len(rows) and m["doc_recall@5"] >= 0.95
        assert m["section_recall@5"] >= 0.73  # at least the naive baseline


def test_calibrated_gate_can_average_the_k_nearest_chunks(kb):
    """A question whose single nearest chunk is close but whose next ones are far is refused by a k = 3 gate."""
    query = "anal cancer prognosis"
    near = kb.nearest_distances(query, 3)
    mean3 = sum(near) / 3
    assert near == sorted(near) and near[0] < mean3
    between = (near[0] + mean3) / 2
    kb.set_threshold(between, gate_k=1)
    assert kb.retrieve(query).gate_passed  # the nearest chunk alone is within the threshold
    kb.set_threshold(between, gate_k=3)
    assert kb.gate_k() == 3
    res = kb.retrieve(query)
    assert not res.gate_passed and res.gate_k == 3 and res.gate_value == pytest.approx(mean3, abs=1e-6)
    assert res.closest is not None and res.closest.distance == pytest.approx(near[0], abs=1e-6)
    assert kb.gate_k(configured=0.5) == 1  # a threshold from config.toml is a nearest-chunk threshold
    assert kb.retrieve(query, RetrievalParams(distance_threshold=between)).gate_passed


def test_a_gate_query_admits_a_case_its_own_words_moved_past_the_threshold(kb):
    """A note's words about the patient pull the whole case's vector away from the guidelines; the gate also
    judges a consult's facts query (RetrievalParams.gate_queries), and each passage by the nearer of the two."""
    case = ("Anal canal squamous cell carcinoma. She is retired and lives with her husband and their two "
            "dogs; her daughter drives her to every visit and she enjoys gardening. What treatment?")
    facts = "anal cancer squamous cell carcinoma treatment options"
    (whole,), (focused,) = kb.nearest_distances(case, 1), kb.nearest_distances(facts, 1)
    assert focused < whole
    threshold = (focused + whole) / 2
    kb.set_threshold(threshold, gate_k=1)
    refused = kb.retrieve(case)
    assert not refused.gate_passed and refused.gate_value == pytest.approx(whole, abs=1e-6)
    far = kb.retrieve(case, RetrievalParams(gate_queries=("gardening with dogs and grandchildren",)))
    assert not far.gate_passed and far.gate_query == ""
    loose = RetrievalParams(distance_threshold=whole + 0.05, gate_queries=(facts,))
    assert kb.retrieve(case, loose).gate_query == ""  # the whole case passes by itself: no gate query needed
    admitted = kb.retrieve(case, RetrievalParams(gate_queries=(facts,)))
    # the facts query admits the case, and its passages pass by their distance to it: none lies within the
    # threshold of the whole case, each kept one within that of the facts query (the distance shown)
    assert admitted.gate_passed and admitted.gate_query == facts and admitted.hits
    kept = [h for h in admitted.hits if h.origin != "options"]
    assert all(h.distance <= threshold for h in kept)
    assert min(kb.nearest_distances(case, 1)) > threshold
    assert kept[0].distance == pytest.approx(focused, abs=1e-4)
    kb.set_threshold(whole + 1e-4, gate_k=3)  # the nearest chunk passes, the mean of three does not
    mean3 = sum(kb.nearest_distances(case, 3)) / 3
    assert mean3 > whole + 1e-4 and not kb.retrieve(case).gate_passed
    assert sum(kb.nearest_distances(facts, 3)) / 3 <= whole + 1e-4
    admitted = kb.retrieve(case, RetrievalParams(gate_queries=(facts,)))
    assert admitted.gate_passed and admitted.gate_query == facts
    assert admitted.gate_value == pytest.approx(sum(kb.nearest_distances(facts, 3)) / 3, abs=1e-6)
    assert admitted.hits and all(h.distance <= whole + 1e-4 for h in admitted.hits if h.origin != "options")
