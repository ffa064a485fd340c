"""Kill a real subprocess mid-consult; resume continues from the last completed node with nothing lost."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes import collect, make_engine

ROOT = Path(__file__).resolve().parents[2]
CASE = "Pancreatic adenocarcinoma, what are the first-line options?"


def _checkpoints(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("select node, next_node from checkpoints order by seq").fetchall()
        except sqlite3.OperationalError:
            return []


def test_kill_mid_consult_then_resume(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "tests.fakes", str(tmp_path), CASE], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if ("corrective_rag", "specialist") in _checkpoints(tmp_path / "oncotui.db"):
                break
            assert child.poll() is None, child.stderr.read().decode()
            time.sleep(0.1)
        else:
            raise AssertionError("the child never reached the Specialist")
        time.sleep(0.3)  # the child is now blocked inside the Specialist
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    assert _checkpoints(tmp_path / "oncotui.db")[-1] == ("corrective_rag", "specialist")

    engine, model, kb = make_engine(tmp_path)
    assert engine.store.patients()[0]["unfinished"] == 1  # `oncotui patients` points at `oncotui resume`
    # a new question after the crash does not hide the interrupted consult (the killed process's lock is gone)
    assert [e for e in collect(lambda: engine.stream("PT-0001", CASE + " Any trials?")) if e.kind == "Final"]
    kb.queries.clear()
    model.prompts.clear()
    events = collect(lambda: engine.resume("PT-0001"))
    started = [e.node for e in events if e.kind == "NodeStarted"]
    assert started[0] == "specialist"  # continues at the next node; ingestion/retrieval are not redone
    assert kb.queries == []
    final = [e for e in events if e.kind == "Final"][0]
    assert final.status == "released" and "FOLFIRINOX" in final.report
    # the resumed prompt still has the redacted case: nothing was lost
    assert "first-line options" in model.prompts[0][-1]["content"]
