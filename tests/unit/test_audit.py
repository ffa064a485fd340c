"""The audit log: every consult step, decision and export is chained; plain-SQL tampering is caught and named."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine.audit import GENESIS, canonical_json, entry_hash
from engine.graph import decision
from tests.fakes import collect, make_engine

TIER1 = "Pancreatic adenocarcinoma, what are the first-line options?"
TIER2 = ("58-year-old with stage IV pancreatic adenocarcinoma, KRAS G12D and germline BRCA2 mutation, ECOG 1. "
         "First-line options?")
REVIEWER = {"hitl.clinician": "dr.ask", "hitl.reviewers": [{"id": "dr.review", "role": "oncologist"}]}


def consults(tmp_path: Path) -> object:
    """One released Tier 1 consult, one Tier 2 consult approved by a reviewer."""
    engine, _, _ = make_engine(tmp_path, overrides=REVIEWER)
    collect(lambda: engine.stream("PT-0001", TIER1))
    collect(lambda: engine.stream("PT-0002", TIER2))
    collect(lambda: engine.resume("PT-0002", decision("approve", "dr.review", "agree")))
    return engine


def tamper(db: Path, sql: str, args: list | tuple = ()) -> None:
    """What someone with the database file and the sqlite3 shell can do: drop the guards, then edit."""
    con = sqlite3.connect(db)
    con.execute("drop trigger if exists audit_log_no_update")
    con.execute("drop trigger if exists audit_log_no_delete")
    con.execute(sql, args)
    con.commit()
    con.close()


def test_normal_consults_verify_clean_and_cover_every_step(tmp_path):
    engine = consults(tmp_path)
    log = engine.store.audit
    result = log.verify()
    entries = log.entries()
    assert result.ok and result.entries == len(entries) and "chain intact" in result.message
    assert entries[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in zip(entries, entries[1:]))
    kinds = [e.kind for e in entries]
    assert kinds.count("consult") == 2 and kinds.count("decision") == 1
    # one node entry per checkpoint, bound to it by hash
    checkpoints = engine.store.db.execute("select count(*) from checkpoints").fetchone()[0]
    assert kinds.count("node") == checkpoints
    t2 = [e.data for e in log.entries("PT-0002") if e.kind == "node"]
    assert [d["node"] for d in t2][-3:] == ["hitl_gate", "hitl_decision", "formatter"]
    assert t2[-3]["summary"]["hitl_status"] == "pending" and t2[-1]["summary"]["routing"]["tier"] == 2
    asked = [e for e in entries if e.kind == "consult"][0]
    assert asked.actor == "dr.ask" and asked.data["clinician"] == "dr.ask"


def test_entries_hold_summaries_and_hashes_never_the_note(tmp_path):
    engine, _, _ = make_engine(tmp_path, overrides=REVIEWER)
    collect(lambda: engine.stream("PT-0001", TIER1))
    rows = engine.store.db.execute("select payload from audit_log").fetchall()
    text = " ".join(r[0] for r in rows)
    assert TIER1 not in text and "first-line options" not in text
    case = engine.store.latest("PT-0001").state.case_text
    node = [e.data for e in engine.store.audit.entries() if e.kind == "node"][0]
    assert node["summary"]["case_sha256"] == __import__("hashlib").sha256(case.encode()).hexdigest()


def test_the_log_refuses_update_and_delete(tmp_path):
    engine = consults(tmp_path)
    con = sqlite3.connect(engine.settings.db_path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("update audit_log set actor = 'someone' where seq = 2")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("delete from audit_log where seq = 2")
    con.close()
    assert engine.store.audit.verify().ok


def test_a_row_edited_with_plain_sql_is_named(tmp_path):
    engine = consults(tmp_path)
    [dec] = [e for e in engine.store.audit.entries() if e.kind == "decision"]
    forged = json.dumps({**dec.data, "note": "I never saw this"})
    tamper(engine.settings.db_path, "update audit_log set payload = ? where seq = ?", [forged, dec.seq])
    result = engine.store.audit.verify()
    assert not result.ok and result.seq == dec.seq and result.kind == "decision"
    assert f"entry #{dec.seq} (decision)" in result.message and "altered" in result.message


def test_an_edit_that_recomputes_its_own_hash_is_still_named(tmp_path):
    engine = consults(tmp_path)
    target = engine.store.audit.entries()[3]
    fields = {**target.__dict__, "actor": "dr.nobody"}
    tamper(engine.settings.db_path, "update audit_log set actor = ?, hash = ? where seq = ?",
           ["dr.nobody", entry_hash(fields), target.seq])
    result = engine.store.audit.verify()
    assert not result.ok and result.seq == target.seq and result.kind == target.kind


def test_deleted_rows_are_detected_in_the_middle_and_at_the_end(tmp_path):
    engine = consults(tmp_path)
    db = engine.settings.db_path
    total = len(engine.store.audit.entries())
    tamper(db, "delete from audit_log where seq = ?", [total])
    result = engine.store.audit.verify()
    assert not result.ok and result.seq == total and "deleted" in result.message
    tamper(db, "delete from audit_log where seq = 5")
    result = engine.store.audit.verify()
    assert not result.ok and result.seq == 5 and "entry #5 is missing" in result.message


def test_an_inserted_row_is_detected(tmp_path):
    engine = consults(tmp_path)
    last = engine.store.audit.entries()[-1]
    payload = canonical_json({"action": "approve", "reviewer": "dr.forged"})
    tamper(engine.settings.db_path, "insert into audit_log values (?, ?, 'decision', 'PT-0001', 'x', 'dr.forged', "
           "?, ?, ?)", [last.seq + 1, last.at, payload, last.hash, "0" * 64])
    result = engine.store.audit.verify()
    assert not result.ok and result.seq == last.seq + 1 and result.kind == "decision"


def test_a_checkpoint_edited_after_the_fact_is_detected(tmp_path):
    engine = consults(tmp_path)
    con = sqlite3.connect(engine.settings.db_path)
    state = con.execute("select state from checkpoints where thread_id = 'PT-0002' order by rowid desc").fetchone()[0]
    con.execute("update checkpoints set state = ? where state = ?", [state.replace("FOLFIRINOX", "wonderdrug"),
                                                                     state])
    con.commit()
    con.close()
    result = engine.store.audit.verify()
    assert not result.ok and result.kind == "node" and "checkpoint" in result.problem and "altered" in result.problem


def test_an_approval_row_edited_after_signing_is_detected(tmp_path):
    engine = consults(tmp_path)
    [item] = engine.store.approvals(None)
    con = sqlite3.connect(engine.settings.db_path)
    con.execute("update approvals set reviewer = 'dr.boss' where id = ?", [item.id])
    con.commit()
    con.close()
    result = engine.store.audit.verify()
    assert not result.ok and result.kind == "decision" and item.id in result.problem


def test_export_is_recorded_with_the_file_hash(tmp_path):
    from oncotui.export import export_consult

    engine = consults(tmp_path)
    path = export_consult(engine.store, "PT-0002", tmp_path / "exports")
    [entry] = engine.store.audit.entries(kind="export")
    assert entry.thread_id == "PT-0002" and entry.data["file"] == path.name
    assert entry.data["sha256"] == __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    text = path.read_text()
    assert "decided by dr.review (oncologist)" in text and "asked by dr.ask" in text
    assert engine.store.audit.verify().ok


def test_an_approval_forged_in_the_database_is_detected(tmp_path):
    """QA: a pending item set to approved by plain SQL (no decision in the log) passed `audit verify`; `hitl
    show` then said "approved by dr.forger"."""
    engine, _, _ = make_engine(tmp_path, overrides=REVIEWER)
    collect(lambda: engine.stream("PT-0002", TIER2))
    [item] = engine.store.approvals("pending")
    assert engine.store.audit.verify().ok
    tamper(engine.settings.db_path,
           "update approvals set status = 'approved', reviewer = 'dr.forger' where id = ?", [item.id])
    result = engine.store.audit.verify()
    assert not result.ok and result.kind == "decision" and item.id in result.problem
    assert "no reviewer's decision is in the log" in result.message and result.seq is None


def test_a_consult_released_by_hand_is_detected(tmp_path):
    engine, _, _ = make_engine(tmp_path, overrides=REVIEWER)
    collect(lambda: engine.stream("PT-0002", TIER2))
    tamper(engine.settings.db_path, "update consults set status = 'released'")
    result = engine.store.audit.verify()
    assert not result.ok and "'released' but its last logged step left it 'pending_review'" in result.problem


def test_a_log_emptied_with_its_head_is_detected(tmp_path):
    """Deleting every entry and the head left "0 entries, chain intact" while the consults stayed."""
    engine = consults(tmp_path)
    db = engine.settings.db_path
    tamper(db, "delete from audit_log")
    tamper(db, "delete from audit_head")
    result = engine.store.audit.verify()
    assert not result.ok and result.entries == 0 and "has no entry in the log" in result.problem
