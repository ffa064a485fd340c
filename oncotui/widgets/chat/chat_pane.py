"""Chat pane: the consults of the current patient, live engine progress, and the prompt."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from oncotui.keys import key_name
from oncotui.widgets.chat.consult_view import ConsultView
from oncotui.widgets.chat.prompt_input import PromptInput

WELCOME = ("Type the case (identifiers are redacted before anything is stored) and a question, then Enter.\n"
           "[dim]{cancel} cancels a running consult · {resume} continues an interrupted one · {help} lists "
           "every key.[/dim]")


class ChatPane(Vertical):
    ALLOW_MAXIMIZE = True  # ctrl+o zooms a pane; handy at 80x24
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+y", "copy_answer", "Copy", id="copy_answer", tooltip="Copy the latest answer"),
        Binding("f6", "toggle_folds", "Earlier answers", id="toggle_folds", show=False,
                tooltip="Show / fold earlier answers"),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Chat"
        self.thread_id: str | None = None
        self._views: dict[str, ConsultView] = {}
        self._pending: ConsultView | None = None  # submitted, waiting for the first event (its consult id)
        # Rebuilding the log (switching patients) awaits removals and mounts; an engine event routed meanwhile
        # must not reach a view that is half removed or not yet composed.
        self._rebuilding = asyncio.Lock()

    def _welcome(self) -> str:
        return WELCOME.format(cancel=key_name(self, "cancel", "Esc"),
                              resume=key_name(self, "resume", "ctrl+r"), help=key_name(self, "help", "F1"))

    def show_welcome(self) -> None:
        """Name the keys as they are now (after ``[ui] keymap``)."""
        for welcome in self.query("#chat-welcome").results(Static):
            welcome.update(self._welcome())

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="chat-log"):
            yield Static(self._welcome(), id="chat-welcome")
        yield PromptInput(placeholder="Case and question… (Enter to submit)", id="prompt", compact=True)

    def follow(self) -> None:
        """Keep live output in view, like a terminal, unless the reader has scrolled up to read.

        (Not VerticalScroll.anchor(): in Textual 8.2 it leaves a log shorter than the pane scrolled to a
        negative offset, i.e. blank lines above the content.)"""
        log = self.query_one("#chat-log", VerticalScroll)
        if log.scroll_y >= log.max_scroll_y - 2:  # checked before the new content is laid out
            self.call_after_refresh(log.scroll_end, animate=False)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one("#prompt", PromptInput)

    @on(PromptInput.Submitted, "#prompt")
    def _submitted(self, event: PromptInput.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text:
            self.post_message(self.Submitted(text))
        else:  # Enter on an empty prompt: say what it wants rather than nothing at all
            self.notify("Type the case and a question first, then Enter (e.g. \"Stage IV pancreatic "
                        "adenocarcinoma, ECOG 1. First-line options?\").", severity="warning", timeout=4)

    # -- called by the app --------------------------------------------------------------------------------
    async def show_patient(self, thread_id: str | None, history: list[tuple[dict[str, Any], Any, str | None]],
                           running: str | None = None) -> None:
        """Rebuild the log from the store: (consult row, latest checkpoint or None, pending approval id).

        ``running`` is the id of a consult still streaming (the clinician switched patients and came back)."""
        async with self._rebuilding:
            await self._rebuild(thread_id, history, running)

    async def _rebuild(self, thread_id: str | None, history: list[tuple[dict[str, Any], Any, str | None]],
                       running: str | None) -> None:
        self.thread_id = thread_id
        self.border_title = f"Chat · {thread_id}" if thread_id else "Chat"
        log = self.query_one("#chat-log", VerticalScroll)
        await log.remove_children(ConsultView)
        self._views.clear()
        self._pending = None
        views = []
        for row, checkpoint, approval_id in history:
            question = checkpoint.state.case_text if checkpoint else (row.get("question") or "(not stored)")
            view = ConsultView(row["thread_id"], question, row["id"])
            self._views[row["id"]] = view
            views.append((view, checkpoint, row.get("status") or "", approval_id))
        if views:
            await log.mount_all([v for v, *_ in views])
            for view, checkpoint, status, approval_id in views:
                await view.restore(checkpoint, status, approval_id, running=view.consult_id == running)
            for view, *_ in views[:-1]:  # only the latest answer unfolded (see ConsultView.fold)
                view.fold()
            self.call_after_refresh(self._scroll_to_start_of, views[-1][0])

    def _scroll_to_start_of(self, view: ConsultView) -> None:
        """Read the latest consult from its top (its answer starts there), not from the report's last line."""
        log = self.query_one("#chat-log", VerticalScroll)
        if log.max_scroll_y > 0:  # with less than a screenful, scrolling "to the top of" it goes negative
            log.scroll_to(y=min(view.virtual_region.y, log.max_scroll_y), animate=False)

    @on(ConsultView.AnswerRendered)
    def _answer_rendered(self, message: ConsultView.AnswerRendered) -> None:
        """A live answer is read from its title down: bring the title to the top of the log."""
        message.stop()
        view = message.view

        def scroll() -> None:
            if not view.is_attached:  # the clinician opened another patient meanwhile: the view is gone
                return
            log = self.query_one("#chat-log", VerticalScroll)
            title = view.query_one(".answer-title")
            offset = title.region.y - log.region.y + log.scroll_y  # the title's y inside the log's content
            log.scroll_to(y=max(0, min(offset, log.max_scroll_y)), animate=False)

        self.call_after_refresh(scroll)

    async def begin(self, thread_id: str, text: str) -> ConsultView:
        self.prompt.remember(text)
        self.prompt.value = ""
        for earlier in self._views.values():
            earlier.fold()
        view = ConsultView(thread_id, text)
        self._pending = view
        await self.query_one("#chat-log", VerticalScroll).mount(view)
        self.call_after_refresh(self.query_one("#chat-log", VerticalScroll).scroll_end, animate=False)
        return view

    @property
    def views(self) -> dict[str, ConsultView]:
        return self._views

    async def view_for(self, thread_id: str, consult_id: str, *, adopt_pending: bool,
                       question: Callable[[], str]) -> ConsultView | None:
        """The view an event belongs to; None when it is for another patient than the one shown.

        Only a new consult's first event adopts the view made at submit time: a resume (a reviewer signing
        meanwhile) must not steal it. A consult not on screen gets a new view at the end.
        """
        async with self._rebuilding:
            return await self._view_for(thread_id, consult_id, adopt_pending, question)

    async def _view_for(self, thread_id: str, consult_id: str, adopt_pending: bool,
                        question: Callable[[], str]) -> ConsultView | None:
        if thread_id != self.thread_id:
            return None
        view = self._views.get(consult_id)
        if view is None and adopt_pending and self._pending is not None:
            view, self._pending = self._pending, None
            view.consult_id = consult_id
        elif view is None:
            view = ConsultView(thread_id, question(), consult_id)
            await self.query_one("#chat-log", VerticalScroll).mount(view)
        self._views[consult_id] = view
        return view

    @property
    def pending(self) -> ConsultView | None:
        return self._pending

    def drop_pending(self) -> ConsultView | None:
        view, self._pending = self._pending, None
        return view

    def last_answer(self) -> str:
        for view in reversed(list(self.query(ConsultView))):
            if view.report:
                return view.report
        return ""

    def action_toggle_folds(self) -> None:
        """Unfold every earlier answer, or fold them again (all but the latest)."""
        earlier = [v for v in self._views.values() if v.report][:-1]
        fold = not any(v.folded for v in earlier)
        for view in earlier:
            view.fold(fold)

    def action_copy_answer(self) -> None:
        report = self.last_answer()
        if report:
            self.app.copy_to_clipboard(report)
            self.notify("Answer copied to the clipboard (OSC 52).")
        else:
            self.notify("No answer to copy yet.", severity="warning")
