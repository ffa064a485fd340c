"""Help screen (F1): every binding with its id, the key(s) it is on now, and where it works."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Label, Static

from oncotui.widgets.literal import literal
from oncotui.widgets.table_fill import RowTable, fill_table

HelpRow = tuple[str, str, str, str]  # keys, description, where, binding id


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss(None)", "Close help", id="help_close", tooltip="Close this list"),
    ]

    def __init__(self, rows: list[HelpRow], config_source: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.config_source = config_source

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Label("[b]Keys[/b]  (Esc closes)", id="help-title")
            yield RowTable(id="help-table", zebra_stripes=True)
            yield Static("Rebind any key by its id in config.toml, e.g. [b]\\[ui] keymap = { export = \"ctrl+x\" }"
                         "[/b]. ctrl+p opens the command palette (new patient, export, approve, tier, theme)."
                         + (f"\n[dim]Settings: {literal(self.config_source)}[/dim]" if self.config_source else ""),
                         id="help-footer")
        yield Footer(compact=True)  # this screen's keys, not those of the pane behind it

    def on_mount(self) -> None:
        table = self.query_one("#help-table", DataTable)
        # keyed by position: the keys that are not bindings (Enter, Tab) have no id
        fill_table(table, ("key", "what it does", "where", "id"), [(str(i), row) for i, row in enumerate(self.rows)])
        table.focus()
