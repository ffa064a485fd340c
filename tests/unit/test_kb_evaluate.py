"""Evaluation maths, calibration rule, BM25 index and fusion: pure functions, no models."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from kb.errors import KBError
from kb.evaluate import (
    best_threshold,
    choose_gate,
    cross_validated_gate,
    first_hit,
    gate_rates,
    heading_path,
    histogram,
    percentiles,
    read_jsonl,
)
from kb.lexical import LexicalIndex, fts_query, rrf


@dataclass
class H:
    source: str
    section: str


def test_heading_path_has_no_hash_marks():
    assert heading_path("## General Information About Pancreatic Cancer > ### Prognosis") == \
        "General Information About Pancreatic Cancer > Prognosis"
    assert heading_path("") == ""


def test_first_hit_doc_and_section_level():
    hits = [H("/c/other.md", "## Prognosis"), H("/c/pancreatic.md", "## Treatment Option Overview"),
            H("/c/pancreatic.md", "## General Information About Pancreatic Cancer > ### Prognosis")]
    assert first_hit(hits, "pancreatic.md", None) == 2
    assert first_hit(hits, "pancreatic.md", re.compile(r"(?i)prognos|survival")) == 3
    # the regex sees "A > B" (no '#'), so an anchored pattern works
    assert first_hit(hits, "pancreatic.md", re.compile(r"^General Information About Pancreatic Cancer > Prognosis$")) == 3
    assert first_hit(hits, "missing.md", None) is None


def test_best_threshold_maximises_balanced_accuracy():
    in_d = [0.20, 0.25, 0.30, 0.42]
    out_d = [0.40, 0.50, 0.60, 0.70]
    t, ba = best_threshold(in_d, out_d)
    r = gate_rates(in_d, out_d, t)
    assert ba == pytest.approx((r["in_domain_pass_rate"] + r["out_of_domain_refusal_rate"]) / 2)
    assert ba == pytest.approx(0.875) and 0.30 < t < 0.40  # or 0.42 < t < 0.50: same score, middle of the tie
    # perfectly separable: the threshold lies in the gap
    t, ba = best_threshold([0.1, 0.2], [0.5, 0.6])
    assert ba == 1.0 and 0.2 < t < 0.5
    with pytest.raises(KBError):
        best_threshold([], [0.5])


def test_choose_gate_prefers_the_k_that_separates_and_the_smaller_k_on_a_tie():
    # nearest chunk alone overlaps (one in-domain query is far), the mean of 3 separates the sets
    in_n = [[0.10, 0.12, 0.14], [0.40, 0.12, 0.13], [0.11, 0.13, 0.15]]
    out_n = [[0.30, 0.50, 0.55], [0.35, 0.45, 0.50], [0.32, 0.48, 0.52]]
    choice = choose_gate(in_n, out_n, (1, 3))
    assert choice.k == 3 and choice.balanced_accuracy == 1.0
    assert [k for k, _t, _b in choice.options] == [1, 3] and choice.options[0][2] < 1.0
    assert choose_gate([[0.1, 0.1]], [[0.5, 0.5]], (2, 1)).k == 1


def test_cross_validated_gate_counts_each_query_once_on_a_fold_it_was_not_tuned_on():
    separable_in = [[0.1 + i / 1000] for i in range(10)]
    separable_out = [[0.5 + i / 1000] for i in range(10)]
    held = cross_validated_gate(separable_in, separable_out, (1,), folds=5)
    assert held == {"in_domain_pass_rate": 1.0, "out_of_domain_refusal_rate": 1.0, "folds": 5}
    # an in-domain outlier beyond every out-of-domain query is refused whichever folds the gate was tuned on
    outlier_in = separable_in[:9] + [[0.9]]
    held = cross_validated_gate(outlier_in, separable_out, (1,), folds=5)
    assert held["in_domain_pass_rate"] == 0.9 and held["out_of_domain_refusal_rate"] == 1.0


def test_gate_rates_keys():
    assert gate_rates([0.1, 0.5], [0.2, 0.9], 0.3) == {"in_domain_pass_rate": 0.5, "out_of_domain_refusal_rate": 0.5,
                                                       "threshold": 0.3}


def test_percentiles_and_histogram():
    p = percentiles([0.0, 1.0], (0, 50, 100))
    assert p == {0: 0.0, 50: 0.5, 100: 1.0}
    text = histogram([0.1, 0.2, 0.2], [0.8, 0.9], 0.5, bins=4)
    assert "in-domain" in text and "threshold" in text and "#" in text and "o" in text


def test_read_jsonl_names_bad_lines(tmp_path):
    f = tmp_path / "set.jsonl"
    f.write_text(json.dumps({"query": "q1", "relevant_doc": "a.md"}) + "\n\n" + "{broken\n")
    with pytest.raises(KBError, match=r"set.jsonl:3: not JSON"):
        read_jsonl(f)
    f.write_text(json.dumps({"question": "q1"}) + "\n")
    with pytest.raises(KBError, match=r":1: missing query"):
        read_jsonl(f)
    f.write_text(json.dumps({"query": "q1"}) + "\n")
    assert read_jsonl(f) == [{"query": "q1"}]


def test_fts_query_and_rrf():
    assert fts_query("What is (are) the prognosis of Anal Cancer?") == '"prognosis" OR "anal" OR "cancer"'
    assert fts_query("?? the of") == ""
    fused = rrf([["a", "b", "c"], ["c", "a", "d"]], k=60)
    assert [cid for cid, _s in fused][:2] == ["a", "c"] and {cid for cid, _ in fused} == {"a", "b", "c", "d"}


def test_lexical_index_roundtrip(tmp_path):
    idx = LexicalIndex(tmp_path / "lex.sqlite3")
    idx.add([("c1", "a.md", "Anal cancer prognosis and survival"), ("c2", "a.md", "Treatment with chemoradiation"),
             ("c3", "b.md", "Staging of bladder cancer")])
    assert idx.count() == 3
    assert idx.search("what is the outlook (prognosis) for anal cancer", 2)[0][0] == "c1"
    assert idx.search("chemoradiation treatments", 5)[0][0] == "c2"  # porter stemming
    idx.add([("c1", "a.md", "Replaced text about surveillance")])  # replace, not duplicate
    assert idx.count() == 3 and idx.search("surveillance", 5)[0][0] == "c1"
    idx.delete(["c1", "c2"])
    assert idx.count() == 1 and idx.search("", 5) == []
    idx.close()
    again = LexicalIndex(tmp_path / "lex.sqlite3")  # persisted
    assert again.count() == 1
    again.clear()
    assert again.count() == 0
