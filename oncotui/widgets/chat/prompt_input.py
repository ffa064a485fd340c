"""The chat prompt: a one-line input with shell-like history on up/down."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import Input


def one_line(text: str) -> str:
    """A pasted note as the one-line prompt holds it: its lines joined by spaces (hard-wrapped prose reads
    on), blank lines and surrounding whitespace dropped."""
    return " ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


class PromptInput(Input):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history(-1)", "Previous prompt", show=False, id="history_previous",
                tooltip="Recall previous case typed"),
        Binding("down", "history(1)", "Next prompt", show=False, id="history_next",
                tooltip="Recall next case typed"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        # Textual's Input selects all its text when focused: coming back to a half-typed case (after opening the
        # patient it is for, or from another pane) the next key replaced the whole case. Keep the cursor instead.
        kwargs.setdefault("select_on_focus", False)
        super().__init__(**kwargs)
        self.history: list[str] = []
        self._index = 0  # == len(history): editing a new prompt
        self._draft = ""  # what was typed before walking into the history

    def paste(self, text: str) -> None:
        """Insert typed or pasted text, a note of several lines whole, in place of any selection."""
        if "\n" in text or "\r" in text:
            text = one_line(text)
        if self.selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *self.selection)

    def _on_paste(self, event: events.Paste) -> None:
        # Textual's Input keeps a paste's first line only: a note pasted from the record lost its facts and
        # question (prevent_default: Textual would then run Input's own handler as well)
        if event.text:
            self.paste(event.text)
        event.stop()
        event.prevent_default()

    def remember(self, text: str) -> None:
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._index = len(self.history)
        self._draft = ""

    def replace_in_history(self, typed: str, stored: str) -> None:
        """Recall ``stored`` (the redacted case) where ``typed`` was remembered."""
        self.history = [stored if entry == typed else entry for entry in self.history]

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._index == len(self.history):
            self._draft = self.value
        self._index = max(0, min(len(self.history), self._index + step))
        self.value = self._draft if self._index == len(self.history) else self.history[self._index]
        self.cursor_position = len(self.value)
