"""Gaps from a usability review at 80 columns: the footer cut its last keys ("^s Export" was not on screen), Home and
End did nothing in the approvals table, the narrow approvals pane cut the reason ("no treatme"), and Enter pressed
while the app was still starting was dropped ("Still starting: try again in a moment")."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._footer import FooterKey

from tests.tui.conftest import TIER1_CASE, TIER2_CASE, build, streaming_model, submit, wait_for

PANE_KEYS = {"patients": "f2", "chat": "f3", "evidence": "f4", "approvals": "f5"}


def screen_lines(app: Any) -> list[str]:
    """The screen as the terminal shows it, one string per row (the compositor's last frame)."""
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


def footer_keys(app: Any) -> tuple[list[FooterKey], FooterKey]:
    keys = list(app.screen.query(FooterKey))
    [palette] = [key for key in keys if key.has_class("-command-palette")]
    return [key for key in keys if key is not palette], palette


def footer_is_current(app: Any) -> bool:
    """The footer has been recomposed for the focused widget (it follows the focus after a refresh)."""
    shown = {b.binding.action for b in app.screen.active_bindings.values() if b.binding.show}
    return {key.action for key in footer_keys(app)[0]} == shown - {"command_palette"}


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_every_footer_key_is_on_screen(tmp_path: Path, size: tuple[int, int]) -> None:
    """With each pane focused, and while a consult runs (Esc cancel is added), every key the footer offers is on
    screen, left of the command palette's key; the keys it leaves out are in help (F1)."""
    model = streaming_model()
    app, _engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE, wait=False)
        await wait_for(pilot, lambda: app.consult_running and app.chat.pending is None)
        for pane, key in PANE_KEYS.items():
            await pilot.press(key)
            await wait_for(pilot, lambda: footer_is_current(app))
            await pilot.pause()
            keys, palette = footer_keys(app)
            row = screen_lines(app)[-1]
            assert "cancel_consult" in {k.action for k in keys}, row
            for footer_key in keys:
                region = footer_key.region
                assert region.width and region.right <= palette.region.x, (pane, footer_key.description, row)
                assert f"{footer_key.key_display} {footer_key.description}" in row, (pane, row)
            assert "^s Export" in row and "f1 Help" in row, row
        help_ids = {r[3] for r in app.binding_rows()}
        hidden = {b.id for b in app.BINDINGS if not b.show}  # type: ignore[union-attr]
        assert hidden <= help_ids
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.consult_running)


async def queue_of_three(engine: Any) -> list[str]:
    """Three items waiting for a reviewer (PT-0001..3), the queue's order."""
    for n in (1, 2, 3):
        async for _ in engine.stream(f"PT-000{n}", TIER2_CASE):
            pass
    return [item.thread_id for item in engine.store.approvals("pending")]


async def test_home_end_and_page_keys_move_in_the_approvals_table(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    queue = await queue_of_three(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.approvals.table
        await pilot.press("f5")
        await wait_for(pilot, lambda: table.row_count == 3 and app.focused is table)

        def highlighted() -> str:
            return str(table.get_row_at(table.cursor_row)[0])

        assert highlighted() == queue[0]
        await pilot.press("end")
        assert highlighted() == queue[-1]
        await pilot.press("home")
        assert highlighted() == queue[0]
        await pilot.press("pagedown")
        assert highlighted() == queue[-1]  # the three rows fit in one page
        await pilot.press("pageup")
        assert highlighted() == queue[0]


def pane_text(app: Any, widget: Any) -> str:
    """What the screen shows inside ``widget``'s region, its rows joined by spaces (a wrapped line reads on)."""
    region = widget.region
    rows = screen_lines(app)[region.y:region.bottom]
    return " ".join(" ".join(row[region.x:region.right].strip("│ ").split()) for row in rows)


async def test_the_narrow_approvals_pane_shows_the_highlighted_items_whole_reason(tmp_path: Path) -> None:
    """At 80x24 the 'why' column had ten cells: 'Tier 2 (override)' read 'Tier 2 (ov', 'no treatment named' read
    'no treatme'. The highlighted item's reason is readable in full under the table; the engine's full wording is
    its tooltip (and the review screen's)."""
    app, engine, _ = build(tmp_path)
    async for _ in engine.stream("PT-0001", TIER2_CASE):
        pass
    async for _ in engine.stream("PT-0002", TIER2_CASE, tier_override=1):  # the clinician forced Tier 1
        pass
    [first, forced] = engine.store.approvals("pending")
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.approvals.table
        await pilot.press("f5")
        await wait_for(pilot, lambda: table.row_count == 2 and app.focused is table)
        await pilot.press("end")
        await pilot.pause()
        assert str(table.get_row_at(table.cursor_row)[0]) == forced.thread_id
        shown = pane_text(app, app.approvals)
        assert "Tier 2 (override)" in shown, shown
        tooltips = [str(w.tooltip) for w in app.approvals.query("*") if w.tooltip]
        assert any(forced.reasons[0] in tip for tip in tooltips), tooltips
        await pilot.press("home")
        await pilot.pause()
        shown = pane_text(app, app.approvals)
        assert "Tier 2 (override)" not in shown and "Tier 2" in shown, shown
        assert first.reasons[0].startswith("Tier 2 case")


def slow_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, threading.Event]:
    """A fresh app whose start-up thread waits in loading settings until the returned event is set (then it gets
    a test engine): keys pressed meanwhile meet an app that is still starting."""
    from engine.config import Settings
    from oncotui.app import create_app

    _app, engine, _ = build(tmp_path)
    ready = threading.Event()

    def slow_settings(path: object = None) -> Settings:
        ready.wait(10)  # the start-up thread loads settings: hold it there
        return engine.settings

    monkeypatch.setattr("engine.config.load_settings", slow_settings)
    monkeypatch.setattr("engine.graph.Engine", lambda settings: engine)
    return create_app(config_path=tmp_path / "config.toml"), engine, ready


async def test_a_case_submitted_while_the_app_starts_runs_once_it_is_ready(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notices: list[tuple[str, str]]) -> None:
    """The engine is built after a first frame (its imports take about a second). A case typed and sent with Enter
    meanwhile got 'Still starting: try again in a moment.' and waited for a second Enter; now it is sent once the
    engine is ready (n, new patient, likewise)."""
    from textual import events

    app, engine, ready = slow_start(tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.engine is None
        app.post_message(events.Key("n", "n"))  # a new patient for this case, as on a started app
        for char in TIER1_CASE:
            app.post_message(events.Key("space" if char == " " else char, char))
        await wait_for(pilot, lambda: app.chat.prompt.value == TIER1_CASE)
        await pilot.press("enter")
        await pilot.pause()
        assert app.engine is None and app._consult is None
        ready.set()
        await wait_for(pilot, lambda: app._consult is not None and not app.consult_running)
        assert app.current_patient == "PT-0001" and app.chat.prompt.value == ""
        [row] = engine.store.consults("PT-0001")
        assert not any("try again" in message for _, message in notices), notices


async def test_ingest_from_the_palette_while_the_app_starts_opens_once_it_is_ready(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notices: list[tuple[str, str]]) -> None:
    """The palette's 'Ingest guidelines' chosen while the engine is still being built answered 'Still starting: try
    again in a moment.'; like Enter and n, it now does its work (the ingest screen opens) once the engine is ready."""
    from textual.command import CommandPalette

    from oncotui.screens.ingest import IngestScreen
    from tests.tui.conftest import run_palette_command

    app, engine, ready = slow_start(tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.engine is None
        await run_palette_command(pilot, "ingest", "Ingest guidelines")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette)
                       and any("tarting" in message for _, message in notices))  # the command has answered
        assert app.engine is None and not isinstance(app.screen, IngestScreen)
        ready.set()
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        assert app.screen.is_active
        assert not any("try again" in message for _, message in notices), notices


async def test_the_narrow_approvals_table_fits_its_pane_without_a_sideways_scrollbar(tmp_path: Path) -> None:
    """Items waiting at start were put in the table before it had a width, at their full widths ('Tier 2 (override)'):
    Textual showed a horizontal scrollbar for that first layout and kept it after the columns were fitted to the
    pane, so at 80x24 it took the table's last row. The columns fit from the first layout: no sideways scrollbar,
    every item on screen."""
    app, engine, _ = build(tmp_path)
    for n in (1, 2, 3, 4):
        async for _ in engine.stream(f"PT-000{n}", TIER2_CASE, tier_override=1 if n == 2 else None):
            pass
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.approvals.table
        await wait_for(pilot, lambda: table.row_count == 4 and table.size.width > 0)
        await pilot.pause()
        assert table.virtual_size.width <= table.size.width
        assert not table.show_horizontal_scrollbar, (table.size, table.virtual_size)
        shown = pane_text(app, app.approvals)
        assert all(f"PT-000{n}" in shown for n in (1, 2, 3, 4)), shown


async def test_keys_after_the_engine_failed_to_start_say_so(tmp_path: Path,
                                                            notices: list[tuple[str, str]]) -> None:
    """When the engine cannot start (a locked or unreadable store), n, Enter and the palette's ingest said
    'Starting: ... in a moment.' and then nothing happened; they say the engine is unavailable."""
    from engine.checkpoint import StoreError
    from oncotui.app import create_app

    def broken() -> Any:
        raise StoreError("database is locked")

    app = create_app(broken)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: any("database is locked" in message for _, message in notices))
        assert app.engine is None
        notices.clear()
        await pilot.press("n")
        app.chat.prompt.focus()
        app.chat.prompt.value = TIER1_CASE
        await pilot.press("enter")
        app.action_ingest()
        await pilot.pause()
        assert len(notices) == 3 and all("engine is unavailable" in message and "database is locked" in message
                                         for _, message in notices), notices
        assert app.chat.prompt.value == TIER1_CASE and not app._when_ready
