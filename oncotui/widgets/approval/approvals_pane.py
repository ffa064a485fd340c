"""Approvals pane: the HITL queue across patients, read from SQLite (items survive restarts)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from oncotui.widgets.table_fill import fill_table

COLUMNS = ("item", "patient", "reason", "since")


class ApprovalsPane(Vertical):
    ALLOW_MAXIMIZE = True  # ctrl+o zooms a pane; handy at 80x24
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "request('approve')", "Approve", id="approve"),
        Binding("e", "request('approve_with_edits')", "Edit+approve", id="approve_with_edits"),
        Binding("r", "request('reject')", "Reject", id="reject"),
    ]

    class ReviewRequested(Message):
        """Open the review screen for an item; ``action`` preselects the decision (None: just look)."""

        def __init__(self, approval_id: str, action: str | None) -> None:
            super().__init__()
            self.approval_id = approval_id
            self.action = action

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Approvals"
        self._shown: tuple[list[str], set[str]] | None = None

    def compose(self) -> ComposeResult:
        yield DataTable(id="approval-table", cursor_type="row")
        yield Static("[dim]Nothing waiting for a reviewer.[/dim]", id="approval-hint")

    def on_mount(self) -> None:
        self.query_one("#approval-table", DataTable).add_columns(*COLUMNS)

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#approval-table", DataTable)

    def set_items(self, items: list[Any], busy: set[str] | frozenset[str] = frozenset()) -> None:
        ids = [i.id for i in items]
        if (ids, set(busy)) == self._shown:  # polled every few seconds: touch nothing (no repaint, no cursor move)
            return
        self._shown = (ids, set(busy))
        self.border_title = f"Approvals ({len(items)} pending)" if items else "Approvals"
        self.query_one("#approval-hint", Static).update(
            "enter review · a approve · e edit · r reject" if items else "[dim]Nothing waiting for a reviewer.[/dim]")
        table = self.table
        row = table.cursor_row
        rows = [(item.id, (item.id + (" …" if item.id in busy else ""), item.thread_id,
                           "; ".join(item.reasons) or "review", item.created_at[5:16].replace("T", " ")))
                for item in items]
        fill_table(table, COLUMNS, rows)
        if items:
            table.move_cursor(row=min(row, len(items) - 1))

    def selected_id(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    @on(DataTable.RowSelected, "#approval-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.ReviewRequested(str(event.row_key.value), None))

    def action_request(self, action: str) -> None:
        approval_id = self.selected_id()
        if approval_id is None:
            self.notify("No approval item selected.", severity="warning")
            return
        self.post_message(self.ReviewRequested(approval_id, action))
