"""One consult in the chat: the question, the engine's steps with durations, the streaming draft and the answer."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, Static

from oncotui.keys import key_name
from oncotui.widgets.chat.draft_tail import DraftTail
from oncotui.widgets.literal import literal

ANSWER_TITLES = {
    "released": "Answer",
    "reviewed": "Answer (reviewed)",
    "refused": "Safe refusal",
}


class ConsultView(Vertical):
    """Built live from engine events, or at once from the latest checkpoint when a patient is opened."""

    class AnswerRendered(Message):
        """A live answer finished rendering (the chat scrolls it into view from its title)."""

        def __init__(self, view: ConsultView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, thread_id: str, question: str, consult_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.thread_id = thread_id
        self.consult_id = consult_id
        self.question = question
        self.report = ""  # the last answer shown (copy / export)
        self.status = "running"
        self._step_lines: list[str] = []  # step lines (markup)
        self._open_steps: dict[str, int] = {}  # node -> index of its running line (a node re-runs on a critic retry)
        self._step_labels: dict[str, str] = {}
        self._step_started: dict[str, float] = {}  # node -> monotonic start of its running line
        self._ticker: Any = None  # a 1-second timer while a step runs: its line counts the seconds
        self._attempt = 0

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # markdown-it and pygments: ~0.1 s, kept out of the cold start

        yield Static(self._question_markup(), classes="question")
        yield Static("", classes="steps")
        yield Label("", classes="drafting-title")
        yield DraftTail(classes="drafting")
        yield Label("", classes="answer-title")
        yield Markdown("", classes="answer")

    def _question_markup(self) -> str:
        return f"[b]{literal(self.thread_id)}[/b] [dim]case[/dim]\n{literal(self.question)}"

    def set_question(self, text: str) -> None:
        """Show ``text`` instead of what was typed: the case as stored, once the engine has redacted it."""
        self.question = text
        self.query_one(".question", Static).update(self._question_markup())

    # -- folding: earlier answers fold to their title line --------------------------------------------------
    # Every mounted Markdown block takes part in every layout pass; a chat with a few unfolded reports made
    # submit-to-first-step 2.5x slower (measured). Click a folded title (or F6 in the chat) to unfold.
    @property
    def folded(self) -> bool:
        return self.has_class("-folded")

    def fold(self, folded: bool = True) -> None:
        if not self.report:  # nothing to fold until there is an answer
            return
        self.set_class(folded, "-folded")
        self.query_one(".answer").display = not folded
        title = self.query_one(".answer-title", Label)
        text = ANSWER_TITLES.get(self.status, self.status.title())
        title.update(f"▸ {literal(text)} [dim](folded: click or F6 to show)[/dim]" if folded else literal(text))

    def on_click(self, event: Any) -> None:
        if self.folded and event.widget is self.query_one(".answer-title"):
            self.fold(False)

    def on_mount(self) -> None:
        for selector in (".drafting-title", ".drafting", ".answer-title", ".answer"):
            self.query_one(selector).display = False

    # -- steps --------------------------------------------------------------------------------------------
    # One Static holds every step line: a Label per step would add a widget (and a layout pass) per event.
    def _render_steps(self) -> None:
        self.query_one(".steps", Static).update("\n".join(self._step_lines))

    def step_started(self, node: str, label: str) -> None:
        self._open_steps[node] = len(self._step_lines)
        self._step_labels[node] = label
        self._step_started[node] = time.monotonic()
        self._step_lines.append(self._running_line(node))
        self._render_steps()
        if self._ticker is None and self.is_attached:
            self._ticker = self.set_interval(1.0, self._tick)

    def _running_line(self, node: str) -> str:
        """A running step; after a few seconds with its time so far (a long case read by a small model on a
        CPU streams nothing for minutes while the prompt is processed: the count says it is still working)."""
        line = f"[b $accent]▸[/] {literal(self._step_labels[node])}…"
        seconds = time.monotonic() - self._step_started.get(node, time.monotonic())
        return line + (f" [dim]{seconds:.0f} s[/dim]" if seconds >= 3 else "")

    def _tick(self) -> None:
        if not self._open_steps:
            self._stop_ticker()
            return
        for node, index in self._open_steps.items():
            self._step_lines[index] = self._running_line(node)
        self._render_steps()

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def step_finished(self, node: str, label: str, seconds: float) -> None:
        text = f"[green]✓[/green] {literal(label)} [dim]{seconds:.2f} s[/dim]"
        index = self._open_steps.pop(node, None)
        self._step_started.pop(node, None)
        if not self._open_steps:
            self._stop_ticker()
        if index is None:
            self._step_lines.append(text)
        else:
            self._step_lines[index] = text
        self._render_steps()

    def note(self, text: str, kind: str = "info") -> None:
        """A detail line under the steps (router score, evidence count, critic verdict, notices)."""
        style = {"warning": "$warning", "error": "$error"}.get(kind, "dim")
        self._step_lines.append(f"  [{style}]{literal(text)}[/]")
        self._render_steps()

    @property
    def step_lines(self) -> list[str]:
        return list(self._step_lines)

    def stop_running_steps(self, why: str) -> None:
        for node, index in self._open_steps.items():
            self._step_lines[index] = f"[red]✗[/red] {literal(self._step_labels[node])} [dim]({literal(why)})[/dim]"
        self._open_steps.clear()
        self._step_started.clear()
        self._stop_ticker()
        self._render_steps()

    # -- the draft, streamed ------------------------------------------------------------------------------
    def token(self, text: str, attempt: int) -> None:
        """The model's draft as it streams (its raw JSON, or in evidence-locked mode the sentences it picks):
        shown dim while drafting, replaced by the checked report."""
        draft = self.query_one(".drafting", DraftTail)
        if attempt != self._attempt:
            self._attempt = attempt
            draft.clear()
            title = self.query_one(".drafting-title", Label)
            title.update(f"drafting… [dim](attempt {attempt}; the model's draft, checked before release)[/dim]")
            title.display = draft.display = True
        draft.append(text)

    def end_draft(self, hide: bool = True) -> None:
        self._attempt = 0  # a resumed consult streams its draft afresh
        if hide:
            self.query_one(".drafting-title").display = False
            self.query_one(".drafting").display = False

    # -- outcome ------------------------------------------------------------------------------------------
    async def show_answer(self, report: str, status: str, *, progressive: bool = False) -> None:
        """Show the checked report. ``progressive``: arriving live, it is rendered block by block through
        ``Markdown.get_stream`` in a worker, so a long report never holds up keystrokes for a whole frame."""
        from textual.widgets import Markdown

        self.end_draft()
        self.status = status
        self.report = report
        title = self.query_one(".answer-title", Label)
        title.update(literal(ANSWER_TITLES.get(status, status.title())))
        title.set_classes(f"answer-title {status}")
        answer = self.query_one(".answer", Markdown)
        answer.set_classes(f"answer {status}")
        title.display = answer.display = True
        if progressive:
            await answer.update("")
            self._render_report(answer, report)
        else:  # restored from the store: at once (also keeps snapshots deterministic)
            await answer.update(report)

    @work(exclusive=True, group="report", exit_on_error=False)
    async def _render_report(self, answer: Any, report: str) -> None:
        from textual.widgets import Markdown

        stream = Markdown.get_stream(answer)
        try:
            for block in report.split("\n\n"):
                await stream.write(block + "\n\n")
                await asyncio.sleep(0.01)  # one block per append: key presses and repaints get in between
        finally:
            await stream.stop()
        self.post_message(self.AnswerRendered(self))

    async def show_waiting(self, approval_id: str, reasons: tuple[str, ...]) -> None:
        self.end_draft()
        self.status = "pending_review"
        title = self.query_one(".answer-title", Label)
        title.update(f"Waiting for a reviewer ({literal(approval_id)}): " + literal("; ".join(reasons))
                     + ". Nothing is released until a reviewer signs (Approvals pane).")
        title.set_classes("answer-title pending")
        title.display = True

    async def show_stopped(self, message: str, kind: str = "cancelled") -> None:
        self.end_draft(hide=False)
        self.stop_running_steps(kind)
        self.status = kind
        title = self.query_one(".answer-title", Label)
        title.update(literal(message))  # engine errors quote stored text
        title.set_classes(f"answer-title {kind}")
        title.display = True

    async def restore(self, checkpoint: Any | None, status: str, approval_id: str | None,
                      running: bool = False) -> None:
        """Show a consult from the store (no live steps: only where it ended, or that it is still running)."""
        from engine.events import NODE_LABELS

        if running:
            self.note("still running: its next steps show below", "muted")
            return
        if checkpoint is None:
            await self.show_stopped("Stopped before its first step finished; the note was not stored. "
                                    "Submit it again.", "interrupted")
            return
        state = checkpoint.state
        if state.routing is not None:
            self.note(f"Tier {state.routing.tier} · score {state.routing.score:.2f}", "muted")
        if checkpoint.next_node == "__end__" and state.report:
            await self.show_answer(state.report, status if status in ANSWER_TITLES else "released")
        elif checkpoint.next_node == "__halt__":
            await self.show_waiting(approval_id or "pending", state.hitl_reasons)
        else:
            label = NODE_LABELS.get(checkpoint.next_node, checkpoint.next_node)
            await self.show_stopped(f"Interrupted before “{label}”. Press "
                                    f"{key_name(self, 'resume', 'ctrl+r')} to continue it.", "interrupted")
