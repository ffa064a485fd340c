"""The case-question set (kb/case_eval/cases.jsonl): every label holds in the shared PDQ corpus, and
`oncotui eval retrieval --as-consult` reports answer-level metrics over a small store."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from kb.chunking import chunk_markdown, plain_section

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
CASES = ROOT / "kb" / "case_eval" / "cases.jsonl"
MINILM = "embedded:all-minilm-l6-v2"


def _pdq_or_skip() -> Path:
    pdq = SHARED / "corpus" / "pdq"
    if not pdq.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{pdq} is missing on CI")
        pytest.skip(f"{pdq} is not there")
    return pdq


def test_every_case_label_is_answerable_from_one_chunk_of_its_pdq_summary():
    """The labels were checked against the ingested store; this re-checks them from the Markdown with the same
    chunker (900 characters, the default): some chunk of ``relevant_doc`` has a heading path matching
    ``relevant_section`` and contains every answer term."""
    pdq = _pdq_or_skip()
    rows = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    chunks: dict[str, list] = {}
    failures = []
    for i, row in enumerate(rows, 1):
        doc = row["relevant_doc"]
        if doc not in chunks:
            path = pdq / doc
            assert path.is_file(), f"row {i}: {doc} is not in the corpus"
            chunks[doc] = chunk_markdown(path.read_text(encoding="utf-8"), str(path), 900)
        rx = re.compile(row["relevant_section"])
        terms = row["answer_terms"]
        if not any(rx.search(plain_section(c.section)) and all(t in " ".join(c.text.lower().split()) for t in terms)
                   for c in chunks[doc]):
            failures.append((i, row["query"][:60]))
    assert not failures


GUIDE = """---
title: "Liver Cancer Test Guide"
---
# Liver Cancer Test Guide

## Radiation therapy
Stereotactic body radiation therapy was studied in patients with cirrhosis and portal vein invasion.

## First-line systemic therapy
Atezolizumab plus bevacizumab improved overall survival over sorafenib in untreated advanced hepatocellular carcinoma.
"""


def test_eval_retrieval_as_consult_reports_answer_metrics(tmp_path, monkeypatch, capsys):
    from oncotui.cli import main

    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCOTUI_EMBEDDING__MODEL", MINILM)
    (tmp_path / "liver.md").write_text(GUIDE)
    assert main(["kb", "ingest", str(tmp_path / "liver.md")]) == 0
    rows = [{"query": "Jane Doe, 68, cirrhosis with portal vein invasion, never treated. What first-line systemic "
                      "therapy?", "relevant_doc": "liver.md", "answer_terms": ["atezolizumab", "bevacizumab"]},
            {"query": "radiation therapy for liver cancer", "relevant_doc": "liver.md"}]
    (tmp_path / "set.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["eval", "retrieval", "--set", str(tmp_path / "set.jsonl"), "--as-consult", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["as_consult"] is True and data["n_answer"] == 1 and data["answer_recall@15"] == 1.0
    assert data["multi_query_weight"] == 0.5 and data["n_section"] == 0 and data["section_mrr"] is None
    assert main(["eval", "retrieval", "--set", str(tmp_path / "set.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "1 with answer_terms" in out and "answer   recall@1" in out
