"""`kb query --explain` grades, the Stage 3 order in `eval retrieval`, empty and mismatched collections, and the
gate calibrated on the shipped demo questions by `kb ingest --demo`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.store import KnowledgeBase

MINILM = "embedded:all-minilm-l6-v2"
RERANKER = "embedded:ms-marco-minilm-l12-int8"

GUIDE = """---
title: "Anal Cancer Test Guide"
---
# Anal Cancer Test Guide

## Prognosis
Five-year survival of localized anal cancer exceeds 80 percent; nodal involvement lowers it.

## Treatment Option Overview
Chemoradiation with mitomycin and fluorouracil (Nigro protocol) is standard for localized disease.
"""


@pytest.fixture()
def cli(tmp_path, monkeypatch, capsys):
    from oncotui.cli import main

    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCOTUI_EMBEDDING__MODEL", MINILM)

    def run(*argv: str) -> tuple[int, str, str]:
        rc = main(list(argv))
        out = capsys.readouterr()
        return rc, out.out, out.err

    return run


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_query_on_an_empty_knowledge_base_says_to_ingest(cli):
    rc, out, err = cli("kb", "query", "anal cancer prognosis")
    assert rc == 1 and "knowledge base is empty" in err and "kb ingest" in err and "gate refused" not in out


def test_explain_prints_grades_and_eval_names_the_stage3_order(cli, tmp_path):
    (tmp_path / "anal.md").write_text(GUIDE)
    assert cli("kb", "ingest", str(tmp_path / "anal.md"))[0] == 0

    rc, out, _ = cli("kb", "query", "What is the prognosis of anal cancer?", "--explain")
    assert rc == 0
    grades = out.split("Grades (relevant when the cross-encoder logit >= rag.relevance_min_score -3.0):")[1]
    assert "relevant" in grades and "rag_confidence" in grades and "Prognosis" in grades
    assert "recall order kept" in out
    _, out, _ = cli("kb", "query", "What is the prognosis of anal cancer?", "--explain", "--order", "rerank")
    assert "Stage 3 rerank (cross-encoder logits)" in out

    ret = _jsonl(tmp_path / "ret.jsonl", [{"query": "anal cancer survival", "relevant_doc": "anal.md"},
                                          {"query": "anal cancer treatment", "relevant_doc": "anl.md"}])
    rc, out, err = cli("eval", "retrieval", "--set", str(ret), "--json")
    data = json.loads(out)
    assert rc == 0 and data["stage3"] == "recall" and data["doc_recall@1"] == 0.5
    # no relevant_section anywhere: the section level was not measured, which is not the same as 0
    assert data["n_section"] == 0 and data["section_recall@5"] is None and data["section_mrr"] is None
    assert "'anl.md' is not in the knowledge base" in err
    assert json.loads(cli("eval", "retrieval", "--set", str(ret), "--json", "--order", "rerank")[1])["stage3"] == \
        "rerank"
    _, out, _ = cli("eval", "retrieval", "--set", str(ret))
    assert "recall order" in out and "--order rerank" in out and "section  not measured" in out


def test_stats_work_on_a_collection_built_with_another_model_and_queries_are_refused(cli, tmp_path, monkeypatch):
    (tmp_path / "anal.md").write_text(GUIDE)
    assert cli("kb", "ingest", str(tmp_path / "anal.md"))[0] == 0
    monkeypatch.setenv("ONCOTUI_EMBEDDING__MODEL", "embedded:bge-small-en-v1.5-int8")
    rc, out, _ = cli("kb", "stats")
    assert rc == 0 and "chunks           2" in out and f"built with {MINILM}" in out and "--rebuild" in out
    rc, out, err = cli("kb", "stats", "--json")
    assert "--rebuild" in json.loads(out)["model_mismatch"]
    rc, out, err = cli("kb", "query", "anal cancer prognosis")
    assert rc == 2 and f"built with {MINILM}" in err


def test_a_broken_embedding_model_is_named_and_a_rebuild_with_it_drops_nothing(cli, tmp_path, monkeypatch):
    (tmp_path / "anal.md").write_text(GUIDE)
    assert cli("kb", "ingest", str(tmp_path / "anal.md"))[0] == 0
    not_a_model = tmp_path / "not_a_model"  # a folder, but no model in it (no config.json)
    not_a_model.mkdir()
    (not_a_model / "README.md").write_text("weights go here\n")
    monkeypatch.setenv("ONCOTUI_EMBEDDING__MODEL", str(not_a_model))
    # the refusal names the broken setting; a rebuild would not help, so it is not suggested
    rc, out, err = cli("kb", "query", "anal cancer prognosis")
    assert rc == 2 and "`embedding.model`" in err and "could not load" in err and "--rebuild" not in err
    assert f"set it back to {MINILM}" in err
    rc, out, err = cli("kb", "ingest", "--rebuild", str(tmp_path / "anal.md"))
    assert rc == 2 and "could not load" in err and "nothing was dropped" in err
    monkeypatch.setenv("ONCOTUI_EMBEDDING__MODEL", MINILM)
    stats = json.loads(cli("kb", "stats", "--json")[1])
    assert stats["documents"] == 1 and stats["chunks"] == 2 and stats["model_mismatch"] is None


def test_a_rebuild_replaces_the_knowledge_base_only_when_it_worked(cli, tmp_path, monkeypatch):
    (tmp_path / "anal.md").write_text(GUIDE)
    assert cli("kb", "ingest", str(tmp_path / "anal.md"))[0] == 0
    monkeypatch.setenv("ONCOTUI_EMBEDDING__MODEL", "embedded:bge-small-en-v1.5-int8")
    rc, out, err = cli("kb", "ingest", "--rebuild", str(tmp_path / "typo.md"))
    assert rc == 1 and "--rebuild not applied" in err and "unchanged" in err
    stats = json.loads(cli("kb", "stats", "--json")[1])
    assert (stats["documents"], stats["embedding_model"]) == (1, MINILM)
    rc, out, err = cli("kb", "ingest", "--rebuild", str(tmp_path / "anal.md"))
    assert rc == 0 and "added 1" in out
    stats = json.loads(cli("kb", "stats", "--json")[1])
    assert (stats["documents"], stats["chunks"], stats["embedding_model"], stats["model_mismatch"]) == \
        (1, 2, "embedded:bge-small-en-v1.5-int8", None)
    assert "gate refused" not in cli("kb", "query", "anal cancer prognosis")[1]


def test_an_empty_collection_built_with_a_mistyped_model_is_taken_over(tmp_path):
    # a first ingest that failed on a wrong embedding.model leaves an empty collection tagged with that model
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="guidelines", embedder_spec="/no/such/model",
                       reranker_spec=RERANKER) as bad:
        assert bad.count() == 0
    with KnowledgeBase(chroma_dir=tmp_path / "chroma", collection="guidelines", embedder_spec=MINILM,
                       reranker_spec=RERANKER) as good:
        assert good.metadata["embedding_model"] == MINILM and good.model_mismatch is None


def test_demo_ingest_calibrates_the_gate_on_the_demo_questions(cli, tmp_path):
    rc, out, _ = cli("kb", "ingest", "--demo")
    assert rc == 0 and "gate calibrated on the demo question sets" in out
    stats = json.loads(cli("kb", "stats", "--json")[1])
    assert stats["calibration_set"] == "demo" and "calibrated" in stats["threshold_source"]
    assert "on the shipped demo questions" in cli("kb", "stats")[1]
    # a short keyword question about a demo topic passes; a question from outside medicine does not
    assert "gate refused" not in cli("kb", "query", "pancreatic cancer stage IV")[1]
    assert "gate refused" in cli("kb", "query", "What is the capital of France?")[1]

    # once other guidelines are indexed the demo questions no longer describe the collection: say so, keep it
    (tmp_path / "anal.md").write_text(GUIDE)
    rc, out, _ = cli("kb", "ingest", str(tmp_path / "anal.md"))
    assert rc == 0 and "calibrated on the demo questions" in out and "oncotui kb calibrate" in out
    assert json.loads(cli("kb", "stats", "--json")[1])["threshold"] == stats["threshold"]


def test_eval_gate_with_grading_counts_both_refusal_points(cli, tmp_path, monkeypatch):
    (tmp_path / "anal.md").write_text(GUIDE)
    assert cli("kb", "ingest", str(tmp_path / "anal.md"))[0] == 0
    monkeypatch.setenv("ONCOTUI_KB__DISTANCE_THRESHOLD", "1.5")  # a gate that lets everything through
    ins = _jsonl(tmp_path / "in.jsonl", [{"query": "What is the prognosis of localized anal cancer?"}])
    outs = _jsonl(tmp_path / "out.jsonl", [{"query": "How do I replace the timing belt on a car engine?"}])
    rc, out, _ = cli("eval", "gate", "--in", str(ins), "--out", str(outs), "--json", "--with-grading")
    data = json.loads(out)
    # the gate alone refuses nothing; the cross-encoder grading refuses the car question and keeps the cancer one
    assert rc == 0 and data["out_of_domain_refusal_rate"] == 0.0
    assert data["graded_in_domain_pass_rate"] == 1.0 and data["graded_out_of_domain_refusal_rate"] == 1.0
    assert "with grading" in cli("eval", "gate", "--in", str(ins), "--out", str(outs), "--with-grading")[1]


def test_query_as_consult_shows_what_a_consult_sends(cli, tmp_path):
    """An engineer debugging a consult sees its phrasings: redacted, the facts appended, the question sentence and
    the focused query used for recall, and the focused query used for grading."""
    (tmp_path / "anal.md").write_text(GUIDE)
    assert cli("kb", "ingest", str(tmp_path / "anal.md"))[0] == 0
    case = "John Smith, MRN 4471823. Anal canal squamous cell carcinoma, T2N1, untreated. What first-line treatment?"
    rc, out, _ = cli("kb", "query", case, "--as-consult", "--explain")
    assert rc == 0
    sent = out.split("Stage 1 recall")[0]
    assert "Sent as a consult" in sent and "John Smith" not in sent and "4471823" not in sent
    assert "extra phrasing" in sent and "'What first-line treatment?'" in sent
    assert "grade query" in sent and "anal cancer" in sent and "first-line treatment" in sent
    rc, plain, _ = cli("kb", "query", case, "--explain")
    assert rc == 0 and "Sent as a consult" not in plain
