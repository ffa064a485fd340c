"""The keymap example config.toml gives works as written (it named a "submit" binding that does not exist, so
copying it only produced a warning)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from textual.binding import Binding

from engine.config import REPO_CONFIG
from tests.tui.conftest import build
from tests.tui.test_flows import SIZE


def documented_keymap() -> dict[str, str]:
    line = next(x for x in REPO_CONFIG.read_text().splitlines() if x.startswith("#") and "keymap = {" in x)
    example = re.search(r"keymap = \{.*\}", line)
    assert example, line
    return tomllib.loads(example.group(0))["keymap"]


async def test_the_documented_keymap_example_names_real_bindings(tmp_path: Path) -> None:
    keymap = documented_keymap()
    app, _engine, _ = build(tmp_path, overrides={"ui.keymap": keymap})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not [n for n in app._notifications if "keymap" in n.message]
        rows = {row[3]: row[0] for row in app.binding_rows() if row[3]}
        assert all(rows[binding] == app.get_key_display(Binding(key, "")) for binding, key in keymap.items())


async def test_a_key_the_prompt_edits_text_with_is_warned_about(tmp_path: Path) -> None:
    """cancel = "ctrl+k" was accepted silently: the prompt (focused while a consult runs) deletes to the end
    of the line with ctrl+k, so Esc no longer cancelled and ctrl+k never did, though F1 listed it."""
    app, _engine, _ = build(tmp_path, overrides={"ui.keymap": {"cancel": "ctrl+k", "export": "f9"}})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        [warning] = [n.message for n in app._notifications if "ui.keymap" in n.message]
        assert "cancel = ctrl+k" in warning and "edits text" in warning and "f9" not in warning


async def test_hints_name_the_key_a_binding_was_moved_to(tmp_path: Path) -> None:
    """The welcome text said "ctrl+r continues an interrupted one" after resume had been moved to f7."""
    app, _engine, _ = build(tmp_path, overrides={"ui.keymap": {"resume": "f7"}})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        welcome = str(app.query_one("#chat-welcome").render())
        assert "f7 continues an interrupted one" in welcome and "ctrl+r" not in welcome
        assert "Esc cancels" in welcome  # not moved: as written
