"""SQLite persistence (sqlite-utils, WAL): patients, consults, per-node checkpoints and HITL approval items.

Every state written here is already redacted: ``ConsultState.to_dict`` drops the raw note.
Each patient is a thread ``PT-XXXX``; every read is filtered by thread id, so one patient's data cannot reach
another's prompt. Writes that matter for accountability (a consult started, a node's checkpoint, a reviewer's
decision, an export) append to the hash-chained audit log in the same transaction (engine/audit.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from engine.audit import AuditLog, canonical_json, immediate, sha256_hex, state_summary
from engine.signoff import DecisionRecord, ShownPassage
from engine.state import ConsultState, Turn

# ASCII digits, the whole string: "$" let "PT-0013\n" through as a second PT-0013, "\d" Arabic-Indic digits
PATIENT_ID_RE = re.compile(r"\APT-[0-9]{4,}\Z")


class StoreError(Exception):
    """A persistence problem explained for a person."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_patient_id(thread_id: str) -> str:
    if not PATIENT_ID_RE.match(thread_id):
        raise StoreError(f"Patient ids look like PT-0001 (PT- and at least four digits); got {thread_id!r}.")
    return thread_id


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    node: str
    next_node: str
    state: ConsultState


@dataclass(frozen=True)
class ApprovalItem:
    id: str
    thread_id: str
    consult_id: str
    reasons: tuple[str, ...]
    preview: str  # the draft as the reviewer sees it (redacted)
    status: str  # pending | approved | approved_with_edits | rejected
    created_at: str
    reviewer: str = ""
    note: str = ""
    decided_at: str = ""
    role: str = ""  # the reviewer's role when decided
    clinician: str = ""  # who asked for the consult


def _lock_file(path: Path, consult_id: str) -> int:
    """Open and lock ``path`` without waiting; the locked descriptor. A file that was unlinked (its consult ended)
    or replaced between our open and our lock is not the lock any more: open the path again."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
            held = os.fstat(fd)
        except BlockingIOError:
            os.close(fd)
            raise StoreError(f"Consult {consult_id} is being run by another oncotui process right now; wait for "
                             "it to finish (its answer or review item will appear).") from None
        except BaseException:
            os.close(fd)
            raise
        if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
            return fd
        os.close(fd)  # stale: its holder removed it; try the path again


def _read_only_connection(db_path: Path) -> sqlite3.Connection:
    """The database opened for reading only. A WAL database needs its -shm file, which a read-only folder may
    not let SQLite create: then it is read as immutable (nothing else may write it meanwhile, which a read-only
    folder ensures)."""
    if not db_path.is_file():
        raise sqlite3.OperationalError(f"unable to open database file {db_path}")
    uri = db_path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        return sqlite3.connect(f"{uri}?immutable=1", uri=True)


def open_problem(db_path: Path, exc: BaseException) -> str:
    """Why the database under ``paths.data_dir`` cannot be opened or written, and what to do, for a person."""
    folder = db_path.parent
    fix = "fix it, or point paths.data_dir (ONCOTUI_PATHS__DATA_DIR) at another folder"
    text = str(exc)
    if isinstance(exc, (NotADirectoryError, FileExistsError)) or (folder.exists() and not folder.is_dir()):
        return f"the data directory {folder} (paths.data_dir) is not a directory: a file is in the way; {fix}"
    if isinstance(exc, PermissionError):
        return f"the data directory {folder} (paths.data_dir) cannot be created or written: permission denied; {fix}"
    if isinstance(exc, OSError):
        return f"the data directory {folder} (paths.data_dir) cannot be used: {exc.strerror or exc}; {fix}"
    if db_path.is_dir():
        return f"{db_path} is a directory, not oncotui's database (in paths.data_dir); move it aside or {fix[7:]}"
    if "not a database" in text or "malformed" in text:
        return (f"{db_path} is not an oncotui database ({text}); move it aside (oncotui starts a new one) or "
                f"{fix[7:]}")
    if "readonly" in text or "read-only" in text or "unable to open" in text or "disk I/O" in text:
        return (f"oncotui cannot write its database {db_path} ({text}): the data directory {folder} "
                f"(paths.data_dir) must be writable; {fix}")
    if "database or disk is full" in text:
        return f"the disk holding {db_path} (paths.data_dir) is full; free some space or {fix[7:]}"
    return f"cannot use the database {db_path} (paths.data_dir): {text}"


class CheckpointStore:
    def __init__(self, db_path: Path, read_only: bool = False) -> None:
        """``read_only``: open an existing database without writing anything (a write-protected or archived
        copy can still be listed and verified); anything that writes then fails."""
        self.path = db_path
        try:
            if read_only:
                self.db = sqlite_utils.Database(_read_only_connection(db_path))
            else:
                db_path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite_utils.Database(db_path)
                self.db.enable_wal()
                self._migrate()
            self.audit = AuditLog(self.db.conn, create=not read_only)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(open_problem(db_path, exc)) from None

    def _migrate(self) -> None:
        db = self.db
        if "patients" not in db.table_names():
            db["patients"].create({"id": str, "created_at": str}, pk="id")
        if "consults" not in db.table_names():
            db["consults"].create({"id": str, "thread_id": str, "question": str, "status": str, "tier": int,
                                   "started_at": str, "updated_at": str}, pk="id")
            db["consults"].create_index(["thread_id"])
        if "checkpoints" not in db.table_names():
            db["checkpoints"].create({"thread_id": str, "consult_id": str, "seq": int, "node": str,
                                      "next_node": str, "state": str, "created_at": str},
                                     pk=("consult_id", "seq"))
            db["checkpoints"].create_index(["thread_id"])
        if "approvals" not in db.table_names():
            db["approvals"].create({"id": str, "thread_id": str, "consult_id": str, "reasons": str,
                                    "preview": str, "status": str, "created_at": str, "reviewer": str,
                                    "note": str, "decided_at": str}, pk="id")
        # columns added with sign-off identities; older databases gain them empty
        for table, column in (("consults", "clinician"), ("approvals", "role"), ("approvals", "record")):
            if column not in db[table].columns_dict:
                db[table].add_column(column, str)

    # -- patients -----------------------------------------------------------------------------------------
    def ensure_patient(self, thread_id: str) -> bool:
        """Create the patient if needed; True when it was created."""
        check_patient_id(thread_id)
        if self.db["patients"].count_where("id = ?", [thread_id]):
            return False
        # "or ignore": another process (a second consult of the same new patient) may have created it meanwhile
        with immediate(self.db.conn):
            cur = self.db.execute("insert or ignore into patients (id, created_at) values (?, ?)",
                                  [thread_id, now_iso()])
        return cur.rowcount == 1

    def new_patient_id(self) -> str:
        """The next free PT-XXXX id, created here in one write transaction: two processes (the app and the CLI,
        two terminals) asking at once get different ids instead of sharing one patient's thread."""
        with immediate(self.db.conn):
            numbers = [int(r[3:]) for (r,) in self.db.execute("select id from patients").fetchall()
                       if PATIENT_ID_RE.match(r)]
            pid = f"PT-{(max(numbers) + 1 if numbers else 1):04d}"
            self.db.execute("insert into patients (id, created_at) values (?, ?)", [pid, now_iso()])
        return pid

    def patients(self) -> list[dict[str, Any]]:
        # unfinished: consults that stopped mid-way (a crash, a kill, a cancel) or are running now, with a
        # checkpoint to resume from (one that stopped before its first step stored nothing `resume` could use)
        sql = """select p.id, p.created_at, count(c.id) as consults, max(c.updated_at) as last_activity,
                        coalesce(sum(c.status = 'running' and exists (select 1 from checkpoints k
                                                                      where k.consult_id = c.id)), 0) as unfinished
                 from patients p left join consults c on c.thread_id = p.id group by p.id order by p.id"""
        return [dict(r) for r in self.db.query(sql)]

    # -- consults and checkpoints -------------------------------------------------------------------------
    def start_consult(self, thread_id: str, clinician: str = "", os_user: str = "") -> str:
        consult_id = uuid.uuid4().hex[:12]
        stamp = now_iso()
        with immediate(self.db.conn):
            self.db.execute("insert into consults (id, thread_id, question, status, tier, started_at, updated_at, "
                            "clinician) values (?, ?, '', 'running', null, ?, ?, ?)",
                            [consult_id, thread_id, stamp, stamp, clinician])
            self.audit.append("consult", thread_id=thread_id, consult_id=consult_id, actor=clinician, at=stamp,
                              payload={"clinician": clinician, "os_user": os_user})
        return consult_id

    def save(self, state: ConsultState, node: str, next_node: str, status: str,
             decision: DecisionRecord | None = None) -> int:
        """Checkpoint ``state`` and audit it; with ``decision``, also close its approval item, all in one
        transaction (a crash leaves either all of it or none)."""
        stamp = now_iso()
        state_json = json.dumps(state.to_dict())
        with immediate(self.db.conn):
            if decision is not None:
                self._record_decision(decision)
            seq = (self.db.execute("select coalesce(max(seq), 0) from checkpoints where consult_id = ?",
                                   [state.consult_id]).fetchone()[0]) + 1
            self.db.execute("insert into checkpoints (thread_id, consult_id, seq, node, next_node, state, "
                            "created_at) values (?, ?, ?, ?, ?, ?, ?)",
                            [state.thread_id, state.consult_id, seq, node, next_node, state_json, stamp])
            self.db.execute("update consults set question = ?, status = ?, tier = ?, updated_at = ? where id = ?",
                            [state.case_text, status, state.routing.tier if state.routing else None, stamp,
                             state.consult_id])
            self.audit.append("node", thread_id=state.thread_id, consult_id=state.consult_id, actor="engine",
                              at=stamp, payload={"node": node, "next_node": next_node, "status": status,
                                                 "checkpoint": seq, "state_sha256": sha256_hex(state_json),
                                                 "summary": state_summary(state)})
        return seq

    def latest(self, thread_id: str, consult_id: str | None = None, *, unfinished: bool = False
               ) -> Checkpoint | None:
        """The last checkpoint of ``consult_id``, else of the thread's latest consult; ``unfinished``: of its
        latest consult that stopped mid-way (a crash, a kill, a cancel) with a checkpoint to continue from, so a
        question asked after a crash does not hide the interrupted consult."""
        if consult_id is None:
            where = ("and status = 'running' and exists (select 1 from checkpoints k where k.consult_id = c.id)"
                     if unfinished else "")
            row = self.db.execute(f"select id from consults c where thread_id = ? {where} "
                                  "order by started_at desc, rowid desc limit 1", [thread_id]).fetchone()
            if row is None:
                return None
            consult_id = row[0]
        row = self.db.execute(
            "select seq, node, next_node, state from checkpoints where thread_id = ? and consult_id = ? "
            "order by seq desc limit 1", [thread_id, consult_id]).fetchone()
        if row is None:
            return None
        try:
            state = ConsultState.from_dict(json.loads(row[3]))
        except (ValueError, KeyError, TypeError) as exc:  # cut or edited on disk: say which, not a traceback
            raise StoreError(f"checkpoint {row[0]} of consult {consult_id} ({thread_id}) cannot be read "
                             f"({type(exc).__name__}: {exc}); `oncotui audit verify` says whether it was changed. "
                             "This consult cannot be continued or shown: ask the question again.") from None
        return Checkpoint(seq=row[0], node=row[1], next_node=row[2], state=state)

    @contextmanager
    def running(self, consult_id: str) -> Iterator[None]:
        """Hold the consult while one process drives it: a second ``resume`` (another terminal, the app and the
        CLI) of the same consult is refused instead of running every node twice and queueing a second draft. An
        OS file lock, so a killed process releases it and the consult can be resumed at once.

        The lock file is removed when the consult ends, so ``locks/`` does not keep one file per consult ever run.
        It is unlinked while still locked, and a process that locks a file checks that the path still names that
        file (the same inode) and starts again otherwise: one that opened the file just before it was unlinked
        would else hold a lock on a file nobody else can open, beside a second process locking a new one."""
        locks = self.path.parent / "locks"
        locks.mkdir(parents=True, exist_ok=True)
        path = locks / f"{consult_id}.lock"
        fd = _lock_file(path, consult_id)
        try:
            yield
        finally:
            with suppress(OSError):  # already gone (removed by hand): nothing to clean up
                os.unlink(path)  # while still locked: whoever opened it meanwhile finds it replaced and retries
            os.close(fd)  # closing the descriptor releases the lock

    def clinician(self, consult_id: str) -> str:
        """Who asked for the consult ("" for consults stored before identities were recorded)."""
        row = self.db.execute("select clinician from consults where id = ?", [consult_id]).fetchone()
        return (row[0] or "") if row else ""

    def consult(self, consult_id: str) -> dict[str, Any] | None:
        rows = list(self.db["consults"].rows_where("id = ?", [consult_id]))
        return rows[0] if rows else None

    def consults(self, thread_id: str) -> list[dict[str, Any]]:
        return list(self.db["consults"].rows_where("thread_id = ?", [thread_id], order_by="started_at, rowid"))

    def history(self, thread_id: str, limit: int) -> tuple[Turn, ...]:
        """Finished consults of this thread only, oldest first, as context for a follow-up."""
        if limit <= 0:
            return ()
        turns: list[Turn] = []
        rows = self.db.execute(
            "select id from consults where thread_id = ? and status in ('released', 'reviewed', 'refused') "
            "order by started_at desc, rowid desc limit ?", [thread_id, limit]).fetchall()
        for (consult_id,) in reversed(rows):
            try:
                cp = self.latest(thread_id, consult_id)
            except StoreError:  # a damaged checkpoint: leave that turn out rather than refuse every new consult
                continue
            if cp is not None:
                summary = cp.state.draft.assessment if cp.state.draft else cp.state.refusal_reason
                turns.append(Turn(question=cp.state.case_text, answer_summary=summary[:600]))
        return tuple(turns)

    # -- approvals ----------------------------------------------------------------------------------------
    def add_approval(self, state: ConsultState, preview: str) -> str:
        existing = list(self.db["approvals"].rows_where("consult_id = ? and status = 'pending'", [state.consult_id]))
        if existing:  # a resumed consult must not queue the same item twice
            return existing[0]["id"]
        approval_id = "HITL-" + uuid.uuid4().hex[:8]
        self.db["approvals"].insert({
            "id": approval_id, "thread_id": state.thread_id, "consult_id": state.consult_id,
            "reasons": json.dumps(list(state.hitl_reasons)), "preview": preview, "status": "pending",
            "created_at": now_iso(), "reviewer": "", "note": "", "decided_at": ""})
        return approval_id

    def approvals(self, status: str | None = "pending") -> list[ApprovalItem]:
        return self._approvals("a.status = ?" if status else "1", [status] if status else [])

    def approval(self, approval_id: str) -> ApprovalItem | None:
        rows = self._approvals("a.id = ?", [approval_id])
        return rows[0] if rows else None

    def pending_for(self, consult_id: str) -> ApprovalItem | None:
        rows = self._approvals("a.consult_id = ? and a.status = 'pending'", [consult_id])
        return rows[0] if rows else None

    def decided_for(self, consult_id: str) -> ApprovalItem | None:
        """The consult's approval item once a reviewer has decided it."""
        rows = self._approvals("a.consult_id = ? and a.status != 'pending'", [consult_id])
        return rows[0] if rows else None

    def decision_record(self, approval_id: str) -> DecisionRecord | None:
        row = self.db.execute("select record from approvals where id = ?", [approval_id]).fetchone()
        if not row or not row[0]:
            return None
        data = json.loads(row[0])
        return DecisionRecord(**{**data, "evidence": tuple(ShownPassage(**p) for p in data["evidence"]),
                                 "edit_findings": tuple(data.get("edit_findings", ()))})

    def _record_decision(self, record: DecisionRecord) -> None:
        status = {"approve": "approved", "approve_with_edits": "approved_with_edits", "reject": "rejected"}
        cur = self.db.execute(
            "update approvals set status = ?, reviewer = ?, role = ?, note = ?, decided_at = ?, record = ? "
            "where id = ? and status = 'pending'",
            [status[record.action], record.reviewer, record.role, record.note, record.at, canonical_json(record),
             record.approval_id])
        if cur.rowcount != 1:  # another reviewer signed first (app and CLI at once)
            raise StoreError(f"{record.approval_id} is no longer waiting for a reviewer.")
        self.audit.append("decision", thread_id=record.thread_id, consult_id=record.consult_id,
                          actor=record.reviewer, at=record.at, payload=json.loads(canonical_json(record)))

    def record_export(self, thread_id: str, consult_id: str, file_name: str, text: str, os_user: str) -> None:
        with immediate(self.db.conn):
            self.audit.append("export", thread_id=thread_id, consult_id=consult_id, actor=os_user, at=now_iso(),
                              payload={"file": file_name, "sha256": sha256_hex(text), "os_user": os_user})

    def _approvals(self, where: str, args: list[Any]) -> list[ApprovalItem]:
        sql = ("select a.*, c.clinician as clinician from approvals a left join consults c on c.id = a.consult_id "
               f"where {where} order by a.created_at, a.rowid")
        return [self._approval(dict(r)) for r in self.db.query(sql, args)]

    @staticmethod
    def _approval(row: dict[str, Any]) -> ApprovalItem:
        return ApprovalItem(id=row["id"], thread_id=row["thread_id"], consult_id=row["consult_id"],
                            reasons=tuple(json.loads(row["reasons"])), preview=row["preview"],
                            status=row["status"], created_at=row["created_at"], reviewer=row["reviewer"] or "",
                            note=row["note"] or "", decided_at=row["decided_at"] or "", role=row["role"] or "",
                            clinician=row["clinician"] or "")
