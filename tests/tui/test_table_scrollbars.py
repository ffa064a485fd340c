"""RowTable (oncotui/widgets/table_fill.py) shows or hides its scrollbars when its content size changes.

DataTable alone kept a horizontal scrollbar once the table had been filled wider than it is and then refitted
to its width: with the bar shown, the region left for the rows had the refitted table's exact size, so no
layout rechecked it (the stray line under the evidence pane's passages table, in the track's colour or not by
timing)."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from oncotui.widgets.table_fill import RowTable, fill_table

WIDTH = 30


class TableApp(App[None]):
    CSS = f"RowTable {{ width: {WIDTH}; height: 3; }}"

    def compose(self) -> ComposeResult:
        yield RowTable(id="table")


def widths(*cells: int) -> list[str]:
    return ["x" * width for width in cells]


async def test_a_refit_table_drops_its_horizontal_scrollbar() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 10)) as pilot:
        table: Any = app.query_one(RowTable)
        wide = widths(18, 18)  # 2 x (18 + 2 padding) = 40 > 30
        fill_table(table, ["a", "b"], [("r1", wide)], max_width=40)
        await pilot.pause()
        await pilot.pause()
        assert table.virtual_size.width > WIDTH and table.show_horizontal_scrollbar
        # now exactly as wide as the table, one row under the header: the size the bar left for the rows
        fill_table(table, ["a", "b"], [("r1", widths(13, 13))], max_width=40)
        for _ in range(3):
            await pilot.pause()
        assert table.virtual_size == (WIDTH, 2)
        assert not table.show_horizontal_scrollbar
        fill_table(table, ["a", "b"], [("r1", wide)], max_width=40)  # too wide again: it scrolls
        for _ in range(3):
            await pilot.pause()
        assert table.show_horizontal_scrollbar
