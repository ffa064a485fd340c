"""Put stored or model text into Textual markup so that it shows exactly as written.

Case text keeps the redactor's placeholders ("[PERSON_1]", "[MRN_1]", "[DATE_1]"), and guideline passages, model
drafts and notes may hold anything in square brackets. Textual's markup reads any "[word]" as a style tag and drops
it, and ``rich.markup.escape`` (like ``textual.markup.escape``) only escapes tags that start with a lower-case
letter, so "[PERSON_1]" vanished even where the text was escaped. ``literal`` escapes every opening bracket.
"""

from __future__ import annotations

ZERO_WIDTH_SPACE = "\u200b"


def literal(text: object) -> str:
    """``text`` as Textual markup that renders to exactly ``text`` (it may be followed by more markup).

    Textual treats "[" after a backslash as a plain bracket and drops that backslash, so a backslash already in
    front of a bracket stays (it is followed by the added one). Markup has no escape for a backslash itself: a
    trailing one would escape the tag that follows, so a zero-width space (no cell on screen) goes between them.
    """
    value = str(text).replace("[", "\\[")
    return value + ZERO_WIDTH_SPACE if value.endswith("\\") else value
