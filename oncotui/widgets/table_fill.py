"""Fill a DataTable with columns sized to their content.

DataTable sizes auto-width columns when it next idles, and rows added from outside its own message loop could be
painted (and their lines cached) at header width first: columns stayed cut to "Pancreat" until something else
reached the table (seen in snapshots and tmux). Explicit widths from the data avoid that path altogether.
Strings are shown as plain text: guideline titles and sections are data, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable


def fill_table(table: DataTable[Any], columns: Sequence[str], rows: Sequence[tuple[str, Sequence[Any]]],
               max_width: int = 48) -> None:
    """Replace the table's columns and rows; ``rows`` are (key, cells), cells str or rich Text."""
    cells_by_row = [(key, [c if isinstance(c, Text) else Text(str(c)) for c in cells]) for key, cells in rows]
    table.clear(columns=True)
    for i, label in enumerate(columns):
        width = max([len(label), *(cells[i].cell_len for _, cells in cells_by_row)])
        table.add_column(label, width=min(width, max_width), key=label)
    for key, cells in cells_by_row:
        table.add_row(*cells, key=key)
