"""Ingest screen (command palette → "Ingest guidelines"): index files or folders into the knowledge base.

The work runs in a thread worker (embedding is CPU-bound) that reports each document through ``call_from_thread``;
the screen shows a progress bar and, at the end, what was added, what was unchanged and what was skipped and why.
Nothing already indexed is lost when a file is bad: the knowledge base skips it and says so.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, ProgressBar, Static

# open_kb() -> the knowledge base; called in the worker thread because opening Chroma takes a moment
KBOpener = Callable[[], Any]


def parse_paths(text: str) -> list[Path]:
    """Paths as typed: shell-style quoting so folders with spaces work; ``~`` expanded."""
    return [Path(p).expanduser() for p in shlex.split(text)]


class IngestScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    IngestScreen { align: center middle; }
    #ingest-dialog { width: 90; max-width: 95%; height: auto; border: round $accent; padding: 1 2;
                     background: $surface; }
    #ingest-paths { margin: 1 0; }
    #ingest-bar { margin-bottom: 1; }
    #ingest-result { height: auto; max-height: 12; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="ingest_close"),
    ]

    def __init__(self, open_kb: KBOpener, chunk_chars: int, demo_dir: Path) -> None:
        super().__init__()
        self.open_kb = open_kb
        self.chunk_chars = chunk_chars
        self.demo_dir = demo_dir
        self.running = False

    def compose(self) -> ComposeResult:
        with Vertical(id="ingest-dialog"):
            yield Label("[b]Ingest guidelines[/b] · Markdown, text or PDF files and folders (recursive)")
            yield Input(placeholder=f"Paths separated by spaces; empty = the demo set ({self.demo_dir.name}/)",
                        id="ingest-paths")
            yield ProgressBar(id="ingest-bar", show_eta=False)
            yield Static("Enter starts · Esc closes. Unchanged documents are skipped without embedding work.",
                         id="ingest-result")

    def on_mount(self) -> None:
        self.query_one("#ingest-bar", ProgressBar).display = False
        self.query_one(Input).focus()

    def action_close(self) -> None:
        if self.running:
            self.notify("Ingestion continues in the background; the result will appear as a notice.", timeout=4)
        self.dismiss(None)

    @on(Input.Submitted, "#ingest-paths")
    def start(self, event: Input.Submitted) -> None:
        if self.running:
            return
        try:
            paths = parse_paths(event.value) or [self.demo_dir]
        except ValueError as exc:  # unbalanced quotes
            self._result(f"[red]Cannot read the paths: {escape(str(exc))}[/red]")
            return
        missing = [p for p in paths if not p.exists()]
        if missing:
            self._result("[red]Not found:[/red] " + ", ".join(escape(str(p)) for p in missing))
            return
        self.running = True
        bar = self.query_one("#ingest-bar", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self._result("Opening the knowledge base…")
        # The app owns the worker, so closing this screen does not stop the ingestion.
        self.app.run_worker(partial(self.ingest, paths), thread=True, exclusive=True, group="ingest",
                            exit_on_error=False)

    def ingest(self, paths: list[Path]) -> None:
        app = self.app
        try:
            kb = self.open_kb()
            report = kb.ingest(paths, chunk_chars=self.chunk_chars,
                               progress=lambda label, done, total: app.call_from_thread(self._progress, label,
                                                                                        done, total))
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback on screen
            app.call_from_thread(self._finished, f"[red]Ingestion failed: {escape(str(exc))}[/red]", "error")
            return
        lines = [f"Added {report.added_docs}, updated {report.updated_docs}, unchanged {report.skipped_docs} "
                 f"documents; {report.chunks_added} chunks embedded, {report.removed_chunks} removed."]
        lines += [f"[yellow]skipped[/yellow] {escape(str(path))}: {escape(reason)}" for path, reason in report.errors]
        app.call_from_thread(self._finished, "\n".join(lines), "warning" if report.errors else "information")

    def _progress(self, label: str, done: int, total: int) -> None:
        if not self.is_attached:
            return
        self.query_one("#ingest-bar", ProgressBar).update(total=total, progress=done)
        self._result(f"{done}/{total} · {escape(Path(label).name)}")

    def _finished(self, text: str, severity: str) -> None:
        self.running = False
        if self.is_attached:
            self._result(text + "\nEsc closes.")
        else:  # closed while it ran: tell the user anyway
            self.app.notify(text, title="Ingest guidelines", severity=severity, timeout=10)  # type: ignore[arg-type]

    def _result(self, text: str) -> None:
        self.query_one("#ingest-result", Static).update(text)
