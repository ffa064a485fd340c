"""The per-consult lock (``CheckpointStore.running``): one process drives a consult, and its lock file goes away
when the consult ends, without opening the unlink-while-another-waits race."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import engine.checkpoint as checkpoint
from engine.checkpoint import CheckpointStore, StoreError


def lock_files(tmp_path: Path) -> list[str]:
    locks = tmp_path / "locks"
    return sorted(p.name for p in locks.iterdir()) if locks.exists() else []


def test_the_lock_file_is_removed_when_the_consult_ends(tmp_path):
    store = CheckpointStore(tmp_path / "oncotui.db")
    with store.running("c1"):
        assert lock_files(tmp_path) == ["c1.lock"]
    with pytest.raises(RuntimeError), store.running("c2"):
        raise RuntimeError("a node failed")
    assert lock_files(tmp_path) == []
    with store.running("c1"):  # the same consult again (a resume) locks a fresh file
        pass
    assert lock_files(tmp_path) == []


def test_a_refused_second_runner_leaves_the_holders_lock_in_place(tmp_path):
    store, other = CheckpointStore(tmp_path / "oncotui.db"), CheckpointStore(tmp_path / "oncotui.db")
    with store.running("c1"):
        with pytest.raises(StoreError, match="being run by another oncotui process"), other.running("c1"):
            pass
        assert lock_files(tmp_path) == ["c1.lock"]  # the refused one did not remove the holder's file
        with pytest.raises(StoreError):  # so a third is refused too
            with other.running("c1"):
                pass
    assert lock_files(tmp_path) == []


def test_a_runner_that_opened_the_file_before_the_holder_removed_it_locks_the_new_file(tmp_path, monkeypatch):
    """B opens c1.lock while A holds it, and gets its lock only after A has unlinked it. Locking that orphaned file
    would let C create and lock a new one beside B: B must notice and lock the path's file instead."""
    store = CheckpointStore(tmp_path / "oncotui.db")
    real_flock = checkpoint.fcntl.flock
    a_done, b_inside, b_may_leave = threading.Event(), threading.Event(), threading.Event()
    b_thread_id: list[int] = []
    flocks_by_b: list[int] = []

    def flock(fd, op):
        if threading.get_ident() in b_thread_id:
            flocks_by_b.append(fd)
            if len(flocks_by_b) == 1:  # B's first attempt: opened already, now wait until A has left
                assert a_done.wait(10)
        return real_flock(fd, op)

    monkeypatch.setattr(checkpoint.fcntl, "flock", flock)
    errors: list[BaseException] = []

    def runner_b():
        b_thread_id.append(threading.get_ident())
        try:
            with CheckpointStore(tmp_path / "oncotui.db").running("c1"):
                b_inside.set()
                assert b_may_leave.wait(10)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
            b_inside.set()

    with store.running("c1"):
        b = threading.Thread(target=runner_b)
        b.start()
        deadline = time.monotonic() + 10
        while not flocks_by_b and not errors and time.monotonic() < deadline:  # B has opened the file A holds
            time.sleep(0.01)
        assert flocks_by_b, errors
    a_done.set()  # A has unlinked its file and released it
    assert b_inside.wait(10) and not errors, errors
    assert len(flocks_by_b) == 2  # B's first file was stale, so it opened the path again
    assert lock_files(tmp_path) == ["c1.lock"]
    with pytest.raises(StoreError, match="being run by another oncotui process"):  # C is refused while B runs
        with store.running("c1"):
            pass
    b_may_leave.set()
    b.join(10)
    assert not errors, errors
    assert lock_files(tmp_path) == []


PROCESS = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from engine.checkpoint import CheckpointStore, StoreError
    data, marker = Path(sys.argv[1]), Path(sys.argv[1]) / "inside"
    store = CheckpointStore(data / "oncotui.db")
    ran = refused = 0
    (data / f"ready-{os.getpid()}").touch()
    while not (data / "go").exists():  # start together, however long the imports took
        time.sleep(0.01)
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline:
        try:
            with store.running("shared"):
                try:  # no other runner may be inside now
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    print("OVERLAP", flush=True)
                    sys.exit(1)
                time.sleep(0.0005)
                os.unlink(marker)
                ran += 1
        except StoreError:
            refused += 1
    print(ran, refused)
""")


def test_processes_contending_for_one_consult_never_run_it_together_and_leave_no_lock_file(tmp_path):
    CheckpointStore(tmp_path / "oncotui.db")  # create the database once, before the contenders
    root = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-c", PROCESS, str(tmp_path), "2.0"], cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < 4 and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break  # one failed at start: its output says why
        time.sleep(0.05)
    (tmp_path / "go").touch()
    results = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, out + err
    ran = sum(int(out.split()[0]) for out, _ in results)
    refused = sum(int(out.split()[1]) for out, _ in results)
    assert ran > 0 and refused > 0  # they did contend
    assert lock_files(tmp_path) == []
