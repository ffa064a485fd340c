"""A damaged checkpoint (cut or edited on disk: ``store.latest`` raises StoreError) is named in a notice; opening the
patient, showing its case and opening its draft for review no longer end the app with a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from oncotui.screens.review import ReviewScreen
from oncotui.widgets.chat.consult_view import ConsultView
from tests.tui.conftest import TIER1_CASE, TIER2_CASE, build, wait_for

SIZE = (120, 40)


def damage(db: Path, consult_id: str) -> None:
    """Cut the stored state of the consult's last checkpoint, as a disk error or a hand edit would."""
    with sqlite3.connect(db) as conn:
        conn.execute("update checkpoints set state = '{\"thread_id\": \"PT-0001\"' where seq = "
                     "(select max(seq) from checkpoints where consult_id = ?)", [consult_id])


async def test_a_damaged_checkpoint_is_a_notice_and_the_patients_other_consults_open(tmp_path: Path,
                                                                                   notices) -> None:
    app, engine, _ = build(tmp_path)
    for case in (TIER2_CASE, TIER1_CASE):  # one waits for a reviewer, one is released
        [e async for e in engine.stream("PT-0001", case)]
    waiting, released = (row["id"] for row in sorted(engine.store.consults("PT-0001"),
                                                       key=lambda r: r["started_at"]))
    damage(tmp_path / "oncotui.db", released)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.engine is not None)
        await app.open_patient("PT-0001")
        await pilot.pause()
        assert app.current_patient == "PT-0001"
        assert set(app.chat.views) == {waiting, released}  # the other consult is shown as before
        damaged = [m for severity, m in notices if severity == "error" and "cannot be read" in m]
        assert len(damaged) == 1 and f"consult {released}" in damaged[0]  # once, though read more than once
        assert app.query(ConsultView)  # the app is still running, the chat still shown


async def test_a_draft_whose_checkpoint_is_damaged_is_not_opened_for_review(tmp_path: Path, notices) -> None:
    app, engine, _ = build(tmp_path)
    [e async for e in engine.stream("PT-0001", TIER2_CASE)]  # waits for a reviewer
    (waiting,) = (row["id"] for row in engine.store.consults("PT-0001"))
    damage(tmp_path / "oncotui.db", waiting)  # signing it would fail: the consult cannot be continued
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.focused is app.approvals.table)
        await pilot.press("a")
        await wait_for(pilot, lambda: any("cannot be reviewed" in m for _, m in notices))
        await pilot.pause()
        assert not isinstance(app.screen, ReviewScreen)
        assert any(f"consult {waiting}" in m and "ask the question again" in m for _, m in notices)
        assert app.approvals.table.row_count == 1  # still listed: nothing was decided


async def test_new_patient_creates_exactly_one_patient(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")  # the patient list has focus at start
        assert app.current_patient == "PT-0001"
        await app.action_new_patient()  # new_patient_id() creates the patient itself: no ensure_patient after it
        assert app.current_patient == "PT-0002"
    assert [p["id"] for p in engine.store.patients()] == ["PT-0001", "PT-0002"]
