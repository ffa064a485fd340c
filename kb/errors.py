"""The one exception type the knowledge base raises at its boundary."""

from __future__ import annotations


class KBError(Exception):
    """A knowledge-base problem explained for a person: what failed, which setting, what to do."""
