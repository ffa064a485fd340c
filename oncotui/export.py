"""Export a consult as Markdown: case (redacted), routing, report, every passage with its scores, approval record.

Pure functions over the store, so the app, a test or a future CLI command produce the same file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.nodes.formatter import section_label
from engine.safety import display_text, instruction_like
from engine.signoff import os_user


def consult_markdown(store: Any, thread_id: str, consult_id: str | None = None) -> str:
    from engine.checkpoint import StoreError

    try:
        cp = store.latest(thread_id, consult_id)
    except StoreError as exc:  # a damaged checkpoint: the callers report a LookupError as "nothing to export"
        raise LookupError(str(exc)) from None
    if cp is None:
        raise LookupError(f"{thread_id} has no stored consult to export.")
    s = cp.state
    row = store.consult(s.consult_id) or {}
    out = [f"# Consult {s.thread_id} · {s.consult_id}", "",
           (f"_Exported {datetime.now(UTC).isoformat(timespec='seconds')} · started {row.get('started_at', '?')} · "
            f"status {row.get('status', '?')}. Decision support only; the treating clinician decides._"), "",
           "## Case (identifiers redacted)", "", s.case_text or "_(not stored)_", ""]
    f = s.facts
    out += ["## Extracted facts", "",
            f"- Cancer type: {f.cancer_type or 'not stated'}",
            # an extent without a group ("localized", "limited-stage") is the stage as stated (as the patient pane)
            f"- Stage: {f.stage} ({f.stage_text})" if f.stage and f.stage_text else
            f"- Stage: {f.stage or f.stage_text or 'not stated'}",
            f"- Markers: {', '.join(f.markers) or 'none stated'}",
            f"- Prior treatments: {', '.join(f.prior_treatments) or 'none stated'}",
            f"- Performance status: {f.performance_status or 'not stated'}",
            f"- Age: {f.age_text or 'not stated'}",
            f"- Fitness: {'; '.join(f.fitness) or 'not stated'}"]
    if f.subsites:  # only the oral cavity and larynx have sites the guidelines treat apart
        out.append(f"- Site: {', '.join(f.subsites)}")
    # shown when stated, as in the patient pane: each decides which guideline lines apply (case fit)
    out += [f"- {name}: {value}" for name, value in (
        ("Line of therapy", f.line_text), ("Progressed after", ", ".join(f.progressed_after)),
        ("Avoided (toxicity, resistance or contraindication)", ", ".join(f.avoided_names)),
        ("Groups", ", ".join(f.groups))) if value]
    out.append("")
    if s.routing:
        r = s.routing
        out += ["## Routing", "", f"Score {r.score:.2f} → Tier {r.tier}"
                + (f" (override; router said Tier {r.auto_tier})" if r.override else ""), ""]
        out += [f"- +{x.weight:.2f} {x.name}: {x.detail}" for x in r.factors] + [""]
    out += ["## Answer", ""]
    if cp.next_node == "__end__" and s.report:
        out += [s.report, ""]
    elif cp.next_node == "__halt__":
        out += ["_Waiting for a reviewer: nothing released yet._", ""]
    else:
        out += [f"_Not finished (stopped before {cp.next_node})._", ""]
    if s.decision is not None and s.decision.action == "approve_with_edits":
        out += [f"_The answer above is the text reviewer {s.decision.reviewer} edited and signed; the claims below "
                "are the model's draft as governed before the edit._", ""]
    out += claims_markdown(s.ledger, released=cp.next_node == "__end__")
    out += ["## Retrieved passages", ""]  # the report above has its own "Evidence" list of cited passages
    if s.retrieval is None:
        out += ["_No retrieval ran._", ""]
    else:
        rv = s.retrieval
        cited = {e for rec in (s.draft.recommendations if s.draft else ()) for e in rec.evidence}
        out += [(f"rag_confidence {rv.rag_confidence:.2f} · gate {'passed' if rv.gate_passed else 'refused'} · "
                 f"query: {rv.rewritten_query or rv.query}"), ""]
        if not rv.gate_passed and rv.closest_title:
            out += [f"Closest passage: {rv.closest_title} at distance {rv.closest_distance}", ""]
        for p in rv.passages:
            grade = {True: "relevant", False: "not relevant", None: "ungraded"}[p.relevant]
            where = section_label(p.section) + (f", p. {p.page}" if p.page else "")
            rerank = "–" if p.rerank_score is None else f"{p.rerank_score:.2f}"
            flags = ((" · about another cancer: not used for this case" if p.other_cancer else "")
                     + (" · **holds text addressing the system (a possible prompt injection); those sentences were "
                        "not used**" if instruction_like(p.text) else ""))
            out += [f"### [{p.id}]{' (cited)' if p.id in cited else ''} {p.title} — {where}", "",
                    f"Source {p.source} · distance {p.distance:.3f} · rerank {rerank} · {grade}{flags}", ""]
            out += ["> " + line if line else ">" for line in p.text.splitlines()] + [""]
    out += ["## Approval record", ""]
    items = [a for a in store.approvals(None) if a.consult_id == s.consult_id]
    if not items:
        out += ["_No reviewer sign-off was required._", ""]
    for a in items:
        out += [f"- {a.id}: **{a.status}**; reasons: {'; '.join(a.reasons) or '-'}; queued {a.created_at}"
                + (f" (asked by {a.clinician})" if a.clinician else "")
                + (f"; decided by {a.reviewer}" + (f" ({a.role})" if a.role else "") + f" at {a.decided_at}"
                   if a.reviewer else "")
                + (f"; note: {a.note}" if a.note else "")]
        record = store.decision_record(a.id) if a.status != "pending" else None
        if record is not None:  # what the signature covers, to check against the audit log
            out += [f"  - signed from OS account {record.os_user}; draft sha256 {record.draft_sha256}; "
                    f"{len(record.evidence)} evidence passages hashed"]
    out.append("")
    return "\n".join(out)


def claims_markdown(ledger: Any, *, released: bool = True) -> list[str]:
    """Every claim of the ledger with its release state, support, citations and reason (blocked ones
    included). ``released``: False while the consult waits for a reviewer or stopped: the claims are a draft
    (as `hitl show` says), whatever state the governor gave them."""
    heading = "## Claims" if released else "## Draft claims, NOT YET RELEASED"
    if ledger is None:
        return [heading, "", "_No claim ledger (the consult stopped before the governor)._", ""]
    out = [heading, ""]
    if not released:
        out += ["_Nothing below is released: the consult waits for a reviewer or has not finished._", ""]
    out += [f"Support method: {ledger.method}" + (" · evidence-locked" if ledger.evidence_locked else ""), "",
           "| claim | state | support | cites | text | reason |", "| --- | --- | --- | --- | --- | --- |"]
    for c in ledger.claims:
        cells = [c.id, f"**{c.state}**", f"{c.support:.2f}", ", ".join(c.sentence_ids or c.evidence) or "–",
                 display_text(c.text), "; ".join(c.reasons) or "–"]
        out.append("| " + " | ".join(x.replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    out.append("")
    out += [f"- Contradiction {x.claim_id} vs {x.other} ({'strong' if x.strong else 'possible'}): {x.detail}"
            for x in ledger.contradictions]
    out += [f"- Withheld: {w}" for w in ledger.withheld_text]
    return out + ([""] if ledger.contradictions or ledger.withheld_text else [])


def export_consult(store: Any, thread_id: str, directory: Path, consult_id: str | None = None) -> Path:
    """Write the export under ``directory`` (created); falls back to the working directory if it is read-only."""
    text = consult_markdown(store, thread_id, consult_id)
    cp = store.latest(thread_id, consult_id)
    name = f"{thread_id}-{cp.state.consult_id}.md"
    for folder in (directory, Path.cwd()):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text, encoding="utf-8")
            store.record_export(thread_id, cp.state.consult_id, path.name, text, os_user())
            return path
        except OSError:
            continue
    raise OSError(f"could not write {name} to {directory} or the working directory")
