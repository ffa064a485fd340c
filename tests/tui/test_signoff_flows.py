"""Sign-off in the app: the review screen names the signer, refuses self-approval and non-reviewers up front, and
exports are audited."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Static

from oncotui.widgets.chat.consult_view import ConsultView
from tests.tui.conftest import TIER2_CASE, build, submit, wait_for
from tests.tui.test_flows import SIZE, open_review


def signing_line(screen) -> str:
    from rich.text import Text

    return Text.from_markup(str(screen.query_one("#review-signing", Static).content)).plain


async def test_review_screen_names_signer_role_and_asker(tmp_path: Path) -> None:
    overrides = {"hitl.clinician": "dr.ask", "hitl.reviewers": [{"id": "dr-review", "role": "oncologist"}]}
    app, engine, _ = build(tmp_path, overrides=overrides)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "a")
        line = signing_line(screen)
        assert "signing as dr-review (oncologist)" in line and "asked by dr.ask" in line
        await pilot.press(*"agree", "enter")
        await wait_for(pilot, lambda: app.query_one(ConsultView).status == "reviewed")
        [item] = engine.store.approvals(None)
        assert (item.reviewer, item.role) == ("dr-review", "oncologist")


async def test_self_approval_is_refused_in_the_app_but_reject_works(tmp_path: Path, notices) -> None:
    app, engine, _ = build(tmp_path, overrides={"ui.reviewer": "dr.same", "hitl.clinician": "dr.same"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "a")
        assert "dr.same asked for this consult and cannot approve it" in signing_line(screen)
        assert any(sev == "warning" and "cannot approve" in msg for sev, msg in notices)
        assert screen.query_one("#approve", Button).disabled and screen.query_one("#approve_with_edits",
                                                                                   Button).disabled
        assert not screen.query_one("#reject", Button).disabled
        await pilot.press(*"agree", "enter")  # the preselected approve was dropped: nothing is signed
        await pilot.pause()
        assert engine.store.approvals("pending")
        await pilot.click("#reject")
        await wait_for(pilot, lambda: app.query_one(ConsultView).status == "refused")
        assert engine.store.approvals(None)[0].status == "rejected"


async def test_a_non_reviewer_cannot_sign_anything(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path, overrides={"hitl.reviewers": [{"id": "dr.lee", "role": "oncologist"}]})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "r")
        assert "dr-review is not a reviewer" in signing_line(screen)
        assert all(screen.query_one(f"#{b}", Button).disabled for b in ("approve", "approve_with_edits", "reject"))
        await pilot.press("enter")
        await pilot.pause()
        assert engine.store.approvals("pending")


async def test_export_from_the_app_is_in_the_audit_log(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        await pilot.press("ctrl+s")
        path = app.last_export
        assert path is not None
    [entry] = engine.store.audit.entries(kind="export")
    assert entry.data["file"] == path.name and engine.store.audit.verify().ok
