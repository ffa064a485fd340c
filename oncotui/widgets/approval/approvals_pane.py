"""Approvals pane: the HITL queue across patients, read from SQLite (items survive restarts).

The pane is 28 columns wide at 80x24: there the table shows the patient, the day (or the time, for today) and a
short "why" ("Tier 2", "low confidence", "C2 deferred"), which its ten cells may cut ("Tier 2 (ov"): a line under
the table gives the highlighted item's whole "why", and its tooltip the engine's full reasons (as the review screen
does). That line has the rows the key hint had: Enter is named in the border, and a/e/r are in the footer while the
pane has the focus (the only time they work). With room for them (the pane zoomed with ctrl+o, or a wide terminal) the table adds the item id and shows the
reasons in full, and the line under it has them one per line.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable, Static

from oncotui.clock import shown
from oncotui.widgets.table_fill import RowTable, fill_table

NARROW_COLUMNS = ("patient", "since", "why")
WIDE_COLUMNS = ("item", "patient", "since", "why")
WIDE_FROM = 60  # table columns from which the item id and the full reasons fit
HINT = "enter review"  # in the border; the footer names a/e/r while the table has the focus
EMPTY = Text("Nothing waiting for a reviewer.", style="dim")
_DEFERRED = re.compile(r"claim (\S+) deferred", re.IGNORECASE)


def short_reasons(reasons: tuple[str, ...] | list[str]) -> str:
    """The hitl_gate's reasons (engine/nodes/hitl_gate.py, governor.review_reasons) in a few words each."""
    tags: list[str] = []
    deferred: list[str] = []
    for reason in reasons:
        lowered = reason.lower()
        if match := _DEFERRED.match(reason):
            deferred.append(match.group(1))
            continue
        overridden = "override" in lowered or "forced" in lowered  # the clinician chose the tier, either way
        tag = ("Tier 2 (override)" if lowered.startswith("tier 2") and overridden else
               "Tier 2" if lowered.startswith("tier 2") else
               "instructions in note" if "instruction-like" in lowered else
               "poisoned passage" if lowered.startswith("retrieved passage") and "instructions" in lowered else
               "no treatment named" if "names a treatment" in lowered else
               "no drug named" if "asks for a drug" in lowered else
               "trial results only" if "trials' results" in lowered else
               "off-subject question" if "no retrieved guideline passage mentions" in lowered else
               "low confidence" if lowered.startswith("low retrieval confidence") else reason)
        if tag not in tags:
            tags.append(tag)
    if deferred:
        tags.append(", ".join(deferred) + " deferred")
    return ", ".join(tags) or "review"


def since(created_at: str, wide: bool, today: str | None = None) -> str:
    """'03-14 09:30' (local time) when there is room; else the time for an item queued today, the day if
    not."""
    if wide:
        return shown(created_at, "%m-%d %H:%M")
    today = today or datetime.now().date().isoformat()
    return (shown(created_at, "%H:%M") if shown(created_at, "%Y-%m-%d") == today
            else shown(created_at, "%m-%d"))


class ApprovalsPane(Vertical):
    ALLOW_MAXIMIZE = True  # ctrl+o zooms a pane; handy at 80x24
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "request('approve')", "Approve", id="approve", tooltip="Approve the highlighted item"),
        Binding("e", "request('approve_with_edits')", "Edit", id="approve_with_edits",
                tooltip="Edit the draft, then approve"),
        Binding("r", "request('reject')", "Reject", id="reject", tooltip="Reject it (a note says why)"),
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
        self._items: list[Any] = []
        self._busy: set[str] = set()
        self._shown: tuple[list[str], set[str], bool, int] | None = None

    def compose(self) -> ComposeResult:
        yield RowTable(id="approval-table")
        yield Static(EMPTY, id="approval-detail", markup=False)

    def on_mount(self) -> None:
        self.query_one("#approval-table", DataTable).add_columns(*NARROW_COLUMNS)

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#approval-table", DataTable)

    def set_items(self, items: list[Any], busy: set[str] | frozenset[str] = frozenset()) -> None:
        self._items, self._busy = list(items), set(busy)
        self._fill()

    def _fill(self) -> None:
        items, busy, table = self._items, self._busy, self.table
        wide = table.size.width >= WIDE_FROM
        shown = ([i.id for i in items], set(busy), wide, table.size.width)
        if shown == self._shown:  # polled every few seconds: touch nothing (no repaint, no cursor move)
            return
        self._shown = shown
        self.border_title = f"Approvals ({len(items)} pending)" if items else "Approvals"
        self.border_subtitle = HINT if items else ""
        row = table.cursor_row
        rows = []
        for item in items:
            why = ("; ".join(item.reasons) or "review") if wide else short_reasons(item.reasons)
            cells = (item.thread_id + (" …" if item.id in busy else ""), since(item.created_at, wide), why)
            rows.append((item.id, (item.id, *cells) if wide else cells))
        fill_table(table, WIDE_COLUMNS if wide else NARROW_COLUMNS, rows, flex=("why",))
        if items:
            table.move_cursor(row=min(row, len(items) - 1))
        self._show_detail()

    def on_resize(self) -> None:
        # the table has its new width only after this layout: refill once it is laid out (zoom, terminal resize)
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        if self.is_attached and self.query_one_optional("#approval-table", DataTable) is not None:  # not shut down
            self._fill()

    @on(DataTable.RowHighlighted, "#approval-table")
    def _show_detail(self) -> None:
        """The highlighted item's reasons, whole, under the table (the table's "why" column may cut them)."""
        detail = self.query_one("#approval-detail", Static)
        item = next((i for i in self._items if i.id == self.selected_id()), None)
        if item is None:
            detail.update(EMPTY)
            detail.tooltip = None
            return
        reasons = "\n".join(item.reasons) or "review"
        wide = self.table.size.width >= WIDE_FROM
        detail.update(reasons if wide else Text.assemble(("why ", "dim"), short_reasons(item.reasons)))
        detail.tooltip = reasons  # the engine's own words, also in the narrow pane (mouse)

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
