"""`ask`/`resume` that stop at the HITL gate: stdout says that nothing is released yet, why, the draft's claims marked
not yet released (listed as `hitl show` lists them) and the commands that decide the item; never an "Answer"."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from oncotui.cli import main
from tests.fakes import FakeModel, make_engine

TIER2_CASE = "Stage IV pancreatic adenocarcinoma, KRAS and BRCA2. Options?"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import oncotui.cli as cli

    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path))
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    # the scripted model and the in-memory guidelines, over the same database the CLI's settings name
    monkeypatch.setattr(cli, "_engine", lambda settings: make_engine(tmp_path, model=FakeModel(delay_s=0.01))[0])
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def pending_id(out: str) -> str:
    head = next(line for line in out.splitlines() if "Not released: waiting for a reviewer (" in line)
    return head.split("(", 1)[1].split(")", 1)[0]


def test_ask_stopped_at_the_gate_says_so_on_stdout_with_the_draft_claims_and_the_next_commands(data_dir, capsys):
    rc, out, err = run(capsys, "ask", "--patient", "PT-0001", TIER2_CASE)
    assert rc == 0
    item = pending_id(out)
    assert item.startswith("HITL-")
    assert "No answer is released until a reviewer signs this consult off" in out
    assert "  - Tier 2 case (complexity score" in out
    assert "Draft claims, NOT YET RELEASED" in out
    assert f"  oncotui hitl show {item}\n" in out
    assert f"  oncotui hitl approve {item} --reviewer ID" in out and f"oncotui hitl reject {item} --reviewer ID" in out
    assert "Answer" not in out and "Safe refusal" not in out  # nothing shown as released
    assert f"Waiting for a reviewer ({item})" in err  # the progress log keeps its note

    # the claims are listed exactly as `hitl show` lists them (one renderer)
    claims = [line for line in out.split("NOT YET RELEASED", 1)[1].split("\n\n", 1)[0].splitlines()[1:] if line]
    assert claims and claims[0].startswith("  C1  ")
    _, shown, _ = run(capsys, "hitl", "show", item)
    for line in claims:
        assert line in shown.splitlines()


def test_ask_json_stays_one_event_a_line_and_the_hitl_event_only_gains_its_commands(data_dir, capsys):
    rc, out, _ = run(capsys, "ask", "--patient", "PT-0001", "--json", TIER2_CASE)
    assert rc == 0
    events = [json.loads(line) for line in out.splitlines()]
    hitl = [e for e in events if e["event"] == "HitlRequired"]
    assert len(hitl) == 1 and not any(e["event"] == "Final" for e in events)
    item = hitl[0]["approval_id"]
    assert set(hitl[0]) == {"event", "thread_id", "consult_id", "reasons", "approval_id", "commands"}
    assert hitl[0]["commands"]["show"] == f"oncotui hitl show {item}"
    assert hitl[0]["commands"]["approve"].startswith(f"oncotui hitl approve {item} --reviewer ID")
    assert set(hitl[0]["commands"]) == {"show", "approve", "approve_with_edits", "reject"}


def test_resume_that_reaches_the_gate_says_so_too(data_dir, capsys):
    engine, _, _ = make_engine(data_dir, model=FakeModel(delay_s=0.05))

    async def interrupt() -> None:  # the app's cancel: the consumer closes the stream when the draft starts
        agen = engine.stream("PT-0001", TIER2_CASE)
        async for event in agen:
            if event.kind == "Token":
                break
        await agen.aclose()

    asyncio.run(interrupt())
    rc, out, _ = run(capsys, "resume", "--patient", "PT-0001")
    assert rc == 0
    item = pending_id(out)
    assert "Draft claims, NOT YET RELEASED" in out and f"oncotui hitl approve {item} --reviewer ID" in out
    assert "Answer" not in out


def test_a_released_answer_has_no_reviewer_block(data_dir, capsys):
    rc, out, _ = run(capsys, "ask", "--patient", "PT-0002", "Pancreatic adenocarcinoma, what are the first-line "
                     "options?")
    assert rc == 0
    assert "Answer" in out and "waiting for a reviewer" not in out and "NOT YET RELEASED" not in out
