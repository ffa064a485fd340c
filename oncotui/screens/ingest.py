"""Ingest screen (command palette → "Ingest guidelines"): index files or folders into the knowledge base.

The work runs in a thread worker (embedding is CPU-bound). The worker only records where it is (documents done,
chunks embedded of chunks chunked); a timer on the screen shows it, so the worker never waits for the UI. At the end
the screen says what ``oncotui kb ingest`` says: what was added, updated, unchanged and moved; patient-facing files
skipped (and how to index them); duplicates; files that failed. Then the same gate step as the CLI: on a collection
that holds only the demo set the Stage 2 gate is calibrated on the shipped demo questions, otherwise a note says
when the gate runs on a threshold not calibrated on this collection's own questions.
Nothing already indexed is lost when a file is bad: the knowledge base skips it and says so.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Checkbox, Input, Label, ProgressBar, Static

# open_kb() -> the knowledge base; called in the worker thread because opening Chroma takes a moment
KBOpener = Callable[[], Any]

PATIENT_HINT = ("tick “Include patient-facing material” and ingest again to index them "
                "(CLI: `oncotui kb ingest --include-patient-material`)")


def parse_paths(text: str) -> list[Path]:
    """Paths as typed: shell-style quoting so folders with spaces work; ``~`` expanded."""
    return [Path(p).expanduser() for p in shlex.split(text)]


def _shown(path: str, roots: Sequence[Path]) -> str:
    """``path`` relative to the ingested folder that holds it (what the user typed tells which folder); else whole."""
    p = Path(path)
    for root in roots:
        if root.is_dir():
            for base in (root.resolve(), root.absolute()):  # sources are resolved; broken links are not
                try:
                    rel = str(p.relative_to(base))
                except ValueError:
                    continue
                return rel if rel != "." else path
    return path


def _patient_reason(reason: str) -> str:
    """kb's "patient-facing material (WHY)" as WHY: the line already says patient-facing."""
    prefix = "patient-facing material ("
    return reason[len(prefix):-1] if reason.startswith(prefix) and reason.endswith(")") else reason


def _duplicate_reason(reason: str, roots: Sequence[Path]) -> str:
    """kb's "duplicate of PATH (identical content); ..." with PATH shown as the other paths are."""
    prefix, sep, rest = reason.partition(" (identical content)")
    if not sep or not prefix.startswith("duplicate of "):
        return reason
    return f"duplicate of {_shown(prefix[len('duplicate of '):], roots)}{sep}{rest}"


def report_lines(report: Any, roots: Sequence[Path] = ()) -> list[str]:
    """The ingest report as Rich-markup lines: the counts, then one line per moved / patient-facing / duplicate /
    failed file, and a summary of what was not indexed (as ``oncotui kb ingest`` prints it)."""
    def show(path: str) -> str:
        return escape(_shown(path, roots))

    moved = f", moved {len(report.moved)}" if report.moved else ""
    lines = [f"Added {report.added_docs}, updated {report.updated_docs}, unchanged {report.skipped_docs}{moved} "
             f"documents; {report.chunks_added} chunks embedded, {report.removed_chunks} removed."]
    lines += [f"[cyan]moved[/cyan] {show(old)} → {show(new)}" for old, new in report.moved]
    lines += [f"[yellow]patient-facing, not indexed[/yellow] {show(path)}: {escape(_patient_reason(reason))}"
              for path, reason in report.patient_skipped]
    dup = set(report.duplicates)
    lines += [f"[dim]duplicate[/dim] {show(path)}: {escape(_duplicate_reason(reason, roots))}"
              for path, reason in report.errors if path in dup]
    failed = report.failed
    lines += [f"[red]failed[/red] {show(path)}: {escape(reason)}" for path, reason in failed]
    # indexed, but part of the document is not (pages without text) or holds text that addresses the system
    lines += [f"[yellow]warning[/yellow] {show(path)}: {escape(message)}" for path, message in report.warnings]
    notes = []
    if report.patient_skipped:
        notes.append(f"{len(report.patient_skipped)} patient-facing skipped: {escape(PATIENT_HINT)}")
    if report.duplicates:
        notes.append(f"{len(report.duplicates)} duplicate(s) not indexed again")
    if failed:
        notes.append(f"{len(failed)} file(s) failed; the rest of the batch was processed")
    if report.warned_documents:
        notes.append(f"{len(report.warned_documents)} document(s) indexed with warnings (see above)")
    if len(report.warned_documents) < len({p for p, _m in report.warnings}):
        notes.append("files of other types skipped (see above)")
    if notes:
        lines.append("[b]Summary:[/b] " + "; ".join(notes) + ".")
    return lines


def gate_after_ingest(kb: Any, configured_threshold: float) -> str | None:
    """The CLI's gate step after an ingest (``kb.evaluate.gate_after_ingest``), as a sentence for the screen."""
    from engine.checkpoint import now_iso
    from kb import evaluate

    message = evaluate.gate_after_ingest(kb, configured_threshold, calibrated_at=now_iso())
    return message[:1].upper() + message[1:] if message else None


class IngestScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    IngestScreen { align: center middle; }
    #ingest-dialog { width: 100; max-width: 95%; height: auto; border: round $accent; padding: 1 2;
                     background: $surface; }
    #ingest-paths { margin: 1 0 0 0; }
    #ingest-patient { margin-bottom: 1; border: none; padding: 0; }
    #ingest-bars { height: auto; margin-bottom: 1; }
    .ingest-bar-row { height: 1; width: 1fr; }
    .ingest-bar-row Label { width: 28; }
    #ingest-scroll { height: auto; max-height: 16; }
    #ingest-result { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="ingest_close", tooltip="Close; ingest continues"),
        Binding("f1", "app.help", "Keys", id="ingest_help", show=False, tooltip="Show the list of keys"),
    ]

    def __init__(self, open_kb: KBOpener, chunk_chars: int, demo_dir: Path, *,
                 distance_threshold: float | None = None) -> None:
        """``distance_threshold``: the configured ``kb.distance_threshold`` (> 0 wins over any calibration, so no
        gate step); None reads it from the app's settings."""
        super().__init__()
        self.open_kb = open_kb
        self.chunk_chars = chunk_chars
        self.demo_dir = demo_dir
        self.distance_threshold = distance_threshold
        self.running = False
        # written by the worker thread, read by the refresh timer (whole tuples: each assignment is atomic)
        self._doc_state: tuple[str, int, int] | None = None
        self._chunk_state: tuple[int, int] = (0, 0)
        self._status = ""
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="ingest-dialog"):
            yield Label("[b]Ingest guidelines[/b] · Markdown, text or PDF files and folders (recursive)")
            yield Input(placeholder=f"Paths separated by spaces (Enter on empty offers the demo set, "
                                    f"{self.demo_dir.name}/)", id="ingest-paths")
            yield Checkbox("Include patient-facing material (patient versions, leaflets; skipped by default)",
                           id="ingest-patient")
            with Vertical(id="ingest-bars"):
                with Horizontal(classes="ingest-bar-row"):
                    yield Label("documents", id="ingest-docs-label")
                    yield ProgressBar(id="ingest-bar", show_eta=False)
                with Horizontal(classes="ingest-bar-row"):
                    yield Label("chunks embedded", id="ingest-chunks-label")
                    yield ProgressBar(id="ingest-chunks-bar", show_eta=False)
            with VerticalScroll(id="ingest-scroll"):
                yield Static("Enter starts · Esc closes. Unchanged documents are skipped without embedding work.",
                             id="ingest-result")

    def on_mount(self) -> None:
        self.query_one("#ingest-bars").display = False
        self.query_one(Input).focus()

    def action_close(self) -> None:
        if self.running:
            self.notify("Ingestion continues in the background; the result will appear as a notice.", timeout=4)
        self.dismiss(None)

    @on(Input.Submitted, "#ingest-paths")
    def start(self, event: Input.Submitted) -> None:
        if self.running:
            return
        if not event.value.strip():
            # never the demo set unasked: an Enter on the empty field had added it to a site's clinical
            # guidelines, and consults quoted it. Offer its path instead; a second Enter ingests it.
            event.input.value = str(self.demo_dir)
            event.input.cursor_position = len(event.input.value)
            self._result(f"Enter again adds the demo set ({escape(str(self.demo_dir))}): demonstration "
                         "guidelines, not for clinical use. Or type the paths of your own guidelines.")
            return
        try:
            paths = parse_paths(event.value)
        except ValueError as exc:  # unbalanced quotes
            self._result(f"[red]Cannot read the paths: {escape(str(exc))}[/red]")
            return
        missing = [p for p in paths if not p.exists()]
        if missing:
            self._result("[red]Not found:[/red] " + ", ".join(escape(str(p)) for p in missing))
            return
        self.running = True
        include_patient = self.query_one("#ingest-patient", Checkbox).value
        threshold = self.distance_threshold
        if threshold is None:
            settings = getattr(self.app, "settings", None)
            threshold = float(settings.kb.distance_threshold) if settings is not None else 0.0
        self._doc_state, self._chunk_state = None, (0, 0)
        self.query_one("#ingest-bars").display = True
        self.query_one("#ingest-bar", ProgressBar).update(total=None, progress=0)
        self.query_one("#ingest-chunks-bar", ProgressBar).update(total=None, progress=0)
        self._status = "Opening the knowledge base…"
        self._result(self._status)
        self._timer = self.set_interval(0.1, self._show_progress)
        # The app owns the worker, so closing this screen does not stop the ingestion.
        self.app.run_worker(partial(self.ingest, paths, include_patient, threshold), thread=True, exclusive=True,
                            group="ingest", exit_on_error=False)

    def ingest(self, paths: list[Path], include_patient: bool = False, threshold: float = 0.0) -> None:
        """Worker thread: index ``paths``, then the gate step; the result goes to the screen (or a notice)."""
        app = self.app

        def on_progress(label: str, done: int, total: int) -> None:
            self._doc_state = (label, done, total)

        def on_chunks(embedded: int, chunked: int) -> None:
            self._chunk_state = (embedded, chunked)

        from engine.safety import instruction_like  # here: the app starts without the engine

        try:
            kb = self.open_kb()
            self._status = "Ingesting…"
            report = kb.ingest(paths, chunk_chars=self.chunk_chars, progress=on_progress,
                               include_patient=include_patient, chunk_progress=on_chunks,
                               suspicious=instruction_like)
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback on screen
            app.call_from_thread(self._finished, f"[red]Ingestion failed: {escape(str(exc))}[/red]", "error")
            return
        lines = report_lines(report, paths)
        self._status = "Checking the Stage 2 gate (on the demo set: calibrating on the demo questions)…"
        try:
            gate = gate_after_ingest(kb, threshold)
        except Exception as exc:  # noqa: BLE001 - the documents are indexed; say the gate step failed
            gate = f"[yellow]Gate calibration failed: {escape(str(exc))}[/yellow]"
        else:
            gate = escape(gate) if gate else None
        if gate:
            lines.append(gate)
        app.call_from_thread(self._finished, "\n".join(lines), "warning" if report.errors or report.patient_skipped
                             or report.warnings else "information")

    def _show_progress(self) -> None:
        if not self.is_attached:
            return
        docs = self.query_one("#ingest-bar", ProgressBar)
        doc_state = self._doc_state
        if doc_state is not None:
            label, done, total = doc_state
            docs.update(total=total, progress=done)
            self.query_one("#ingest-docs-label", Label).update(f"documents {done}/{total}")
            status = f"{done}/{total} · {escape(Path(label).name)}"
        else:
            status = self._status
        embedded, chunked = self._chunk_state
        if chunked:
            self.query_one("#ingest-chunks-bar", ProgressBar).update(total=chunked, progress=embedded)
            self.query_one("#ingest-chunks-label", Label).update(f"chunks embedded {embedded}/{chunked}")
        if self._status.startswith("Checking"):
            status = self._status
        self._result(status)

    def _finished(self, text: str, severity: str) -> None:
        self.running = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.is_attached:
            self._status = ""
            self._show_progress()  # the bars' final counts
            if not self._chunk_state[1]:  # nothing to embed (all unchanged, or nothing readable): a full, still bar
                self.query_one("#ingest-chunks-bar", ProgressBar).update(total=0, progress=0)
                self.query_one("#ingest-chunks-label", Label).update("chunks embedded 0")
            if self._doc_state is None:
                self.query_one("#ingest-bar", ProgressBar).update(total=0, progress=0)
            self._result(text + "\nEsc closes.")
        else:  # closed while it ran: tell the user anyway
            self.app.notify(text, title="Ingest guidelines", severity=severity, timeout=10)  # type: ignore[arg-type]

    def _result(self, text: str) -> None:
        self.query_one("#ingest-result", Static).update(text)
