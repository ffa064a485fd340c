"""Sign-off and audit from the command line: refusals exit 2 with the reason, `audit verify` exits 1 naming the
tampered entry."""

from __future__ import annotations

import json
import sqlite3

from tests.fakes import collect, make_engine
from tests.integration.test_cli import cli

CASE = "Stage IV pancreatic adenocarcinoma, KRAS and BRCA2. Options?"  # Tier 2: waits for a reviewer
TEAM = '[{id = "dr.lee", role = "oncologist"}]'


def waiting_item(tmp_path, clinician: str = "dr.ask") -> str:
    engine, _, _ = make_engine(tmp_path, overrides={"hitl.clinician": clinician})
    collect(lambda: engine.stream("PT-0001", CASE))
    return engine.store.approvals("pending")[0].id


def test_non_reviewer_and_self_approval_are_refused_with_exit_2(tmp_path):
    item = waiting_item(tmp_path)
    env = {"ONCOTUI_HITL__REVIEWERS": TEAM}
    out = cli(tmp_path, "hitl", "approve", item, "--reviewer", "dr.intern", env=env)
    assert out.returncode == 2 and "dr.intern is not a reviewer" in out.stderr and "dr.lee (oncologist)" in out.stderr
    out = cli(tmp_path, "hitl", "approve", item, "--reviewer", "dr.ask")
    assert out.returncode == 2 and "dr.ask asked for this consult and cannot approve it" in out.stderr
    assert "Traceback" not in out.stderr
    assert json.loads(cli(tmp_path, "hitl", "list", "--json").stdout)[0]["status"] == "pending"
    out = cli(tmp_path, "hitl", "approve", item, "--reviewer", "dr.lee", "--note", "ok", env=env)
    assert out.returncode == 0, out.stderr
    [row] = json.loads(cli(tmp_path, "hitl", "list", "--all", "--json").stdout)
    assert (row["status"], row["reviewer"], row["role"], row["clinician"]) == ("approved", "dr.lee", "oncologist",
                                                                               "dr.ask")


def test_audit_verify_show_and_tamper(tmp_path):
    item = waiting_item(tmp_path)
    assert cli(tmp_path, "hitl", "approve", item, "--reviewer", "dr.lee", "--note", "agree").returncode == 0
    ok = cli(tmp_path, "audit", "verify")
    assert ok.returncode == 0 and "entries, chain intact" in ok.stdout
    shown = cli(tmp_path, "audit", "show", "--thread", "PT-0001")
    assert "approve by dr.lee (reviewer" in shown.stdout and "asked by dr.ask" in shown.stdout
    entries = [json.loads(line) for line in cli(tmp_path, "audit", "show", "--json").stdout.splitlines()]
    decision = [e for e in entries if e["kind"] == "decision"][0]

    con = sqlite3.connect(tmp_path / "oncotui.db")
    con.execute("drop trigger audit_log_no_update")
    con.execute("update audit_log set actor = 'dr.mallory' where seq = ?", [decision["seq"]])
    con.commit()
    con.close()
    bad = cli(tmp_path, "audit", "verify")
    assert bad.returncode == 1 and f"entry #{decision['seq']} (decision)" in bad.stderr
    report = json.loads(cli(tmp_path, "audit", "verify", "--json").stdout)
    assert report["ok"] is False and report["seq"] == decision["seq"] and report["kind"] == "decision"
