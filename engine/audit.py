"""Append-only, hash-chained audit log in the consult database.

Each entry holds the previous entry's hash; its own hash is sha256 over a canonical JSON of every field (prev_hash
included), so changing, inserting or deleting a row breaks the chain at that row. SQLite triggers refuse UPDATE
and DELETE on the table; ``verify`` catches anyone who drops them. A one-row head (last seq and hash) makes
deleting the newest entries visible too. Someone who rewrites the whole chain and the head can still go unnoticed:
copy ``verify``'s last hash somewhere else (a printout, another machine) to anchor it.

Entries: ``consult`` (who asked), ``node`` (each checkpointed node's redacted state summary, bound to the
checkpoint by the sha256 of its stored JSON), ``decision`` (a HITL signature), ``export`` (a written report).
States are already redacted (``ConsultState.to_dict`` drops the raw note); entries never hold the case text itself.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

GENESIS = "0" * 64
FIELDS = ("seq", "at", "kind", "thread_id", "consult_id", "actor", "payload", "prev_hash")


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=lambda o: asdict(o) if is_dataclass(o) else str(o))  # type: ignore[arg-type]


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_hash(fields: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the entry's fields (payload as its stored text, prev_hash included)."""
    return sha256_hex(canonical_json({k: fields[k] for k in FIELDS}))


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    at: str
    kind: str  # consult | node | decision | export
    thread_id: str
    consult_id: str
    actor: str
    payload: str  # canonical JSON
    prev_hash: str
    hash: str

    @property
    def data(self) -> dict[str, Any]:
        return json.loads(self.payload)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Verification:
    entries: int
    ok: bool
    seq: int | None = None  # the first entry found wrong
    kind: str = ""
    problem: str = ""
    head_hash: str = GENESIS

    @property
    def message(self) -> str:
        if self.ok:
            return f"{self.entries} entries, chain intact; head {self.head_hash}"
        if self.seq is None:  # a record the log never saw: it was written around the engine
            return f"audit log tampered: {self.problem}"
        where = f"entry #{self.seq}" + (f" ({self.kind})" if self.kind else "")
        return f"audit log tampered at {where}: {self.problem}"


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction taken up front, so concurrent writers (app and CLI) cannot fork the chain."""
    if conn.in_transaction:
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


class AuditLog:
    def __init__(self, conn: sqlite3.Connection, create: bool = True) -> None:
        self.conn = conn
        if not create:  # a database opened read-only: its tables are there, or it holds no log to read
            return
        conn.executescript("""
            create table if not exists audit_log (
                seq integer primary key, at text not null, kind text not null, thread_id text not null,
                consult_id text not null, actor text not null, payload text not null, prev_hash text not null,
                hash text not null);
            create index if not exists audit_log_thread on audit_log(thread_id);
            create table if not exists audit_head (id integer primary key check (id = 1), seq integer not null,
                hash text not null);
            create trigger if not exists audit_log_no_update before update on audit_log
                begin select raise(abort, 'the audit log is append-only'); end;
            create trigger if not exists audit_log_no_delete before delete on audit_log
                begin select raise(abort, 'the audit log is append-only'); end;
        """)

    def append(self, kind: str, *, thread_id: str, consult_id: str, actor: str, payload: dict[str, Any],
               at: str) -> AuditEntry:
        """Add one entry. Call inside ``immediate(conn)`` so it commits with the write it records."""
        if not self.conn.in_transaction:
            raise RuntimeError("AuditLog.append needs an open write transaction (use audit.immediate)")
        row = self.conn.execute("select seq, hash from audit_log order by seq desc limit 1").fetchone()
        seq, prev = (row[0] + 1, row[1]) if row else (1, GENESIS)
        fields = {"seq": seq, "at": at, "kind": kind, "thread_id": thread_id, "consult_id": consult_id,
                  "actor": actor, "payload": canonical_json(payload), "prev_hash": prev}
        digest = entry_hash(fields)
        self.conn.execute(f"insert into audit_log ({', '.join(FIELDS)}, hash) values ({', '.join('?' * 9)})",
                          [*(fields[k] for k in FIELDS), digest])
        self.conn.execute("insert into audit_head (id, seq, hash) values (1, ?, ?) "
                          "on conflict(id) do update set seq = excluded.seq, hash = excluded.hash", [seq, digest])
        return AuditEntry(**fields, hash=digest)

    def entries(self, thread_id: str | None = None, kind: str | None = None) -> list[AuditEntry]:
        where, args = [], []
        if thread_id:
            where.append("thread_id = ?")
            args.append(thread_id)
        if kind:
            where.append("kind = ?")
            args.append(kind)
        sql = f"select {', '.join(FIELDS)}, hash from audit_log"
        sql += (" where " + " and ".join(where) if where else "") + " order by seq"
        return [AuditEntry(*row) for row in self.conn.execute(sql, args)]

    def verify(self) -> Verification:
        """Recompute the chain; the first entry that is altered, missing or out of place is named."""
        prev, expected, count = GENESIS, 1, 0
        for e in self.entries():
            if e.seq != expected:  # seq is the primary key, so only a gap is possible here
                return Verification(count, False, expected, "",
                                    f"entry #{expected} is missing (deleted): the next one is #{e.seq}")
            if entry_hash(asdict(e)) != e.hash:
                return Verification(count, False, e.seq, e.kind, "its contents no longer match its hash (altered)")
            if e.prev_hash != prev:
                return Verification(count, False, e.seq - 1, self._kind(e.seq - 1),
                                    f"entry #{e.seq} holds a different previous hash: #{e.seq - 1} was altered "
                                    f"and re-hashed, or #{e.seq} was inserted")
            prev, expected, count = e.hash, expected + 1, count + 1
        head = self.conn.execute("select seq, hash from audit_head where id = 1").fetchone()
        head_seq, head_hash = head if head else (0, GENESIS)
        if head_seq != count or head_hash != prev:
            if head_seq > count:
                return Verification(count, False, count + 1, "",
                                    f"the log ends at #{count} but {head_seq} entries were written (deleted)")
            return Verification(count, False, count, self._kind(count),
                                "the last entry does not match the recorded head (altered or inserted)")
        for check, kind in ((self._checkpoint_mismatch, "node"), (self._approval_mismatch, "decision")):
            problem = check()
            if problem is not None:
                return Verification(count, False, problem[0], kind, problem[1])
        unlogged = self._unlogged()
        if unlogged is not None:
            return Verification(count, False, None, unlogged[0], unlogged[1])
        return Verification(count, True, head_hash=prev)

    def _unlogged(self) -> tuple[str, str] | None:
        """The other direction: every consult, checkpoint and decided approval is written with its entry in
        one transaction, so a row without one was written (or its entries deleted) around the engine: an
        approval set to "approved" in the database, or a log emptied with its head while the consults stay. A
        consult's status must also be the one its last checkpoint's entry recorded ("released" set by hand)."""
        logged: dict[str, set[Any]] = {"consult": set(), "node": set(), "decision": set()}
        last_status: dict[str, str] = {}
        for e in self.entries():
            if e.kind == "consult":
                logged["consult"].add(e.consult_id)
            elif e.kind == "node":
                logged["node"].add((e.consult_id, e.data.get("checkpoint")))
                last_status[e.consult_id] = str(e.data.get("status"))
            elif e.kind == "decision":
                logged["decision"].add(e.data.get("approval_id"))
        for (cid,) in self.conn.execute("select id from consults order by started_at"):
            if cid not in logged["consult"]:
                return "consult", (f"consult {cid} has no entry in the log (its entries were deleted, or it "
                                   "was added around the engine)")
        for cid, seq in self.conn.execute("select consult_id, seq from checkpoints order by rowid"):
            if (cid, seq) not in logged["node"]:
                return "node", f"checkpoint {seq} of consult {cid} has no entry in the log"
        for aid, status in self.conn.execute("select id, status from approvals where status != 'pending'"):
            if aid not in logged["decision"]:
                return "decision", f"approval item {aid} is {status} but no reviewer's decision is in the log"
        for cid, status in self.conn.execute("select id, status from consults"):
            if cid in last_status and status != last_status[cid]:
                return "node", f"consult {cid} is {status!r} but its last logged step left it {last_status[cid]!r}"
        return None

    def _kind(self, seq: int) -> str:
        row = self.conn.execute("select kind from audit_log where seq = ?", [seq]).fetchone()
        return str(row[0]) if row else ""

    def _checkpoint_mismatch(self) -> tuple[int, str] | None:
        """Node entries bind the checkpoint they recorded: a checkpoint edited afterwards shows up here."""
        for e in self.entries(kind="node"):
            data = e.data
            row = self.conn.execute("select state from checkpoints where consult_id = ? and seq = ?",
                                    [e.consult_id, data.get("checkpoint")]).fetchone()
            if row is None:
                return e.seq, f"checkpoint {data.get('checkpoint')} of consult {e.consult_id} is missing (deleted)"
            if sha256_hex(row[0]) != data.get("state_sha256"):
                return e.seq, f"checkpoint {data.get('checkpoint')} of consult {e.consult_id} was altered"
        return None


    def _approval_mismatch(self) -> tuple[int, str] | None:
        """Decision entries bind the approval row: a reviewer, role, note or status edited afterwards shows here."""
        status = {"approve": "approved", "approve_with_edits": "approved_with_edits", "reject": "rejected"}
        for e in self.entries(kind="decision"):
            d = e.data
            row = self.conn.execute("select status, reviewer, role, note, decided_at, record from approvals "
                                    "where id = ?", [d["approval_id"]]).fetchone()
            expected = (status[d["action"]], d["reviewer"], d["role"], d["note"], d["at"], canonical_json(d))
            if row is None:
                return e.seq, f"approval item {d['approval_id']} is missing (deleted)"
            if tuple(row) != expected:
                return e.seq, f"approval item {d['approval_id']} no longer matches the signed decision (altered)"
        return None


def state_summary(state: Any) -> dict[str, Any]:
    """A short, redacted account of a consult state: ids, scores, verdicts and hashes, never the case text."""
    out: dict[str, Any] = {"case_sha256": sha256_hex(state.case_text), "hitl_status": state.hitl_status,
                           "attempts": state.attempts}
    if state.routing is not None:
        out["routing"] = {"tier": state.routing.tier, "score": state.routing.score,
                          "override": state.routing.override}
    if state.retrieval is not None:
        r = state.retrieval
        out["retrieval"] = {"gate_passed": r.gate_passed, "rag_confidence": r.rag_confidence,
                            "passages": [{"id": p.id, "chunk_id": p.chunk_id, "sha256": sha256_hex(p.text),
                                          "relevant": p.relevant} for p in r.passages]}
    if state.draft is not None:
        out["draft"] = {"sha256": sha256_hex(canonical_json(state.draft)), "model": state.draft.model,
                        "recommendations": len(state.draft.recommendations)}
    ledger = getattr(state, "ledger", None)  # claim release states, when the governor has run
    if ledger is not None and ledger.claims:
        out["claims"] = [{"id": c.id, "state": getattr(c, "state", ""), "evidence": list(c.evidence)}
                         for c in ledger.claims]
    if state.verdicts:
        v = state.verdicts[-1]
        out["critic"] = {"attempt": v.attempt, "passed": v.passed, "issues": list(v.issues)}
    if state.hitl_reasons:
        out["hitl_reasons"] = list(state.hitl_reasons)
    if state.decision is not None:
        out["decision"] = {"action": state.decision.action, "reviewer": state.decision.reviewer}
    for key in ("refusal_reason", "error"):
        if getattr(state, key):
            out[key] = getattr(state, key)
    if state.report:
        out["report_sha256"] = sha256_hex(state.report)
    return out
