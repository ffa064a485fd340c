"""Retrieval and gate evaluation, and gate calibration, over JSONL query sets.

Retrieval sets (shape of ``../shared/eval/retrieval_dev.jsonl``): one object per line with ``query``,
``relevant_doc`` (a file name) and optionally ``relevant_section`` (a regular expression). For each query the
ranked list is the Stage 3 output: every gate survivor, in the cross-encoder's order when the params say
``rerank_order="rerank"``, else (``rerank=False``, or the default ``rerank.order = "recall"``) in recall order.
A level with no rows to count (no ``relevant_section`` anywhere) gets None for its metrics, not 0:

* document level: a hit is a chunk whose source file name equals ``relevant_doc``;
* section level (only rows with ``relevant_section``): a hit is a chunk from ``relevant_doc`` whose heading path,
  written as heading texts joined by " > " without the '#' marks (``General Information About Pancreatic Cancer >
  Prognosis``), matches the expression (``re.search``);
* the gate applies as configured (a question refused at the gate has no hits); pass ``distance_threshold=2.0``
  in the params to measure ranking alone (kb/EVAL.md's subset figures were measured that way);
* answer level (only rows with ``answer_terms``, a list of lower-case words or phrases): a hit is a chunk from
  ``relevant_doc`` whose text contains every one of them (case-insensitive), i.e. the passage that names the
  answer ("atezolizumab" and "bevacizumab"), not just one from the right section;
* ``query_fn`` (``oncotui eval retrieval --as-consult``) turns each row's text into what a consult sends: the
  query and the ``RetrievalParams`` fields it sets (extra, grade and gate queries, case fit); by default the
  row's text is the query, alone;
* ``answer_recall@kept`` (rows with ``answer_terms``): share of queries with an answer hit among the passages a
  consult is given, the top ``rerank_k`` and the options lists they bring (``RetrievalParams.options_lists``,
  kb/outline.py), before the character budget;
* recall@k = share of queries with a hit in the top k; MRR = mean of 1 / rank of the first hit (0 when none in
  the ranked list, which holds at most ``recall_k`` chunks).

Gate sets: in-domain queries (``query`` field, e.g. the retrieval set) and out-of-domain queries (``query``
field, e.g. ``out_of_domain_dev.jsonl``). A query passes the gate when its nearest chunk's cosine distance is
<= the threshold.

Calibration rule (``calibrate``): candidate thresholds are the midpoints between consecutive distinct observed
nearest-chunk distances of both sets; the one that maximises balanced accuracy = (in-domain pass rate +
out-of-domain refusal rate) / 2 wins; ties go to the candidate in the middle of the tied range (the widest margin).
The same is done for the mean distance of the k nearest chunks for several k (``choose_gate``), and
``cross_validated_gate`` estimates the chosen gate's rates on questions it was not tuned on (k-fold).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kb.chunking import plain_section
from kb.errors import KBError

KS = (1, 5, 15)


def read_jsonl(path: Path, required: Iterable[str] = ("query",)) -> list[dict[str, Any]]:
    """Rows of a JSONL file; blank lines skipped; KBError naming the line when a row is bad."""
    rows: list[dict[str, Any]] = []
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise KBError(f"cannot read {path}: {e.strerror or e}") from e
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as e:  # e.g. saved as Latin-1 / Windows-1252
        line = data.count(b"\n", 0, e.start) + 1
        raise KBError(f"cannot read {path}:{line}: not UTF-8 text ({e.reason} at byte {e.start}); save it as "
                      "UTF-8") from e
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise KBError(f"{path}:{n}: not JSON ({e})") from e
        if not isinstance(row, dict):
            raise KBError(f"{path}:{n}: expected a JSON object")
        missing = [k for k in required if not isinstance(row.get(k), str) or not row.get(k, "").strip()]
        if missing:
            raise KBError(f"{path}:{n}: missing {', '.join(missing)}")
        rows.append(row)
    if not rows:
        raise KBError(f"{path}: no queries")
    return rows


def heading_path(section: str) -> str:
    """The stored section path (``## A > ### B``) as the eval sets write it: ``A > B``."""
    return plain_section(section)


def answer_terms(row: dict[str, Any], i: int = 0) -> list[str]:
    """A row's ``answer_terms``, lower-cased ([] when absent); KBError when present but not a list of strings."""
    terms = row.get("answer_terms")
    if terms is None:
        return []
    if not isinstance(terms, list) or not terms or not all(isinstance(t, str) and t.strip() for t in terms):
        raise KBError(f"row {i}: answer_terms must be a non-empty list of words or phrases: {terms!r}")
    return [" ".join(t.lower().split()) for t in terms]


def answer_hit(hits: Iterable[Any], doc: str, terms: list[str]) -> int | None:
    """1-based rank of the first chunk from ``doc`` whose text contains every term (case-insensitive), or None."""
    for rank, h in enumerate(hits, 1):
        if Path(h.source).name == doc:
            text = " ".join(h.text.lower().split())
            if all(t in text for t in terms):
                return rank
    return None


def first_hit(hits: Iterable[Any], doc: str, section_re: re.Pattern[str] | None) -> int | None:
    """1-based rank of the first hit (see module docstring) or None."""
    for rank, h in enumerate(hits, 1):
        if Path(h.source).name != doc:
            continue
        if section_re is None or section_re.search(heading_path(h.section)):
            return rank
    return None


@dataclass
class _Acc:
    n: int = 0
    at: dict[int, int] | None = None
    rr: float = 0.0

    def add(self, rank: int | None) -> None:
        self.at = self.at or {k: 0 for k in KS}
        self.n += 1
        if rank is not None:
            self.rr += 1.0 / rank
            for k in KS:
                if rank <= k:
                    self.at[k] += 1

    def metrics(self, prefix: str) -> dict[str, float | None]:
        """None when no query was counted (e.g. a set without relevant_section): nothing measured is not 0."""
        at = self.at or {k: 0 for k in KS}
        out: dict[str, float | None] = {f"{prefix}_recall@{k}": round(at[k] / self.n, 4) if self.n else None
                                        for k in KS}
        out[f"{prefix}_mrr"] = round(self.rr / self.n, 4) if self.n else None
        return out


def unknown_documents(rows: list[dict[str, Any]], known_sources: Iterable[str]) -> list[str]:
    """``relevant_doc`` names that no indexed document has: every query naming one scores 0, usually a typo or a
    document that was never ingested, so the CLI warns."""
    known = {Path(s).name for s in known_sources}
    return sorted({Path(str(r.get("relevant_doc") or "")).name for r in rows} - known - {""})


def eval_retrieval(kb: Any, rows: list[dict[str, Any]], params: Any, rerank: bool = True,
                   progress: Callable[[int, int], None] | None = None,
                   query_fn: Callable[[str], tuple[str, dict[str, Any]]] | None = None
                   ) -> dict[str, Any]:
    """The metrics of the module docstring; keys ``doc_recall@1/5/15``, ``doc_mrr``, ``section_recall@1/5/15``,
    ``section_mrr``, ``answer_recall@1/5/15``, ``answer_mrr``, ``answer_recall@kept``, ``n`` (queries),
    ``n_section`` (rows with ``relevant_section``), ``n_answer`` (rows with ``answer_terms``)."""
    # In recall order the cross-encoder does not move anything, so it is not run: the ranks are the same.
    rerank = rerank and params.rerank_order == "rerank"
    p = replace(params, rerank=rerank, rerank_k=max(params.recall_k, 1), char_budget=10**9)
    doc, sec, ans = _Acc(), _Acc(), _Acc()
    kept_hits = 0
    for i, row in enumerate(rows, 1):
        rel = str(row.get("relevant_doc") or "")
        if not rel:
            raise KBError(f"row {i} has no relevant_doc: {row.get('query')!r}")
        terms = answer_terms(row, i)
        # query_fn: what a consult sends instead of the row's text (the query and the RetrievalParams fields
        # it sets: extra, grade and gate queries, the case-fit test that orders what is kept)
        query, sent = query_fn(row["query"]) if query_fn is not None else (row["query"], {})
        result = kb.retrieve(query, replace(p, **sent))
        ranked = result.ranked
        doc.add(first_hit(ranked, Path(rel).name, None))
        if terms:
            ans.add(answer_hit(ranked, Path(rel).name, terms))
            kept = list(ranked[:max(1, params.rerank_k)])
            if params.options_lists > 0 and hasattr(kb, "options_lists"):
                kept += kb.options_lists(kept, params.options_lists)
            kept_hits += answer_hit(kept, Path(rel).name, terms) is not None
        pattern = row.get("relevant_section")
        if pattern:
            try:
                rx = re.compile(pattern)
            except re.error as e:
                raise KBError(f"row {i}: bad relevant_section {pattern!r}: {e}") from e
            sec.add(first_hit(ranked, Path(rel).name, rx))
        if progress is not None:
            progress(i, len(rows))
    return {**doc.metrics("doc"), **sec.metrics("section"), **ans.metrics("answer"),
            "answer_recall@kept": round(kept_hits / ans.n, 4) if ans.n else None, "n": doc.n,
            "n_section": sec.n, "n_answer": ans.n}


def neighbour_distances(kb: Any, queries: list[str], k: int,
                        progress: Callable[[int, int], None] | None = None) -> list[list[float]]:
    """For each query, the distances of its ``k`` nearest chunks, nearest first."""
    out = []
    for i, q in enumerate(queries, 1):
        dists = kb.nearest_distances(q, k)
        if not dists:
            raise KBError("the knowledge base is empty: ingest guidelines first (`oncotui kb ingest`)")
        out.append(dists)
        if progress is not None:
            progress(i, len(queries))
    return out


def gate_values(neighbours: list[list[float]], k: int) -> list[float]:
    """What the gate compares with its threshold: the mean distance of the ``k`` nearest chunks."""
    return [sum(d[:k]) / len(d[:k]) for d in neighbours]


def nearest_distances(kb: Any, queries: list[str], progress: Callable[[int, int], None] | None = None,
                      k: int = 1) -> list[float]:
    return gate_values(neighbour_distances(kb, queries, k, progress), k)


def gate_rates(in_d: list[float], out_d: list[float], threshold: float) -> dict[str, float]:
    return {"in_domain_pass_rate": round(sum(d <= threshold for d in in_d) / len(in_d), 4) if in_d else 0.0,
            "out_of_domain_refusal_rate": round(sum(d > threshold for d in out_d) / len(out_d), 4) if out_d else 0.0,
            "threshold": round(float(threshold), 4)}


def graded_rates(kb: Any, in_queries: list[str], out_queries: list[str], params: Any, min_score: float,
                 min_relevant: int = 1, progress: Callable[[int, int], None] | None = None) -> dict[str, float]:
    """The two refusal points of a consult together: a query gets through when it passes the gate and at least
    ``min_relevant`` kept passages have a cross-encoder logit >= ``min_score`` (the "cross_encoder" grader). The
    consult's one query rewrite is not tried, so an in-domain query that only the rewrite would rescue counts as
    refused here. Keys ``graded_in_domain_pass_rate``, ``graded_out_of_domain_refusal_rate``."""
    total = len(in_queries) + len(out_queries)

    def through(i: int, q: str) -> bool:
        r = kb.retrieve(q, params)
        if progress is not None:
            progress(i, total)
        kept = sum(h.rerank_score is not None and h.rerank_score >= min_score for h in r.hits)
        return r.gate_passed and kept >= max(1, min_relevant)

    passed = sum(through(i, q) for i, q in enumerate(in_queries, 1))
    refused = sum(not through(len(in_queries) + i, q) for i, q in enumerate(out_queries, 1))
    return {"graded_in_domain_pass_rate": round(passed / len(in_queries), 4) if in_queries else 0.0,
            "graded_out_of_domain_refusal_rate": round(refused / len(out_queries), 4) if out_queries else 0.0}


def best_threshold(in_d: list[float], out_d: list[float]) -> tuple[float, float]:
    """(threshold, balanced accuracy) by the rule of the module docstring."""
    if not in_d or not out_d:
        raise KBError("calibration needs in-domain and out-of-domain queries")
    values = sorted(set(in_d) | set(out_d))
    cands = [(a + b) / 2 for a, b in zip(values, values[1:])] or [values[0]]
    cands = [values[0] - 1e-6, *cands, values[-1] + 1e-6]
    scored = []
    for t in cands:
        r = gate_rates(in_d, out_d, t)
        scored.append(((r["in_domain_pass_rate"] + r["out_of_domain_refusal_rate"]) / 2, t))
    best = max(sc for sc, _t in scored)
    tied = [t for sc, t in scored if abs(sc - best) < 1e-12]
    lo, hi = min(tied), max(tied)
    # ties: the candidate closest to the middle of the tied range
    mid = (lo + hi) / 2
    t = min(tied, key=lambda x: abs(x - mid))
    return round(t, 4), round(best, 4)


@dataclass(frozen=True)
class GateChoice:
    """What ``kb calibrate`` picks: gate on the mean distance of the ``k`` nearest chunks at ``threshold``."""

    k: int
    threshold: float
    balanced_accuracy: float
    options: tuple[tuple[int, float, float], ...]  # (k, threshold, balanced accuracy) for every k tried


def choose_gate(in_n: list[list[float]], out_n: list[list[float]], ks: Iterable[int]) -> GateChoice:
    """For each k the best threshold (``best_threshold``); the k with the best balanced accuracy wins, the
    smaller k on a tie. ``in_n``/``out_n``: each query's nearest distances, nearest first (``neighbour_distances``)."""
    options = []
    for k in ks:
        t, bal = best_threshold(gate_values(in_n, k), gate_values(out_n, k))
        options.append((k, t, bal))
    k, t, bal = max(options, key=lambda o: (o[2], -o[0]))
    return GateChoice(k=k, threshold=t, balanced_accuracy=bal, options=tuple(options))


def cross_validated_gate(in_n: list[list[float]], out_n: list[list[float]], ks: Iterable[int],
                         folds: int = 5) -> dict[str, float]:
    """Held-out gate rates: split both sets into ``folds`` interleaved folds; for each, choose k and threshold on
    the other folds (``choose_gate``) and count how the held-out fold's queries fare. Every query is held out once,
    so the rates estimate what the calibrated gate does on questions it was not tuned on."""
    ks = tuple(ks)
    passed = refused = 0
    for f in range(folds):
        fit_in = [d for i, d in enumerate(in_n) if i % folds != f]
        fit_out = [d for i, d in enumerate(out_n) if i % folds != f]
        choice = choose_gate(fit_in, fit_out, ks)
        held_in = gate_values([d for i, d in enumerate(in_n) if i % folds == f], choice.k)
        held_out = gate_values([d for i, d in enumerate(out_n) if i % folds == f], choice.k)
        passed += sum(v <= choice.threshold for v in held_in)
        refused += sum(v > choice.threshold for v in held_out)
    return {"in_domain_pass_rate": round(passed / len(in_n), 4),
            "out_of_domain_refusal_rate": round(refused / len(out_n), 4), "folds": folds}


def percentiles(values: list[float], ps: Iterable[int] = (0, 5, 25, 50, 75, 95, 100)) -> dict[int, float]:
    xs = sorted(values)
    out = {}
    for p in ps:
        if not xs:
            break
        pos = (len(xs) - 1) * p / 100
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        out[p] = xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
    return out


def histogram(in_d: list[float], out_d: list[float], threshold: float, bins: int = 20, width: int = 30) -> str:
    """A text histogram of both distributions on one axis; the bin holding the threshold is marked."""
    allv = in_d + out_d
    if not allv:
        return ""
    lo, hi = min(allv), max(allv)
    step = (hi - lo) / bins or 1.0
    counts_in = [0] * bins
    counts_out = [0] * bins
    for d in in_d:
        counts_in[min(int((d - lo) / step), bins - 1)] += 1
    for d in out_d:
        counts_out[min(int((d - lo) / step), bins - 1)] += 1
    peak = max(max(counts_in), max(counts_out), 1)
    lines = [f"{'distance':>13}  {'in-domain':<{width}} out-of-domain"]
    for b in range(bins):
        a = lo + b * step
        mark = " <- threshold" if a <= threshold < a + step else ""
        bar_in = "#" * round(counts_in[b] / peak * width)
        bar_out = "o" * round(counts_out[b] / peak * width)
        lines.append(f"{a:.3f}-{a + step:.3f}  {bar_in:<{width}} {bar_out}{mark}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Calibration:
    """What ``calibrate_gate`` measured and chose (and stored unless it was a dry run)."""

    choice: GateChoice
    in_values: list[float]  # each in-domain query's gate value (mean distance of choice.k nearest)
    out_values: list[float]
    rates: dict[str, float]  # gate_rates at the chosen threshold (in-sample)
    held_out: dict[str, float] | None  # cross_validated_gate; None for sets under 10 queries


def calibrate_gate(kb: Any, in_queries: list[str], out_queries: list[str], ks: Iterable[int], *,
                   store: bool = True, calibrated_at: str = "", calibration_set: str = "",
                   progress: Callable[[int, int], None] | None = None) -> Calibration:
    """``kb calibrate``: choose k and the threshold (``choose_gate``), estimate them held out, and store them
    with the collection (``calibration_set`` says which questions, e.g. "demo" for the shipped demo sets)."""
    ks = tuple(ks)
    in_n = neighbour_distances(kb, in_queries, max(ks), progress)
    out_n = neighbour_distances(kb, out_queries, max(ks), progress)
    choice = choose_gate(in_n, out_n, ks)
    held = cross_validated_gate(in_n, out_n, ks) if min(len(in_n), len(out_n)) >= 10 else None
    in_d, out_d = gate_values(in_n, choice.k), gate_values(out_n, choice.k)
    if store:
        kb.set_threshold(choice.threshold, gate_k=choice.k, calibrated_at=calibrated_at,
                         calibration_balanced_accuracy=choice.balanced_accuracy, calibration_in=len(in_d),
                         calibration_out=len(out_d), calibration_set=calibration_set)
    return Calibration(choice, in_d, out_d, gate_rates(in_d, out_d, choice.threshold), held)


DEMO_CALIBRATION = "demo"  # the calibration_set recorded when the shipped demo question sets chose the gate


def calibrate_demo(kb: Any, ks: Iterable[int], calibrated_at: str = "") -> Calibration | None:
    """Calibrate the gate on the shipped demo question sets when the collection holds only the demo documents and
    no calibration on other questions: the built-in threshold was chosen on the 80-document PDQ corpus and refuses
    short in-domain questions on the 12 small demo documents. None when it does not apply."""
    from kb.store import DEMO_CALIBRATION_DIR, DEMO_DIR

    sources = [Path(d["source"]) for d in kb.sources()]
    demo = DEMO_DIR.resolve()
    if not sources or any(demo not in p.resolve().parents for p in sources):
        return None
    if kb.calibrated_threshold() is not None and kb.metadata.get("calibration_set") != DEMO_CALIBRATION:
        return None  # someone calibrated on their own questions: keep theirs
    queries = [[r["query"] for r in read_jsonl(DEMO_CALIBRATION_DIR / name)]
               for name in ("in_domain.jsonl", "out_of_domain.jsonl")]
    return calibrate_gate(kb, queries[0], queries[1], ks, calibrated_at=calibrated_at,
                          calibration_set=DEMO_CALIBRATION)


def gate_after_ingest(kb: Any, configured_threshold: float, calibrated_at: str = "") -> str | None:
    """The gate step after an ingest (`kb ingest` and the app's ingest screen), as one message: calibrate on the
    demo question sets when only the demo set is indexed (``calibrate_demo``); otherwise a note when the gate runs
    on a threshold not calibrated on this collection's own questions. None: nothing to say (a threshold set in
    config wins; an empty collection)."""
    if configured_threshold > 0 or kb.count() == 0:
        return None
    from kb.store import GATE_KS

    cal = calibrate_demo(kb, GATE_KS, calibrated_at=calibrated_at)
    if cal is not None:
        return (f"gate calibrated on the demo question sets: threshold {cal.choice.threshold:.4f} on the mean of the "
                f"{cal.choice.k} nearest chunk(s); in-domain pass {cal.rates['in_domain_pass_rate']:.3f}, "
                f"out-of-domain refusal {cal.rates['out_of_domain_refusal_rate']:.3f}.")
    how = ("the built-in default threshold" if kb.calibrated_threshold() is None
           else "a threshold calibrated on the demo questions" if kb.metadata.get("calibration_set") == DEMO_CALIBRATION
           else "")
    return (f"note: the Stage 2 gate uses {how}; calibrate it on questions about your guidelines: "
            "`oncotui kb calibrate --in IN.jsonl --out OUT.jsonl`") if how else None
