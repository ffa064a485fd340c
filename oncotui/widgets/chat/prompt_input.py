"""The chat prompt: a one-line input with shell-like history on up/down."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input


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
