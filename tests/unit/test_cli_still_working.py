"""`oncotui ask` on a long case: a small CPU model reads the prompt for minutes before its first token, and
stderr showed only "▸ Drafting a recommendation…". A line now says the step is still under way, with its time
so far."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.events import NodeFinished, NodeStarted
from oncotui import cli


async def _slow_consult(pause_s: float) -> Any:
    yield NodeStarted("PT-0001", "c1", "specialist", "Drafting a recommendation")
    await asyncio.sleep(pause_s)
    yield NodeFinished("PT-0001", "c1", "specialist", "Drafting a recommendation", pause_s)


def test_a_step_without_events_says_it_is_still_under_way(monkeypatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "STILL_WORKING_S", 0.1)
    asyncio.run(cli._consume(_slow_consult(0.35), as_json=False))
    err = capsys.readouterr().err
    assert err.count("… still drafting a recommendation (") == 3
    assert err.index("Drafting a recommendation…") < err.index("… still") < err.index("done")


def test_json_output_stays_one_object_per_event(monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "STILL_WORKING_S", 0.1)
    asyncio.run(cli._consume(_slow_consult(0.35), as_json=True))
    out = capsys.readouterr()
    assert "still" not in out.err + out.out
    assert [line.split('"event": "')[1].split('"')[0] for line in out.out.splitlines()] == \
        ["NodeStarted", "NodeFinished"]


def test_a_cancelled_consult_cancels_the_step_it_waits_for(monkeypatch) -> None:
    """Ctrl-C cancels the command's task; the consult's step it was waiting on must be cancelled with it (the
    engine checkpoints and stops the model on its cancellation), not left running."""
    monkeypatch.setattr(cli, "STILL_WORKING_S", 0.05)
    cancelled = []

    async def consult() -> Any:
        yield NodeStarted("PT-0001", "c1", "specialist", "Drafting a recommendation")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        yield NodeFinished("PT-0001", "c1", "specialist", "Drafting a recommendation", 10)

    async def main() -> None:
        task = asyncio.ensure_future(cli._consume(consult(), as_json=False))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled == [True]
