"""The model's raw draft while it streams: the newest few lines, dim.

Token events carry the model's raw JSON, not Markdown, and it is replaced by the checked report moments later.
Rendering it through a Markdown widget cost a layout pass per batch (measured ~50 ms a frame on 2 cores, which
pushed keystroke latency past 100 ms); this widget has a fixed height and only repaints itself.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget


class DraftTail(Widget):
    DEFAULT_CSS = """
    DraftTail { height: 4; color: $text-muted; text-style: dim; margin: 0 1; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._parts: list[str] = []
        self._chars = 0

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def append(self, fragment: str) -> None:
        self._parts.append(fragment)
        self._chars += len(fragment)
        self.refresh()  # repaint only: the size never changes

    def clear(self) -> None:
        self._parts.clear()
        self._chars = 0
        self.refresh()

    def render(self) -> Text:
        width, height = max(1, self.content_size.width), max(1, self.content_size.height)
        flat = self.text.replace("\n", " ")
        tail = flat[-(width * height):]
        # cut into exact rows so the newest characters are always on the last line
        rows = [tail[i:i + width] for i in range(0, len(tail), width)]
        return Text("\n".join(rows), no_wrap=True, overflow="crop")
