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
