"""Audit: full consults over a question set, written as text a person reads and two runs can be compared by.

For each question: the outcome, the extracted facts, the retrieval query, the passages (relevance, distance,
section), the first 14 sentences offered to an evidence-locked model in their order, the sentences it picked, each
claim's release state (with the first reason of one not plainly supported), where the first sentence naming all
of a row's ``answer_terms`` was offered and whether a released or reviewable claim names them, and a refusal's
reason. Runs on the configured knowledge base (e.g. ``ONCOTUI_PATHS__DATA_DIR=/tmp/pdq-data`` after ``oncotui kb
ingest ../shared/corpus/pdq`` and ``oncotui kb calibrate ...``) with a throw-away consult database, so it never
touches your patients. kb/EVAL.md rounds 10-11 were measured with it.

Run:  .venv/bin/python bench/consult_audit.py run SET [SET ...] OUT.txt [--only ID,ID]
      .venv/bin/python bench/consult_audit.py compare BEFORE.txt AFTER.txt
      .venv/bin/python bench/consult_audit.py offered SET [SET ...] [--json OUT.json]
SET: JSONL with "query" (and optional "id"; else the file's initial and the row number: "c7" for cases.jsonl's
seventh), as kb/case_eval/*.jsonl, or lines "ID|question", as kb/case_eval/everyday.txt. The audit of kb/EVAL.md
rounds 11-12 is all three: ``run kb/case_eval/everyday.txt kb/case_eval/cases.jsonl kb/case_eval/heldout.jsonl
OUT.txt`` (108 consults, ~13 min on a 2-core machine).
``compare`` prints each question whose outcome or picked sentences changed, then the totals. ``offered`` stops each
consult before the Specialist (no LLM: ~1 min for the 138) and prints where the answer terms stand in the offered
order: first, first three, first five, offered at all (kb/EVAL.md round 21).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHOWN = 14  # offered sentences written per question


def questions(path: Path) -> list[tuple[str, str, list[str]]]:
    """(id, question, answer terms) of each row; the terms are a JSONL row's ``answer_terms`` (lower case), else []."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            row = json.loads(line)
            terms = [str(t).lower() for t in row.get("answer_terms") or []]
            out.append((str(row.get("id", f"{path.stem[:1]}{n}")), row["query"], terms))
        else:
            qid, _, text = line.partition("|")
            out.append((qid.strip(), text.strip(), []))
    return out


def _names_all(text: str, terms: list[str]) -> bool:
    return all(t in text.lower() for t in terms)


def _answer_at(offered: dict[str, tuple[str, str]], passages: dict[str, Any], terms: list[str]) -> int:
    """1-based place of the first offered sentence naming all ``terms``, counting an options item's drugs listed
    under it (``casefit.bullets_under``, as the answer shows them); 0 when none does."""
    return next((k for k, (sid, (_, sentence)) in enumerate(offered.items(), 1)
                 if _names_all(_seen(passages, sid, sentence), terms)), 0)


def _seen(passages: dict[str, Any], sid: str, text: str) -> str:
    from engine.casefit import bullets_under

    p = passages.get(sid.rsplit(".s", 1)[0])
    return " ".join([text, *(bullets_under(p, sid) if p else [])])


async def offered_only(set_paths: list[Path], out_json: Path | None) -> None:
    from engine.casefit import locked_candidates
    from engine.checkpoint import CheckpointStore
    from engine.config import load_settings
    from engine.graph import NODES, Engine

    class _Stop(Exception):
        pass

    captured: dict[str, Any] = {}

    async def stop(state: Any, ctx: Any) -> Any:  # in place of the Specialist: keep the state, draft nothing
        captured["state"] = state
        raise _Stop()

    logging.getLogger("oncotui.engine").setLevel(logging.ERROR)  # each stop is logged as a failed node
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(load_settings(None), store=CheckpointStore(Path(tmp) / "offered.db"),
                        nodes=dict(NODES, specialist=stop))
        for n, (qid, text, terms) in enumerate(q for path in set_paths for q in questions(path)):
            if not terms:
                continue
            captured.clear()
            async for _ in engine.stream(f"PT-{9000 + n:04d}", text):
                pass
            st = captured.get("state")
            relevant = [p for p in st.retrieval.passages if p.relevant] if st and st.retrieval else []
            offered, _ = locked_candidates(relevant, st.facts, st.case_text) if st else ({}, {})
            rows[qid] = {"at": _answer_at(offered, {p.id: p for p in relevant}, terms), "terms": terms,
                         "offered": [[sid, sentence] for sid, (_, sentence) in offered.items()]}
    ats = [r["at"] for r in rows.values()]
    print(f"{len(ats)} questions with answer terms: first {sum(a == 1 for a in ats)}, first three "
          f"{sum(0 < a <= 3 for a in ats)}, first five {sum(0 < a <= 5 for a in ats)}, "
          f"offered {sum(a > 0 for a in ats)}")
    if out_json:
        out_json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


async def run(set_paths: list[Path], out_path: Path, only: set[str]) -> None:
    from engine.casefit import locked_candidates
    from engine.checkpoint import CheckpointStore
    from engine.config import load_settings
    from engine.graph import Engine

    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(load_settings(None), store=CheckpointStore(Path(tmp) / "audit.db"))
        lines: list[str] = []
        for n, (qid, text, terms) in enumerate(q for path in set_paths for q in questions(path)):
            if only and qid not in only:
                continue
            pid, status = f"PT-{9000 + n:04d}", "?"
            async for ev in engine.stream(pid, text):
                if ev.kind == "Final":
                    status = ev.status
                elif ev.kind == "HitlRequired":
                    status = "pending_review"
            cp = engine.store.latest(pid)
            assert cp is not None
            st, f = cp.state, cp.state.facts
            lines.append(f"=== {qid} STATUS {status} :: {text[:150]}")
            lines.append(f"FACTS {f.cancer_type} | {f.stage} | {f.markers} | line={f.line} recurrent={f.recurrent} "
                         f"sites={f.subsites}")
            if st.retrieval:
                lines.append(f"QUERY {st.retrieval.query} | rewritten={st.retrieval.rewritten_query}")
                for p in st.retrieval.passages:
                    lines.append(f"  {p.id} rel={p.relevant} other={p.other_cancer} {p.origin} d={p.distance:.3f} "
                                 f"{p.title[:40]} :: {p.section[:110]}")
                offered, _ = locked_candidates([p for p in st.retrieval.passages if p.relevant], f)
                for k, (sid, (_, sentence)) in enumerate(list(offered.items())[:SHOWN], 1):
                    lines.append(f"  [S{k}] {sid} {sentence[:170]}")
            else:
                offered = {}
            for rec in st.draft.recommendations if st.draft else ():
                lines.append(f"CHOSE {rec.sentence_ids} {rec.text[:160]}")
            for c in st.ledger.claims if st.ledger else ():
                why = f" ~ {c.reasons[0][:120]}" if c.reasons and c.state != "supported" else ""
                lines.append(f"CLAIM {c.state} {c.sentence_ids} {c.text[:100]}{why}")
            if terms:  # the set's answer terms: where the first sentence naming them all was offered, and drafted
                # (an options item counts with the drugs listed under it, as the answer shows them)
                passages = {p.id: p for p in st.retrieval.passages} if st.retrieval else {}
                at = _answer_at(offered, passages, terms)
                claims = [c for c in (st.ledger.claims if st.ledger else ()) if c.state in ("supported", "qualified")]
                drafted = any(_names_all(_seen(passages, c.sentence_ids[0], c.text) if len(c.sentence_ids) == 1
                                         else c.text, terms) for c in claims)
                lines.append(f"ANSWER {'+'.join(terms)} offered_at={at or '-'} drafted={'yes' if drafted else 'no'}")
            if st.refusal_reason:
                lines.append(f"REFUSED {st.refusal_reason[:200]}")
            print(f"{qid} {status}", flush=True)
    out_path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def blocks(path: Path) -> dict[str, dict[str, list[str] | str]]:
    out: dict[str, dict[str, list[str] | str]] = {}
    cur: dict[str, list[str] | str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("=== "):
            cur = {"status": line.split()[3], "chose": [], "offered": []}
            out[line.split()[1]] = cur
        elif cur and line.startswith("CHOSE "):
            cur["chose"].append(line[6:].strip()[:170])
        elif cur and re.match(r"  \[S\d+\] ", line):
            cur["offered"].append(line.split()[1])
        elif cur and line.startswith("ANSWER "):
            cur["answer"] = line[line.index(" offered_at=") + 1:]  # terms may hold spaces ("active surveillance")
    return out


def compare(before: Path, after: Path) -> None:
    a, b = blocks(before), blocks(after)
    for qid, x in a.items():
        y = b.get(qid)
        if y is None or (x["status"], x["chose"]) == (y["status"], y["chose"]):
            continue
        print(f"##### {qid} {x['status']} -> {y['status']}")
        print("\n".join([f"  - {c}" for c in x["chose"] if c not in y["chose"]]
                        + [f"  + {c}" for c in y["chose"] if c not in x["chose"]]))
    for qid, x in a.items():
        if (y := b.get(qid)) and "answer" in x and "answer" in y and x["answer"] != y["answer"]:
            print(f"##### {qid} answer terms: {x['answer']} -> {y['answer']}")
    for name, run_ in (("before", a), ("after", b)):
        first = sum(1 for r in run_.values() if r["offered"] and r["chose"]
                    and str(r["chose"][0]).startswith(f"('{r['offered'][0]}',"))
        answers = [str(r["answer"]) for r in run_.values() if "answer" in r]
        top5 = sum(1 for x in answers if (at := x.split()[0].removeprefix("offered_at=")).isdigit() and int(at) <= 5)
        print(f"{name}: {dict(Counter(str(r['status']) for r in run_.values()))}; the first-offered sentence "
              f"picked first in {first} of {sum(1 for r in run_.values() if r['offered'])}"
              + (f"; answer terms offered in the first 5 for {top5} of {len(answers)}, drafted for "
                 f"{sum(1 for x in answers if x.endswith('drafted=yes'))}" if answers else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run every question of each SET as a consult and write OUT")
    r.add_argument("sets", type=Path, nargs="+", metavar="SET")
    r.add_argument("out", type=Path)
    r.add_argument("--only", default="", help="comma-separated question ids")
    o = sub.add_parser("offered", help="where the answer terms stand in the offered order (no LLM)")
    o.add_argument("sets", type=Path, nargs="+", metavar="SET")
    o.add_argument("--json", type=Path, default=None, help="write each question's offered list here")
    c = sub.add_parser("compare", help="what changed between two runs")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.cmd == "run":
        asyncio.run(run(args.sets, args.out, {x for x in args.only.split(",") if x}))
    elif args.cmd == "offered":
        asyncio.run(offered_only(args.sets, args.json))
    else:
        compare(args.before, args.after)


if __name__ == "__main__":
    main()
