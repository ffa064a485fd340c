"""Layout at the default terminal size, 80x24 (QA, both fine at 200x50):

- the review screen gave the draft a 4-row box (about two lines of a long draft) and, approving with edits,
  the editor its border only: the reviewer edited and signed text they could not see. The draft (or the
  editor) now gets most of the dialog, with the reviewer id, the note, the buttons and the signer in view;
- in the evidence pane Enter on a passage (or a claim) laid the detail out one row high on the pane's border:
  nothing visible happened. A pane too short for the detail is zoomed on Enter, and says how to go back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.widgets import Button, DataTable

from tests.fakes import FakeModel
from tests.tui.conftest import TIER1_CASE, TIER2_CASE, build, signed, submit, wait_for
from tests.tui.test_claims_pane import DRAFT
from tests.tui.test_flows import open_review
from tests.tui.test_review_gaps import pane_text

CONTROLS = ("#review-reviewer", "#review-note", "#review-buttons", "#review-signing")


def assert_in_view(inside: Region, screen: Any, selectors: tuple[str, ...]) -> None:
    """Each widget is laid out (not zero-sized) and wholly inside ``inside`` (not clipped by the dialog)."""
    for selector in selectors:
        region = screen.query_one(selector).region
        assert region.height and inside.contains_region(region), (selector, region, inside)
    for button in screen.query(Button):
        region = button.region
        assert region.width and inside.contains_region(region), (button.id, region, inside)


async def review(pilot: Any, key: str) -> Any:
    """A Tier 2 consult waiting for review, opened from the approvals queue with ``key``."""
    await pilot.press("n")
    await submit(pilot, TIER2_CASE)
    screen = await open_review(pilot, key)
    await pilot.pause()
    return screen


@pytest.mark.parametrize("key", ["enter", "a"])
async def test_the_draft_gets_most_of_the_review_dialog(tmp_path: Path, key: str) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await review(pilot, key)
        inside = screen.query_one("#review-dialog").content_region
        preview = screen.query_one("#review-preview")
        rows = preview.region.height
        assert rows >= 10 and 2 * rows > inside.height, (preview.region, inside)
        shown = pane_text(app, preview)
        assert "Assessment" in shown and "Recommendations" in shown and "FOLFIRINOX" in shown, shown
        assert preview.max_scroll_y > 0  # the rest of the draft scrolls
        assert_in_view(inside, screen, CONTROLS)


async def test_the_editor_gets_the_rows_and_the_edit_can_be_signed(tmp_path: Path) -> None:
    """Approve with edits at 80x24: the editor replaces the preview (it holds the same text) and shows
    several lines; the critic's findings, fields and buttons stay in view; Tab reaches the note; Enter signs.
    """
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await review(pilot, "e")
        inside = screen.query_one("#review-dialog").content_region
        editor = screen.query_one("#review-edit")
        assert app.focused is editor and not screen.query_one("#review-preview").display
        assert editor.region.height >= 8, editor.region
        shown = pane_text(app, editor)
        assert "## Assessment" in shown and "## Recommendations" in shown, shown
        assert_in_view(inside, screen, ("#review-checks-box", *CONTROLS))
        editor.text = editor.text.replace("## Assessment", "## Assessment (edited)")
        for _ in range(4):  # the editor, the reviewer id, the note
            if app.focused is screen.query_one("#review-note"):
                break
            await pilot.press("tab")
        assert app.focused is screen.query_one("#review-note")
        await pilot.press(*"ok", "enter")
        await signed(pilot, "reviewed")
        assert engine.store.approval(screen.item.id).status == "approved_with_edits"
        assert "Assessment (edited)" in app.chat.views[screen.item.consult_id].report


@pytest.mark.parametrize(("size", "preview_shown"), [((100, 30), False), ((120, 40), True)])
async def test_the_editor_has_room_at_larger_sizes(tmp_path: Path, size: tuple[int, int],
                                                   preview_shown: bool) -> None:
    """Below 40 rows the editor alone (the preview and the editor had three lines each at 100x30); from 40
    rows the preview stays beside it for comparison, each with several lines."""
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await review(pilot, "e")
        preview = screen.query_one("#review-preview")
        assert screen.query_one("#review-edit").region.height >= 8
        assert preview.display is preview_shown
        if preview_shown:
            assert preview.region.height >= 6
        inside = screen.query_one("#review-dialog").content_region
        assert_in_view(inside, screen, ("#review-checks-box", *CONTROLS))


async def consult_in_evidence(pilot: Any, focus: str = "#passages") -> None:
    app = pilot.app
    await pilot.press("n")
    await submit(pilot, "Pancreatic adenocarcinoma and early breast cancer: options?")
    await pilot.press("f4")
    await wait_for(pilot, lambda: app.focused is app.evidence.query_one("#passages"))
    if focus == "#claims":
        await pilot.press("shift+tab")
        await wait_for(pilot, lambda: app.focused is app.evidence.query_one("#claims"))


def detail_in_view(app: Any) -> bool:
    detail = app.evidence.query_one("#passage-detail")
    return (detail.display and detail.region.height >= 6
            and app.evidence.content_region.contains_region(detail.region))


async def test_enter_on_a_passage_at_80x24_shows_it_whole(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await consult_in_evidence(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: detail_in_view(app))
        assert app.evidence.is_maximized  # the narrow pane has no room for it: zoomed, as ctrl+o does
        detail = app.evidence.query_one("#passage-detail")
        shown = pane_text(app, detail)
        assert "Olaparib maintenance is an option" in shown and "ctrl+o restores" in shown, shown
        passages = app.evidence.query_one("#passages", DataTable)
        assert passages.region.height >= 3 and app.evidence.content_region.contains_region(passages.region)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not app.evidence.is_maximized and not detail.display)
        await pilot.pause()
        # back in the narrow pane: no clipped one-line detail under the table; its header and cursor row show
        assert passages.region.y + 2 <= app.evidence.content_region.bottom, passages.region


async def test_claims_at_80x24_mark_passages_and_enter_shows_the_verdict(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path, model=FakeModel(outputs=[DRAFT]))
    async with app.run_test(size=(80, 24)) as pilot:
        await consult_in_evidence(pilot, "#claims")
        await pilot.press("down")  # onto C2: its passage is marked; the tables keep their rows (no detail)
        await wait_for(pilot, lambda: app.evidence.marked == frozenset({"E2"}))
        await pilot.pause()
        assert not app.evidence.query_one("#passage-detail").display and not app.evidence.is_maximized
        await pilot.press("enter")
        await wait_for(pilot, lambda: detail_in_view(app))
        shown = pane_text(app, app.evidence.query_one("#passage-detail"))
        assert "C2" in shown and "Why:" in shown and "another cancer" in shown, shown
        claims = app.evidence.query_one("#claims", DataTable)
        assert claims.ordered_columns[-1].width >= 30  # the claim's text column has the zoomed pane's width


async def test_a_tall_pane_shows_the_passage_in_place(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await consult_in_evidence(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: detail_in_view(app))
        assert not app.evidence.is_maximized
        shown = pane_text(app, app.evidence.query_one("#passage-detail"))
        assert "Olaparib maintenance is an option" in shown and "ctrl+o" not in shown, shown


async def test_a_passage_is_shown_without_pdq_citation_markup(tmp_path: Path) -> None:
    """The detail showed "[[27](#cit/section_8.27)]" after sentences, as stored; now as the report shows
    them."""
    from dataclasses import replace as dc_replace

    from tests.fakes import PANCREAS_PASSAGE, FakeKB

    kb = FakeKB()
    kb.docs[0] = dc_replace(kb.docs[0], text=PANCREAS_PASSAGE + "[[27](#cit/section_8.27)]\n- Second *line*.")
    app, _engine, _ = build(tmp_path, kb=kb)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE)
        await pilot.press("f4")
        await wait_for(pilot, lambda: app.focused is app.evidence.query_one("#passages"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.evidence.query_one("#passage-detail").display)
        shown = str(app.evidence.query_one("#passage-text").content)
        assert "without progression." in shown and "#cit/" not in shown and "[[27]" not in shown
        assert "\n- Second line." in shown  # lines kept apart
