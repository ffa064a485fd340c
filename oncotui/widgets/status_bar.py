"""The top line: app name, patient / tier / model status, and the demo-model badge."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

BADGE = "demo models: clinically useless"


class StatusBar(Horizontal):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def compose(self) -> ComposeResult:
        yield Label("oncotui", id="brand")
        yield Label("starting…", id="status", markup=False)  # shows patient ids and model labels as they are
        yield Label(BADGE, id="badge")

    def on_mount(self) -> None:
        self.query_one("#badge").display = False

    def set_status(self, text: str) -> None:
        # fixed size (1fr x 1 line): skip the layout pass, which would cost a full-screen frame mid-stream
        self.query_one("#status", Label).update(text, layout=False)

    def show_badge(self, visible: bool) -> None:
        self.query_one("#badge").display = visible
