"""Answer-level retrieval metrics (``answer_terms``) and the consult's query path in ``eval_retrieval``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kb.errors import KBError
from kb.evaluate import answer_hit, answer_terms, eval_retrieval, read_jsonl
from kb.store import RetrievalParams

CASES = Path(__file__).resolve().parents[2] / "kb" / "case_eval" / "cases.jsonl"


@dataclass
class H:
    source: str
    section: str
    text: str


@dataclass
class R:
    ranked: tuple[H, ...]
    hits: tuple[H, ...] = ()
    gate_passed: bool = True


@dataclass
class FakeKB:
    answers: dict[str, tuple[H, ...]]
    seen: list[tuple[str, tuple[str, ...], tuple[str, ...], object]] = field(default_factory=list)

    def retrieve(self, query: str, params: RetrievalParams) -> R:
        self.seen.append((query, params.extra_queries, params.grade_queries, params.demote))
        return R(self.answers.get(query, ()))


GENERAL = H("/c/liver.md", "## Treatment > ### Radiation therapy", "SBRT for patients with HCC and cirrhosis.")
LIST = H("/c/liver.md", "## Treatment > ### First-line systemic therapy", "Options include immunotherapy.")
ANSWER = H("/c/liver.md", "## Treatment > ### First-line systemic therapy > #### Atezolizumab and bevacizumab",
           "Atezolizumab plus\nBevacizumab improved overall survival over sorafenib.")
ELSEWHERE = H("/c/kidney.md", "## Stage IV", "Atezolizumab and bevacizumab were tested in renal cell cancer.")


def test_answer_hit_needs_every_term_in_one_chunk_of_the_document():
    hits = [ELSEWHERE, GENERAL, LIST, ANSWER]
    assert answer_hit(hits, "liver.md", ["atezolizumab", "bevacizumab"]) == 4
    assert answer_hit(hits, "liver.md", ["immunotherapy"]) == 3
    assert answer_hit(hits, "liver.md", ["atezolizumab plus bevacizumab"]) == 4  # whitespace folded, case-insensitive
    assert answer_hit(hits, "liver.md", ["atezolizumab", "lenvatinib"]) is None
    assert answer_hit(hits, "kidney.md", ["sorafenib"]) is None


def test_answer_terms_are_validated():
    assert answer_terms({"answer_terms": ["Osimertinib", "first  line"]}) == ["osimertinib", "first line"]
    assert answer_terms({}) == []
    for bad in ("osimertinib", [], [""], [3]):
        with pytest.raises(KBError):
            answer_terms({"answer_terms": bad}, 7)


def test_eval_retrieval_reports_answer_metrics_only_for_rows_with_answer_terms():
    kb = FakeKB({"case": (GENERAL, LIST, ANSWER), "short": (LIST,)})
    rows = [{"query": "case", "relevant_doc": "liver.md", "relevant_section": "(?i)first-line",
             "answer_terms": ["atezolizumab", "bevacizumab"]},
            {"query": "short", "relevant_doc": "liver.md"}]
    m = eval_retrieval(kb, rows, RetrievalParams())
    assert m["n_answer"] == 1 and m["n"] == 2 and m["n_section"] == 1
    assert m["answer_recall@1"] == 0.0 and m["answer_recall@5"] == 1.0 and m["answer_mrr"] == pytest.approx(0.3333)
    assert m["section_recall@1"] == 0.0 and m["section_mrr"] == 0.5
    none = eval_retrieval(kb, rows[1:], RetrievalParams())
    assert none["n_answer"] == 0
    assert none["answer_recall@1"] is None and none["answer_recall@5"] is None and none["answer_mrr"] is None


def test_eval_retrieval_sends_what_query_fn_builds():
    kb = FakeKB({"CASE | liver": (ANSWER,)})
    rows = [{"query": "case", "relevant_doc": "liver.md", "answer_terms": ["bevacizumab"]}]
    def misfit(hit: object) -> bool:
        return False
    m = eval_retrieval(kb, rows, RetrievalParams(),
                       query_fn=lambda q: (q.upper() + " | liver", {
                           "extra_queries": ("question?",), "grade_queries": ("liver first-line",),
                           "demote": misfit}))
    # the case-fit test a consult sends goes with the queries (kb RetrievalParams.demote)
    assert kb.seen == [("CASE | liver", ("question?",), ("liver first-line",), misfit)]
    assert m["answer_recall@1"] == 1.0


def test_the_shipped_case_set_is_well_formed():
    rows = read_jsonl(CASES, ("query", "relevant_doc", "relevant_section"))
    assert len(rows) >= 40
    assert len({r["relevant_doc"] for r in rows}) >= 25
    for i, row in enumerate(rows, 1):
        assert answer_terms(row, i) and row["relevant_doc"].endswith("-pdq.md")
        assert row["query"].rstrip().endswith("?")
    assert json.loads(CASES.read_text().splitlines()[0])["answer_terms"] == ["atezolizumab", "bevacizumab"]
