"""The data directory as people break it: a file where the folder should be, a database that is a folder or not a
database, a read-only disk, and two processes creating patients at once. Each is a clear message (exit 2) naming
paths.data_dir, never a sqlite3 traceback; concurrent creation never hands two people the same new patient."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from engine.checkpoint import CheckpointStore, StoreError
from oncotui.cli import main


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    return tmp_path


def _run(monkeypatch, capsys, data_dir: Path, *argv: str) -> tuple[int, str]:
    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(data_dir))
    rc = main(list(argv))
    return rc, capsys.readouterr().err


def test_data_dir_that_is_a_file(env, monkeypatch, capsys):
    (env / "afile").write_text("x")
    rc, err = _run(monkeypatch, capsys, env / "afile" / "data", "patients")
    assert rc == 2 and "paths.data_dir" in err and "Traceback" not in err
    assert "not a directory" in err.lower() or "not a folder" in err.lower()


def test_database_that_is_a_folder_or_not_a_database(env, monkeypatch, capsys):
    (env / "d1" / "oncotui.db").mkdir(parents=True)
    rc, err = _run(monkeypatch, capsys, env / "d1", "patients")
    assert rc == 2 and "oncotui.db" in err and "paths.data_dir" in err
    (env / "d2").mkdir()
    (env / "d2" / "oncotui.db").write_bytes(b"this is not a database, just some text" * 100)
    rc, err = _run(monkeypatch, capsys, env / "d2", "patients")
    assert rc == 2 and "oncotui.db" in err and "not a database" in err


def test_read_only_data_dir_is_a_clear_error(env, monkeypatch):
    real = sqlite3.connect

    def readonly(*args, **kwargs):
        conn = real(*args, **kwargs)
        conn.execute("pragma query_only = on")  # every write fails as on a read-only disk
        return conn

    monkeypatch.setattr(sqlite3, "connect", readonly)
    with pytest.raises(StoreError) as exc:
        CheckpointStore(env / "ro" / "oncotui.db")
    assert "paths.data_dir" in str(exc.value) and "write" in str(exc.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_data_dir_for_real(env, monkeypatch, capsys):
    ro = env / "ro"
    ro.mkdir()
    CheckpointStore(ro / "oncotui.db")
    for p in (ro, *ro.iterdir()):
        p.chmod(0o555 if p.is_dir() else 0o444)
    rc, err = _run(monkeypatch, capsys, ro, "patients", "new")
    assert rc == 2 and "paths.data_dir" in err


def test_two_processes_creating_a_patient_get_different_ids(tmp_path):
    a, b = CheckpointStore(tmp_path / "oncotui.db"), CheckpointStore(tmp_path / "oncotui.db")
    first, second = a.new_patient_id(), b.new_patient_id()  # both before either creates it: the old race
    a.ensure_patient(first)
    b.ensure_patient(second)
    assert first != second
    assert [p["id"] for p in a.patients()] == sorted({first, second})


def test_ensure_patient_when_another_process_created_it_in_between(tmp_path, monkeypatch):
    a, b = CheckpointStore(tmp_path / "oncotui.db"), CheckpointStore(tmp_path / "oncotui.db")
    a.ensure_patient("PT-0007")
    # b checked just before a inserted (two consults of a new patient started at once)
    monkeypatch.setattr(type(b.db["patients"]), "count_where", lambda self, *args, **kw: 0)
    assert b.ensure_patient("PT-0007") is False  # was: sqlite3.IntegrityError


def test_unfinished_counts_only_consults_that_can_be_resumed(tmp_path):
    store = CheckpointStore(tmp_path / "oncotui.db")
    store.ensure_patient("PT-0001")
    store.start_consult("PT-0001")  # crashed before its first checkpoint: nothing to resume
    row = store.patients()[0]
    assert row["consults"] == 1 and row["unfinished"] == 0


def test_a_write_refused_after_opening_is_a_clear_error(env, monkeypatch, capsys):
    # a database file made read-only in a writable folder opens fine and fails at the first write
    def refused(self):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(CheckpointStore, "new_patient_id", refused)
    rc, err = _run(monkeypatch, capsys, env / "d", "patients", "new")
    assert rc == 2 and "paths.data_dir" in err and "readonly" in err and "Traceback" not in err


def test_a_damaged_checkpoint_is_named_not_a_traceback(tmp_path, monkeypatch, capsys):
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "Pancreatic adenocarcinoma, what are the first-line options?"))
    with sqlite3.connect(tmp_path / "oncotui.db") as conn:  # a disk error or a hand edit cut the stored state
        conn.execute("update checkpoints set state = '{\"thread_id\": \"PT-0001\"' where seq = "
                     "(select max(seq) from checkpoints)")
    with pytest.raises(StoreError) as exc:
        engine.store.latest("PT-0001")
    assert "checkpoint" in str(exc.value) and "audit verify" in str(exc.value)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    rc, err = _run(monkeypatch, capsys, tmp_path, "resume", "--patient", "PT-0001")
    assert rc == 2 and "Traceback" not in err and "checkpoint" in err


def test_a_damaged_checkpoint_does_not_block_the_patients_next_consult(tmp_path):
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "Pancreatic adenocarcinoma, what are the first-line options?"))
    with sqlite3.connect(tmp_path / "oncotui.db") as conn:
        conn.execute("update checkpoints set state = 'garbage' where seq = (select max(seq) from checkpoints)")
    events = collect(lambda: engine.stream("PT-0001", "Pancreatic adenocarcinoma, any second-line options?"))
    assert [e for e in events if e.kind == "Final"]  # the earlier consult is left out of the history


def test_exporting_a_consult_with_a_damaged_checkpoint_is_a_lookup_error(tmp_path):
    # the app's export action reports LookupError and OSError; anything else would end the app
    from oncotui.export import export_consult
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "Pancreatic adenocarcinoma, what are the first-line options?"))
    with sqlite3.connect(tmp_path / "oncotui.db") as conn:
        conn.execute("update checkpoints set state = 'garbage' where seq = (select max(seq) from checkpoints)")
    with pytest.raises(LookupError, match="cannot be read"):
        export_consult(engine.store, "PT-0001", tmp_path / "exports")
