"""Times as the reviewer's clock shows them: the store keeps UTC (ISO 8601 with its offset); the app shows
local time, so "waiting since 09:43" means what the wall clock says (it showed UTC, unlabelled)."""

from __future__ import annotations

from datetime import datetime


def local(stamp: str) -> datetime | None:
    """A stored timestamp in the local time zone; None for one that does not parse."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None
    return moment.astimezone() if moment.tzinfo else moment  # naive stamps are shown as written


def shown(stamp: str, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """``stamp`` in local time as ``fmt``; the text as stored when it does not parse."""
    moment = local(stamp)
    return moment.strftime(fmt) if moment else (stamp or "")[:16].replace("T", " ")
