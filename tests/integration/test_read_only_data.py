"""A write-protected or archived data folder can still be listed and verified (QA: `audit verify`, `patients`
and `hitl list` were refused with "must be writable", exit 2); commands that write are still refused."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from engine.checkpoint import CheckpointStore, StoreError
from oncotui.cli import main


@pytest.fixture
def archived(data_dir, monkeypatch):
    """A database with a patient, then a folder where opening it for writing fails (as root, chmod cannot
    make one)."""
    store = CheckpointStore(data_dir / "oncotui.db")
    store.new_patient_id()
    store.db.conn.close()

    def refuse(self):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(CheckpointStore, "_migrate", refuse)
    return data_dir / "oncotui.db"


def test_lists_and_verify_read_a_database_that_cannot_be_written(archived, capsys) -> None:
    before = hashlib.sha256(archived.read_bytes()).hexdigest()
    assert main(["audit", "verify"]) == 0
    out = capsys.readouterr()
    assert "chain intact" in out.out and "read-only" in out.err
    assert main(["patients"]) == 0 and "PT-0001" in capsys.readouterr().out
    assert main(["hitl", "list"]) == 0 and "Nothing is waiting" in capsys.readouterr().out
    assert hashlib.sha256(archived.read_bytes()).hexdigest() == before  # nothing written


def test_commands_that_write_are_still_refused(archived, capsys) -> None:
    assert main(["patients", "new"]) == 2
    assert "must be writable" in capsys.readouterr().err


def test_a_read_only_store_refuses_writes(archived) -> None:
    store = CheckpointStore(archived, read_only=True)
    assert [p["id"] for p in store.patients()] == ["PT-0001"]
    with pytest.raises(sqlite3.OperationalError):
        store.new_patient_id()
    with pytest.raises(StoreError):
        CheckpointStore(archived.parent / "missing.db", read_only=True)
