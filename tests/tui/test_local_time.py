"""The app shows times on the local clock: in Tokyo an item queued at 00:40 UTC was shown "since 00:40" while
the wall clock said 09:40 (stored times are UTC with their offset)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from oncotui.clock import shown
from oncotui.widgets.approval.approvals_pane import since


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_stored_utc_times_are_shown_on_the_local_clock(tokyo: None) -> None:
    assert shown("2026-12-02T00:40:00+00:00") == "2026-12-02 09:40"
    assert since("2026-12-02T00:40:00+00:00", wide=True) == "12-02 09:40"
    # already the 2nd there
    assert since("2026-12-01T20:30:00+00:00", wide=False, today="2026-12-02") == "05:30"
    assert since("2026-12-01T12:00:00+00:00", wide=False, today="2026-12-02") == "12-01"


def test_a_time_that_does_not_parse_is_shown_as_stored() -> None:
    assert shown("not a time") == "not a time" and shown("") == ""
