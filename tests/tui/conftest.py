"""Shared helpers for the TUI tests: the app is built through its factory around the real engine with a fake
model and a fake knowledge base (tests/fakes.py), so each flow runs in well under a second."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeKB, FakeModel, make_engine

TIER1_CASE = "Pancreatic adenocarcinoma, ECOG 1. Options?"  # rare cancer only: score 0.40 -> Tier 1, released
TIER2_CASE = ("Stage IV pancreatic adenocarcinoma, KRAS G12D and germline BRCA2 mutation. "
              "First-line options?")  # 0.95 -> Tier 2 -> waits for a reviewer


def build(tmp_path: Path, model: FakeModel | None = None, kb: FakeKB | None = None,
          overrides: dict[str, Any] | None = None, nodes: dict[str, Any] | None = None) -> tuple[Any, Any, FakeModel]:
    from oncotui.app import create_app

    engine, model, _ = make_engine(tmp_path, model=model, kb=kb,
                                   overrides={"ui.reviewer": "dr-review", "hitl.clinician": "dr-ask",
                                              **(overrides or {})}, nodes=nodes)
    return create_app(lambda: engine), engine, model


async def wait_for(pilot: Any, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Let the app run until ``predicate()`` holds (workers post messages asynchronously)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")
        await pilot.pause(0.02)


async def signed(pilot: Any, status: str, view: Any = None) -> None:
    """Wait until a reviewer's decision is applied and on screen: the consult's answer (``view``, else the only one)
    shows ``status`` ("reviewed", "refused"), no decision is still being applied (the approvals queue's "…" mark,
    ctrl+q's warning) and the app has handled the last events the sign-off posted (a callback queued now runs after
    them). Wait for this, not for the store: the store has the decision before the consult's last steps run.

    A test that left run_test earlier made the app shut down while those events were still coming: Textual's test
    harness removes the panes with the app's message loop still running, so a late event's handler found no
    ChatPane (NoMatches), now and then under load."""
    from oncotui.widgets.chat.consult_view import ConsultView

    app = pilot.app
    view = view or app.query_one(ConsultView)
    await wait_for(pilot, lambda: view.status == status and not app._busy_approvals)
    handled = asyncio.Event()
    app.call_later(handled.set)
    await wait_for(pilot, handled.is_set)


async def submit(pilot: Any, text: str, *, wait: bool = True) -> None:
    app = pilot.app
    app.chat.prompt.focus()
    app.chat.prompt.value = text  # typing each key works too, but is slow for long cases
    await pilot.press("enter")
    if wait:
        await wait_for(pilot, lambda: app._consult is not None and not app.consult_running)
        await pilot.pause()


async def run_palette_command(pilot: Any, query: str, title: str) -> None:
    """ctrl+p, type ``query``, wait until the palette's top hit is ``title`` (its search runs asynchronously,
    slower on a loaded machine), then Enter."""
    from textual.command import CommandList, CommandPalette

    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*query)

    def top_hit() -> str:
        options = app.screen.query_one(CommandList)
        if not options.option_count or options.highlighted is None:
            return ""
        return str(options.get_option_at_index(options.highlighted).prompt)

    await wait_for(pilot, lambda: title in top_hit(), timeout=10)
    await pilot.press("enter")


@pytest.fixture
def notices(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every notify() made by any app in the test, as (severity, message)."""
    from textual.app import App

    seen: list[tuple[str, str]] = []
    original = App.notify

    def record(self: App, message: str, *args: Any, **kwargs: Any) -> None:
        seen.append((kwargs.get("severity", "information"), str(message)))
        original(self, message, *args, **kwargs)

    monkeypatch.setattr(App, "notify", record)
    return seen


def pytest_configure(config: pytest.Config) -> None:
    """pytest-textual-snapshot writes its failure report to the working directory by default: keep the
    repository clean and put it in the temp dir (an explicit --snapshot-report still wins)."""
    if getattr(config.option, "snapshot_report", None) == "snapshot_report.html":
        import tempfile

        config.option.snapshot_report = str(Path(tempfile.gettempdir()) / "oncotui-snapshot-report.html")


def streaming_model() -> FakeModel:
    """A model that streams its draft for about 8 s: time to press Esc, ctrl+q or ctrl+s while a consult runs."""
    model = FakeModel(delay_s=0.05)
    model.outputs = [model.outputs[0] * 4]
    return model

