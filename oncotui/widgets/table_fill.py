"""Fill a DataTable with columns sized to their content.

DataTable sizes auto-width columns when it next idles, and rows added from outside its own message loop could be
painted (and their lines cached) at header width first: columns stayed cut to "Pancreat" until something else
reached the table (seen in snapshots and tmux). Explicit widths from the data avoid that path altogether.
Strings are shown as plain text: guideline titles and sections are data, never markup.

``flex`` columns (long text: titles, sections, claims) share the width the other columns leave in the table, so the
short columns (scores, states) stay in view and the text uses whatever width the pane has. Put flex columns last:
when even their minimum does not fit, only they scroll off to the right.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.widgets import DataTable

MIN_FLEX = 6  # a flex column never gets less (it scrolls instead)


class RowTable(DataTable[Any]):
    """A table of rows (cursor_type="row"): Home and End go to the first and the last row, as in a list.

    DataTable binds them to scrolling sideways to the first/last column, which a row cursor never shows: they
    seemed to do nothing (left/right still scroll sideways; PageUp/PageDown move a page of rows)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        super().__init__(**kwargs)

    def watch_virtual_size(self, size: Size) -> None:
        """Show or hide the scrollbars for the new content size now, as OptionList and TextArea do.

        DataTable sets its virtual size (when its columns or rows change, on idle) without that, and Textual
        rechecks the scrollbars only when a layout changes the table's size. A table first filled wider than
        it is, then refit to its width, kept its horizontal scrollbar: once shown, the region left for the
        rows had the refit table's exact size, so no layout changed anything (a stray line under the passages
        table, drawn in the track's colour or not by timing). Vertically the same, with rows removed."""
        self._scroll_update(size)  # private in Textual 8.2 (pinned); its own widgets call it so


def fill_table(table: DataTable[Any], columns: Sequence[str], rows: Sequence[tuple[str, Sequence[Any]]],
               max_width: int = 48, flex: Collection[str] = ()) -> None:
    """Replace the table's columns and rows; ``rows`` are (key, cells), cells str or rich Text.

    Without ``flex`` each column is as wide as its content, up to ``max_width``; before the table has a size, the
    flex columns are at their least (the caller refits them once it is laid out).
    """
    cells_by_row = [(key, [c if isinstance(c, Text) else Text(str(c)) for c in cells]) for key, cells in rows]
    natural = [max([len(label), *(cells[i].cell_len for _, cells in cells_by_row)])
               for i, label in enumerate(columns)]
    widths = [min(width, max_width) for width in natural]
    flexible = [i for i, label in enumerate(columns) if label in flex]
    available = _text_width(table, len(cells_by_row))
    if flexible and available > 0:
        pad = 2 * table.cell_padding
        left = available - sum(widths[i] + pad for i in range(len(columns)) if i not in flexible)
        left -= pad * len(flexible)
        for i, width in zip(flexible, _share(left, [natural[i] for i in flexible]), strict=True):
            widths[i] = width
    elif flexible:
        # Not laid out yet: the flex columns at their least until the pane refits them to its width (wider,
        # the first layout would show a horizontal scrollbar until the refit; RowTable drops it then).
        for i in flexible:
            widths[i] = min(MIN_FLEX, natural[i])
    table.clear(columns=True)
    for label, width in zip(columns, widths, strict=True):
        table.add_column(label, width=width, key=label)
    for key, cells in cells_by_row:
        table.add_row(*cells, key=key)


def _text_width(table: DataTable[Any], rows: int) -> int:
    """Columns of cells the table shows without scrolling sideways (0 before its first layout)."""
    width = table.size.width
    if width <= 0:
        return 0
    if rows + int(table.show_header) > table.size.height:  # a vertical scrollbar will take its share
        width -= table.styles.scrollbar_size_vertical
    return width


def _share(space: int, wants: list[int]) -> list[int]:
    """Split ``space`` among columns that want ``wants`` cells: none gets more than it wants, none less than
    MIN_FLEX (or what it wants, if that is less); what a narrow column leaves goes to the wider ones."""
    floor = [min(MIN_FLEX, w) for w in wants]
    got = list(floor)
    space -= sum(floor)
    open_ = [i for i, w in enumerate(wants) if w > got[i]]
    while space > 0 and open_:
        each = max(1, space // len(open_))
        for i in list(open_):
            add = min(each, wants[i] - got[i], space)
            got[i] += add
            space -= add
            if got[i] >= wants[i]:
                open_.remove(i)
            if space <= 0:
                break
    return got
