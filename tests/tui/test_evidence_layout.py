"""Evidence pane layout: the numbers a clinician weighs (relevance grade, rerank, distance; claim state and support)
are in view at 80x24 and up without scrolling sideways, the long text columns come last and use the width the pane
has (also after zooming it), and section names are plain heading paths, not Markdown."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from tests.fakes import FakeModel
from tests.tui.conftest import build, submit, wait_for
from tests.tui.test_claims_pane import DRAFT

CASE = "Pancreatic adenocarcinoma and early breast cancer: options?"
NUMBERS = ("id", "relevant", "rerank", "dist")
CLAIM_NUMBERS = ("claim", "state", "support", "cites")


def column_spans(table: DataTable[Any]) -> dict[str, tuple[int, int]]:
    """column label -> (first cell x, end x) inside the table's content, as drawn with no horizontal scroll."""
    spans, x = {}, 0
    for column in table.ordered_columns:
        width = column.get_render_width(table)
        spans[str(column.label)] = (x, x + width)
        x += width
    return spans


def in_view(table: DataTable[Any], labels: tuple[str, ...]) -> bool:
    visible = table.scrollable_content_region.width
    spans = column_spans(table)
    return table.scroll_x == 0 and all(spans[label][1] <= visible for label in labels)


def assert_in_view(table: DataTable[Any], labels: tuple[str, ...]) -> None:
    visible = table.scrollable_content_region.width
    spans = column_spans(table)
    assert table.scroll_x == 0
    for label in labels:
        assert spans[label][1] <= visible, (label, spans, visible)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)])
async def test_scores_are_in_view_and_sections_are_plain(tmp_path: Path, size: tuple[int, int]) -> None:
    app, _engine, _ = build(tmp_path, model=FakeModel(outputs=[DRAFT]))
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        await submit(pilot, CASE)
        passages = app.evidence.query_one("#passages", DataTable)
        claims = app.evidence.query_one("#claims", DataTable)
        # the tables are refitted after the layout settles (slower under load): wait for it, then check (the
        # asserts below say which column is out of view if it never settles)
        with contextlib.suppress(AssertionError):
            await wait_for(pilot, lambda: in_view(passages, NUMBERS) and in_view(claims, CLAIM_NUMBERS)
                           and (size[0] < 120 or in_view(claims, ("text",))), timeout=30)
        labels = [str(c.label) for c in passages.ordered_columns]
        assert labels[:4] == list(NUMBERS) and labels[-2:] == ["document", "section"]  # numbers first
        assert_in_view(passages, NUMBERS)
        assert_in_view(claims, CLAIM_NUMBERS)
        assert not passages.show_horizontal_scrollbar  # fitted to the pane: no bar taking a row's line
        row = [str(cell) for cell in passages.get_row_at(0)]
        assert row[1] == "yes" and row[2] == "4.00" and row[3] == "0.310"
        assert row[-1] == "Treatment > Metastatic"  # "## Treatment > ### Metastatic" in the store
        if size[0] >= 120:  # room for everything: the text columns fill the rest of the pane
            assert_in_view(passages, tuple(labels))
            assert_in_view(claims, ("text",))


async def test_claim_text_uses_the_zoomed_width(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path, model=FakeModel(outputs=[DRAFT]))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await submit(pilot, CASE)
        claims = app.evidence.query_one("#claims", DataTable)
        await wait_for(pilot, lambda: in_view(claims, ("text",)), timeout=30)  # fitted to the pane first
        narrow = claims.ordered_columns[-1].width
        await pilot.press("f4")
        await wait_for(pilot, lambda: app.focused is app.evidence.query_one("#passages"))
        await pilot.press("ctrl+o")  # zoom the evidence pane to the whole screen
        longest = max(len(str(claims.get_row_at(i)[-1])) for i in range(claims.row_count))
        await wait_for(pilot, lambda: claims.ordered_columns[-1].width > narrow)
        text = claims.ordered_columns[-1].width
        assert text >= min(longest, 100), (text, longest)  # well beyond the old 60-character cut
        assert_in_view(claims, ("text",))
        await pilot.press("ctrl+o")  # and back: refitted to the pane again
        await wait_for(pilot, lambda: claims.ordered_columns[-1].width == narrow)
        assert_in_view(claims, CLAIM_NUMBERS)


def test_an_options_list_passage_says_whose_distance_it_shows() -> None:
    from engine.state import Passage
    from oncotui.widgets.evidence.evidence_pane import distance_words

    kept = Passage("E4", "c4", "NSCLC", "nsclc.md", "## Stage IV > ### ALK inhibitors", None, "x", 0.2091, 5.4)
    assert distance_words(kept) == "distance 0.209"
    listed = Passage("E8", "c:6", "NSCLC", "nsclc.md", "## Stage IV > ### ALK inhibitors", None, "x", 0.2091, 5.4,
                     origin="options")
    assert distance_words(listed) == "options list above a kept passage; that passage's distance 0.209"
