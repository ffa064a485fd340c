"""Evidence pane: the claims of the current answer with their release states, the passages behind them
(rag_confidence up front), and the whole passage or claim on select.

Claims table: one row per atomic claim of the claim-evidence ledger (engine/ledger.py) with the governor's state
(supported / qualified / deferred / blocked), its support score and the passages it cites. Moving onto a claim
marks the passages it cites (▶ in the passages table) and shows why the claim got its state.

Both tables put the numbers first (relevance grade, rerank score, distance; state and support) so they are in view
at 80 columns, and the long text last, sharing whatever width the pane has (table_fill's flex columns; refitted
when the pane is resized or zoomed). Stored text is shown literally (oncotui.widgets.literal).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from oncotui.widgets.literal import literal
from oncotui.widgets.table_fill import RowTable, fill_table

def _display_text(text: str) -> str:
    """A claim as the report shows it (engine.safety.display_text); imported here so the app starts without engine."""
    from engine.safety import display_text

    return display_text(text)


class FitTable(RowTable):
    """A DataTable that tells its pane when its own width changes: the pane's size may stay the same while a table's
    changes (layout settling after rows arrive, a neighbour appearing), and its columns are fitted to its width."""

    class Resized(Message):
        pass

    def on_resize(self, event: events.Resize) -> None:
        self.post_message(self.Resized())


COLUMNS = ("id", "relevant", "rerank", "dist", "p.", "document", "section")
FLEX = ("document", "section")
CLAIM_COLUMNS = ("claim", "state", "support", "cites", "text")
CLAIM_FLEX = ("text",)
GRADES = {True: ("yes", "green"), False: ("no", "red"), None: ("–", "dim")}  # the relevance grader's verdict
GRADE_WORDS = {True: "relevant", False: "not relevant", None: "ungraded"}
# Case fit overrides the grade: a passage about another cancer than the case's is not used, however relevant.
OTHER_CANCER = ("other cancer", "yellow")
OTHER_CANCER_WORDS = ("about another cancer than the case's: not used for this case (never offered to the model in "
                      "evidence-locked mode; a claim citing only it is blocked)")


STATE_STYLES = {"supported": "green", "qualified": "yellow", "deferred": "magenta", "blocked": "bold red"}
# The detail (a passage or claim in full) is shown only with room for its top border and five lines while the
# passages table keeps its header and two rows; a shorter pane (the narrow layout at 80x24: 7 rows inside) is
# zoomed on Enter instead of squeezing the detail into one clipped line.
DETAIL_ROWS = 6
PASSAGE_ROWS = 3
ZOOMED_HINT = "zoomed to show it · ctrl+o restores the panes"


def _section(section: str) -> str:
    """'## Treatment > ### Metastatic' -> 'Treatment > Metastatic' (Markdown heading marks are noise here)."""
    from kb.chunking import plain_section  # on first evidence, not at start (its regexes cost ~10 ms)

    return plain_section(section or "")


def confidence_style(value: float) -> str:
    return "green" if value >= 0.6 else "yellow" if value >= 0.3 else "red"


class EvidencePane(Vertical):
    """``show`` takes anything shaped like engine.state.Retrieval (EvidenceReady has the same fields)."""

    ALLOW_MAXIMIZE = True  # ctrl+o zooms a pane; handy at 80x24
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy_passage", "Copy", id="copy_passage", tooltip="Copy the highlighted passage"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Evidence"
        self._passages: dict[str, Any] = {}
        self._claims: dict[str, Any] = {}
        self._cited: frozenset[str] = frozenset()
        self.marked: frozenset[str] = frozenset()  # passages cited by the claim under the cursor
        self._fitted: dict[str, int] = {}  # table id -> the width its text columns were fitted to

    def compose(self) -> ComposeResult:
        yield Static("[dim]No evidence yet: the passages behind the next answer show here.[/dim]",
                     id="evidence-summary")
        claims: DataTable[Any] = FitTable(id="claims", cursor_type="row")
        claims.display = False
        yield claims
        table: DataTable[Any] = FitTable(id="passages", cursor_type="row", zebra_stripes=True)
        yield table
        with VerticalScroll(id="passage-detail"):
            yield Static("", id="passage-text")

    def on_mount(self) -> None:
        self.query_one("#passages", DataTable).add_columns(*COLUMNS)
        self.query_one("#passage-detail").display = False

    def clear(self) -> None:
        self._passages.clear()
        self._claims.clear()
        self.marked = frozenset()
        self.query_one("#passages", DataTable).clear()
        self.query_one("#claims", DataTable).clear()
        self.query_one("#claims").display = False
        self.query_one("#evidence-summary", Static).update(
            "[dim]No evidence yet: the passages behind the next answer show here.[/dim]")
        self.query_one("#passage-detail").display = False
        self.border_subtitle = ""

    def show(self, retrieval: Any, cited: set[str] | frozenset[str] = frozenset(), ledger: Any = None) -> None:
        """``ledger``: an engine.state.Ledger (claims with release states) or None before the governor ran."""
        summary = self.query_one("#evidence-summary", Static)
        self._passages = {p.id: p for p in retrieval.passages}
        self._cited = frozenset(cited)
        self.marked = frozenset()
        conf = retrieval.rag_confidence
        self.border_subtitle = f"rag_confidence {conf:.2f}"
        if retrieval.gate_passed:
            relevant = sum(1 for p in retrieval.passages if p.usable)
            other = sum(1 for p in retrieval.passages if p.other_cancer)
            text = (f"[b {confidence_style(conf)}]rag_confidence {conf:.2f}[/] · "
                    f"{relevant}/{len(retrieval.passages)} relevant"
                    + (f" · [yellow]{other} about another cancer[/]" if other else "")
                    + (f" · cited {literal(', '.join(sorted(cited)))}" if cited else ""))
        else:
            text = self._refusal_text(retrieval)
        self._show_claims(ledger)
        if self._claims:
            states = [c.state for c in self._claims.values()]
            text += " · claims: " + ", ".join(
                f"[{STATE_STYLES[s]}]{states.count(s)} {s}[/]" for s in STATE_STYLES if s in states)
        summary.update(text)
        self._fill_passages(keep_cursor=False)
        self.query_one("#passage-detail").display = False
        self.call_after_refresh(self._refit)  # a table shown just now has no width yet: fit it once laid out

    def _fill_passages(self, keep_cursor: bool = True) -> None:
        table = self.query_one("#passages", DataTable)
        row = table.cursor_row if keep_cursor else 0
        rows = []
        for p in self._passages.values():
            grade, colour = OTHER_CANCER if p.other_cancer else GRADES[p.relevant]
            mark = "▶ " if p.id in self.marked else "★ " if p.id in self._cited else ""
            style = "reverse bold" if p.id in self.marked else "bold" if p.id in self._cited else ""
            rows.append((p.id, (Text(mark + p.id, style=style), Text(grade, style=colour),
                                "–" if p.rerank_score is None else f"{p.rerank_score:.2f}", f"{p.distance:.3f}",
                                str(p.page or "–"), p.title, _section(p.section))))
        fill_table(table, COLUMNS, rows, max_width=40, flex=FLEX)
        # no taller than its header and rows (no horizontal scrollbar: app.tcss): the detail gets the rest
        table.styles.max_height = max(PASSAGE_ROWS, len(rows) + 1)
        self._fitted["passages"] = table.size.width
        if rows and row > 0:
            table.move_cursor(row=min(row, len(rows) - 1), animate=False)

    def _show_claims(self, ledger: Any) -> None:
        table = self.query_one("#claims", DataTable)
        claims = tuple(ledger.claims) if ledger is not None else ()
        self._claims = {c.id: c for c in claims}
        table.display = bool(claims)
        if not claims:
            table.clear(columns=True)
            return
        # An explicit height: "auto" measures the table before its rows exist (0 lines); the header + up to 5 rows
        table.styles.height = min(len(claims), 5) + 1
        table.styles.overflow_x = "hidden"  # a scrollbar would take the only row line; select a claim to read it all
        self._fill_claims(keep_cursor=False)

    def _fill_claims(self, keep_cursor: bool = True) -> None:
        table = self.query_one("#claims", DataTable)
        row = table.cursor_row if keep_cursor else 0
        rows = [(c.id, (c.id, Text(c.state, style=STATE_STYLES.get(c.state, "")), f"{c.support:.2f}",
                        ",".join(c.evidence) or "–", _display_text(c.text))) for c in self._claims.values()]
        fill_table(table, CLAIM_COLUMNS, rows, max_width=60, flex=CLAIM_FLEX)
        self._fitted["claims"] = table.size.width
        if rows and row > 0:
            table.move_cursor(row=min(row, len(rows) - 1), animate=False)

    def on_resize(self) -> None:
        """Refit the text columns to the new width (terminal resized, pane zoomed with ctrl+o) once the tables
        have their new size; hide the detail when the pane gets too short for it (restored after a zoom)."""
        if self._passages or self._claims:
            self.call_after_refresh(self._refit)
        self.call_after_refresh(self._fit_detail)

    def _fit_detail(self) -> None:
        if not self.is_attached:
            return
        detail = self.query_one("#passage-detail")
        if not self.is_maximized:
            detail.border_title = ""  # the hint is about the zoom Enter made
            if detail.display and self._cramped():
                detail.display = False

    def on_fit_table_resized(self, message: FitTable.Resized) -> None:
        message.stop()
        self.on_resize()

    def _refit(self) -> None:
        if not self.is_attached:
            return
        claims, passages = self.query_one("#claims", DataTable), self.query_one("#passages", DataTable)
        if self._claims and claims.size.width and claims.size.width != self._fitted.get("claims"):
            self._fill_claims()
        if self._passages and passages.size.width and passages.size.width != self._fitted.get("passages"):
            self._fill_passages()

    def select_claim(self, claim_id: str, zoom: bool = False) -> None:
        """Mark the passages ``claim_id`` cites and show the claim's verdict (the claims table calls this).
        ``zoom``: zoom a pane too short to show it, as Enter does."""
        claim = self._claims.get(claim_id)
        if claim is None:
            return
        self.marked = frozenset(claim.evidence)
        self._fill_passages()
        links = "\n".join(
            f"  {literal(link.passage_id)}: {literal(link.verdict)} · lexical {link.lexical:.2f}"
            + ("" if link.cross_encoder is None else f" · cross-encoder {link.cross_encoder:.2f}")
            for link in claim.links) or "  (no valid citation)"
        reasons = "; ".join(claim.reasons) or "not governed"
        self.query_one("#passage-text", Static).update(
            f"[b]{literal(claim.id)} · [{STATE_STYLES.get(claim.state, '')}]{literal(claim.state)}[/][/b] "
            f"[dim]support {claim.support:.2f}[/dim]\n{literal(_display_text(claim.text))}\n"
            f"[b]Why:[/b] {literal(reasons)}\n"
            f"[b]Cited passages (▶):[/b]\n{links}")
        self._show_detail(zoom)

    def _cramped(self) -> bool:
        """Too short to show the detail under the summary, the claims and a few passage rows."""
        above = sum(widget.outer_size.height for widget in (self.query_one("#evidence-summary"),
                                                            self.query_one("#claims")) if widget.display)
        return self.content_size.height - above < PASSAGE_ROWS + DETAIL_ROWS

    def _show_detail(self, zoom: bool = False) -> None:
        """Show the detail where there is room for it. In a cramped pane moving the cursor only updates its
        text (the tables keep their rows); Enter (``zoom``) zooms the pane, as ctrl+o does, and says how to go
        back."""
        detail = self.query_one("#passage-detail")
        if self._cramped() and not self.is_maximized:
            if not zoom:
                detail.display = False
                return
            self.screen.maximize(self, container=False)
            detail.border_title = ZOOMED_HINT
        detail.display = True

    @on(DataTable.RowHighlighted, "#claims")
    @on(DataTable.RowSelected, "#claims")
    def _claim_row(self, event: DataTable.RowHighlighted | DataTable.RowSelected) -> None:
        if isinstance(event, DataTable.RowHighlighted) and not event.data_table.has_focus:
            return
        self.select_claim(str(event.row_key.value), zoom=isinstance(event, DataTable.RowSelected))

    def _refusal_text(self, retrieval: Any) -> str:
        if retrieval.closest_title is None:
            return ("[b red]Gate refused: the knowledge base is empty.[/] Index guidelines with "
                    "`oncotui kb ingest --demo` (or your own files).")
        threshold = getattr(retrieval, "threshold", None)  # the gate actually applied (configured or calibrated)
        limit = f" (the gate allows ≤ {threshold:.2f})" if threshold else ""
        distance = f"{retrieval.closest_distance:.3f}" if retrieval.closest_distance is not None else "?"
        k, value = getattr(retrieval, "gate_k", 1), getattr(retrieval, "gate_value", None)
        if k > 1 and value is not None:  # the calibrated gate averages the k nearest chunks
            limit = f"; the mean distance of the {k} nearest is {value:.3f}" + limit
        return (f"[b red]Gate refused: nothing close enough.[/] Closest: “{literal(retrieval.closest_title)}” "
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
        where = _section(passage.section) + (f", p. {passage.page}" if passage.page else "")
        grade = OTHER_CANCER_WORDS if passage.other_cancer else GRADE_WORDS[passage.relevant]
        rerank = "" if passage.rerank_score is None else f" · rerank {passage.rerank_score:.2f}"
        self.query_one("#passage-text", Static).update(
            f"[b]{literal(passage.id)} · {literal(passage.title)}[/b] [dim]{literal(where)} · "
            f"{literal(passage.source)}[/dim]\n[dim]{grade} · {distance_words(passage)}{rerank}[/dim]\n"
            # line by line, so lists and paragraphs keep their shape; citation markers ("[[27](#cit/...)]")
            # dropped
            f"{literal(chr(10).join(_display_text(line) for line in passage.text.splitlines()))}")
        self._show_detail(zoom=isinstance(event, DataTable.RowSelected))

    def action_copy_passage(self) -> None:
        table = self.query_one("#passages", DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        passage = self._passages.get(str(key))
        if passage is not None:
            self.app.copy_to_clipboard(f"[{passage.id}] {passage.title} — {_section(passage.section)}\n{passage.text}")
            self.notify(f"Passage {passage.id} copied.", markup=False)


def distance_words(passage: Any) -> str:
    """The passage's distance as the detail line says it: an options list (kb/outline.py, added beside a kept
    passage) carries that passage's distance, not its own."""
    if getattr(passage, "origin", "") == "options":
        return f"options list above a kept passage; that passage's distance {passage.distance:.3f}"
    return f"distance {passage.distance:.3f}"
