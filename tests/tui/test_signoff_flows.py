"""Sign-off in the app: the review screen names the signer, refuses self-approval and non-reviewers up front, and
exports are audited."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input, Static

from tests.tui.conftest import TIER2_CASE, build, signed, submit, wait_for
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
        await signed(pilot, "reviewed")
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
        await signed(pilot, "refused")
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


async def type_reviewer(pilot, screen, reviewer: str) -> None:
    field = screen.query_one("#review-reviewer", Input)
    field.focus()
    field.value = ""
    await pilot.press(*reviewer)
    await wait_for(pilot, lambda: screen.reviewer == reviewer)
    await pilot.pause()


async def test_default_config_a_colleague_signs_with_their_own_id(tmp_path: Path, notices) -> None:
    """Nothing configured: the clinician and the reviewer are both the OS user, so self-approval is refused; a
    colleague at the same terminal types their id and approves. The OS account is still recorded."""
    from engine.signoff import os_user

    app, engine, _ = build(tmp_path, overrides={"ui.reviewer": "", "hitl.clinician": ""})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "a")
        field = screen.query_one("#review-reviewer", Input)
        assert field.value == os_user() and not field.disabled  # prefilled from ui.reviewer, else the OS user
        assert screen.query_one("#approve", Button).disabled
        line = signing_line(screen)
        assert f"{os_user()} asked for this consult and cannot approve it" in line and "Reviewer id" in line
        assert any(sev == "warning" and "their own id" in msg for sev, msg in notices)

        await type_reviewer(pilot, screen, "dr.colleague")
        assert not screen.query_one("#approve", Button).disabled
        assert not screen.query_one("#approve_with_edits", Button).disabled
        assert "Approve — signing as dr.colleague (reviewer)" in signing_line(screen)  # the preselected action
        await type_reviewer(pilot, screen, os_user())  # back to the asker: refused again
        assert screen.query_one("#approve", Button).disabled and "cannot approve" in signing_line(screen)
        await type_reviewer(pilot, screen, "dr.colleague")
        await pilot.press("enter")  # the reviewer field's Enter moves on to the note
        assert app.focused is screen.query_one("#review-note")
        await pilot.press(*"agree", "enter")
        await signed(pilot, "reviewed")
        [item] = engine.store.approvals(None)
        assert (item.status, item.reviewer, item.clinician) == ("approved", "dr.colleague", os_user())
        record = engine.store.decision_record(item.id)
        assert record.reviewer == "dr.colleague" and record.os_user == os_user()


async def test_reviewer_field_applies_the_reviewers_list_and_roles(tmp_path: Path) -> None:
    overrides = {"hitl.reviewers": [{"id": "dr.lee", "role": "oncologist"}]}
    app, engine, _ = build(tmp_path, overrides=overrides)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "enter")
        buttons = [screen.query_one(f"#{b}", Button) for b in ("approve", "approve_with_edits", "reject")]
        assert all(b.disabled for b in buttons) and "dr-review is not a reviewer" in signing_line(screen)
        await type_reviewer(pilot, screen, "dr.lee")
        assert not any(b.disabled for b in buttons)
        assert "signing as dr.lee (oncologist)" in signing_line(screen)
        await type_reviewer(pilot, screen, "dr.x")
        assert all(b.disabled for b in buttons) and "dr.x is not a reviewer" in signing_line(screen)
        await type_reviewer(pilot, screen, "")
        assert all(b.disabled for b in buttons) and "needs the reviewer's id" in signing_line(screen)
        await type_reviewer(pilot, screen, "dr.lee")
        await pilot.click("#approve")
        await signed(pilot, "reviewed")
        [item] = engine.store.approvals(None)
        assert (item.reviewer, item.role) == ("dr.lee", "oncologist")


async def test_edit_and_approve_comes_back_when_a_colleague_takes_over(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path, overrides={"ui.reviewer": "dr.same", "hitl.clinician": "dr.same"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "e")  # edit+approve asked for, refused for dr.same
        assert screen.action is None and not screen.query_one("#review-edit").display
        await type_reviewer(pilot, screen, "dr.lee")
        assert screen.action == "approve_with_edits" and screen.query_one("#review-edit").display
        screen.query_one("#review-edit").text = "Discuss at the tumour board first."
        await pilot.click("#approve_with_edits")
        await signed(pilot, "reviewed")  # the store has the decision before the consult's last steps have run
        assert engine.store.approvals(None)[0].status == "approved_with_edits"
        assert engine.store.approvals(None)[0].reviewer == "dr.lee"


async def test_reject_needs_a_note(tmp_path: Path, notices) -> None:
    app, engine, _ = build(tmp_path, overrides={"ui.reviewer": "dr.lee", "hitl.clinician": "dr.ask"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "a")
        await pilot.click("#reject")  # no note: the clinician would get a refusal without a reason
        await pilot.pause()
        assert engine.store.approvals("pending") and app.screen is screen
        assert any(sev == "error" and "Reject needs a note" in msg for sev, msg in notices)
        screen.query_one("#review-note", Input).value = "not supported by the evidence"
        await pilot.click("#reject")
        await signed(pilot, "refused")
        assert engine.store.approvals(None)[0].status == "rejected"
        assert engine.store.approvals(None)[0].note == "not supported by the evidence"
