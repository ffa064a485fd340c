"""Evidence pane: the passages behind the current answer, rag_confidence up front, and the whole passage on select."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from oncotui.widgets.table_fill import fill_table

COLUMNS = ("id", "document", "section", "page", "distance", "rerank", "grade")
GRADES = {True: ("relevant", "green"), False: ("not relevant", "red"), None: ("ungraded", "dim")}


def _section(section: str) -> str:
    """'## Treatment > ### Metastatic' -> 'Treatment > Metastatic' (Markdown heading marks are noise here)."""
    return re.sub(r"#+\s*", "", section).strip()


def confidence_style(value: float) -> str:
    return "green" if value >= 0.6 else "yellow" if value >= 0.3 else "red"


class EvidencePane(Vertical):
    """``show`` takes anything shaped like engine.state.Retrieval (EvidenceReady has the same fields)."""

    ALLOW_MAXIMIZE = True  # ctrl+o zooms a pane; handy at 80x24
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy_passage", "Copy passage", id="copy_passage"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Evidence"
        self._passages: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Static("[dim]No evidence yet: the passages behind the next answer show here.[/dim]",
                     id="evidence-summary")
        table: DataTable[Any] = DataTable(id="passages", cursor_type="row", zebra_stripes=True)
        yield table
        with VerticalScroll(id="passage-detail"):
            yield Static("", id="passage-text")

    def on_mount(self) -> None:
        self.query_one("#passages", DataTable).add_columns(*COLUMNS)
        self.query_one("#passage-detail").display = False

    def clear(self) -> None:
        self._passages.clear()
        self.query_one("#passages", DataTable).clear()
        self.query_one("#evidence-summary", Static).update(
            "[dim]No evidence yet: the passages behind the next answer show here.[/dim]")
        self.query_one("#passage-detail").display = False
        self.border_subtitle = ""

    def show(self, retrieval: Any, cited: set[str] | frozenset[str] = frozenset()) -> None:
        summary = self.query_one("#evidence-summary", Static)
        table = self.query_one("#passages", DataTable)
        self._passages = {p.id: p for p in retrieval.passages}
        conf = retrieval.rag_confidence
        self.border_subtitle = f"rag_confidence {conf:.2f}"
        if retrieval.gate_passed:
            relevant = sum(1 for p in retrieval.passages if p.relevant)
            summary.update(f"[b {confidence_style(conf)}]rag_confidence {conf:.2f}[/] · "
                           f"{relevant}/{len(retrieval.passages)} relevant"
                           + (f" · cited {', '.join(sorted(cited))}" if cited else ""))
        else:
            summary.update(self._refusal_text(retrieval))
        rows = []
        for p in retrieval.passages:
            grade, colour = GRADES[p.relevant]
            pid = Text(("★ " if p.id in cited else "") + p.id, style="bold" if p.id in cited else "")
            rows.append((p.id, (pid, p.title, _section(p.section), str(p.page or "–"), f"{p.distance:.3f}",
                                "–" if p.rerank_score is None else f"{p.rerank_score:.2f}",
                                Text(grade, style=colour))))
        fill_table(table, COLUMNS, rows, max_width=40)
        self.query_one("#passage-detail").display = False

    def _refusal_text(self, retrieval: Any) -> str:
        if retrieval.closest_title is None:
            return ("[b red]Gate refused: the knowledge base is empty.[/] Index guidelines with "
                    "`oncotui kb ingest --demo` (or your own files).")
        threshold = getattr(retrieval, "threshold", None)  # the gate actually applied (configured or calibrated)
        limit = f" (the gate allows ≤ {threshold:.2f})" if threshold else ""
        distance = f"{retrieval.closest_distance:.3f}" if retrieval.closest_distance is not None else "?"
        return (f"[b red]Gate refused: nothing close enough.[/] Closest: “{escape(retrieval.closest_title)}” "
                f"at distance {distance}{limit}.")

    @on(DataTable.RowHighlighted, "#passages")
    @on(DataTable.RowSelected, "#passages")
    def _show_passage(self, event: DataTable.RowHighlighted | DataTable.RowSelected) -> None:
        # Populating the table highlights row 0: only follow the cursor once the user is in the table.
        if isinstance(event, DataTable.RowHighlighted) and not event.data_table.has_focus:
            return
        passage = self._passages.get(str(event.row_key.value))
        if passage is None:
            return
        where = passage.section + (f", p. {passage.page}" if passage.page else "")
        self.query_one("#passage-text", Static).update(
            f"[b]{escape(passage.id)} · {escape(passage.title)}[/b] [dim]{escape(where)} · "
            f"{escape(passage.source)}[/dim]\n{escape(passage.text)}")
        self.query_one("#passage-detail").display = True

    def action_copy_passage(self) -> None:
        table = self.query_one("#passages", DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        passage = self._passages.get(str(key))
        if passage is not None:
            self.app.copy_to_clipboard(f"[{passage.id}] {passage.title} — {passage.section}\n{passage.text}")
            self.notify(f"Passage {passage.id} copied.")
