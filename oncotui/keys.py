"""The key a binding is on now, for text that names keys (after ``[ui] keymap``: a hint naming ctrl+r after
the user moved resume to another key sent them to the wrong key)."""

from __future__ import annotations

from typing import Any


def key_name(widget: Any, binding_id: str, default: str) -> str:
    """``default`` ("ctrl+r", as written for people) unless ``[ui] keymap`` moved the binding: then the key it
    is on, as the footer shows it."""
    settings = getattr(widget.app, "settings", None)
    keymap = dict(settings.ui.keymap) if settings is not None else {}
    shown = getattr(widget.app, "key_display", None)
    return shown(binding_id, default) if binding_id in keymap and shown else default
