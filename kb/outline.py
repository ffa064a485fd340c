"""The options list above a retrieved passage.

PDQ opens a treatment section with its options ("Treatment options for patients with newly diagnosed stage IV ...
disease include:" then "6. ALK inhibitors (for patients with ALK translocations)." and the drugs in bullets under it)
and then gives each option its own heading with the trials behind it ("... > #### ALK inhibitors (for patients with
ALK translocations) > ##### Lorlatinib"). Retrieval finds the trial passages; the list that says they are options is
split over several link-heavy chunks and is rarely among the top five. ``option_item`` cuts from a section's text
the list's lead-in and the one numbered item a retrieved passage's heading names, verbatim, so the answer can quote
the guideline's recommendation beside the trial.
"""

from __future__ import annotations

import re

_HEADER_RE = re.compile(r"\b(?:options?|approach(?:es)?|regimens?|choices?)\b[^:\n]*\binclude\b[^:\n]*:\s*$",
                        re.IGNORECASE)
_NUMBERED_RE = re.compile(r"^\d{1,2}[.)]\s+")
_BULLET_RE = re.compile(r"^[-*+\u2022]\s+")
_HEADING_RE = re.compile(r"^#{1,6}\s")
_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
MAX_ITEM_CHARS = 900  # an item with many drugs is cut at a bullet (about one chunk)


def _words(text: str) -> str:
    """Lower-case words of a heading or item label: links, emphasis, numbering, marks and a final stop dropped."""
    text = _LINK_RE.sub(r"\1", _NUMBERED_RE.sub("", re.sub(r"^#{1,6}\s*", "", text.strip())))
    return " ".join(re.findall(r"[a-z0-9]+", text.replace("*", "").lower()))


def names(label: str, heading: str) -> bool:
    """The item ``label`` is the option ``heading`` names ("6. [ALK inhibitors](...) (for patients with *ALK*
    translocations)." and "#### ALK inhibitors (for patients with *ALK* translocations)"); one may say more than the
    other after the shared words ("1. Immunotherapy." and "Immunotherapy"), not before them."""
    a, b = _words(label), _words(heading)
    if min(len(a), len(b)) < 4:
        return False
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith(short + " ")


def spells_out(label: str, heading: str) -> bool:
    """One of ``label`` and ``heading`` has every word of the other and not many more: PDQ's heading "... the
    addition of poly (ADP-ribose) polymerase (PARP) inhibitors to induction and/or consolidation therapy" words the
    item "... the addition of PARP inhibitors to induction therapy and/or consolidation therapy" more fully."""
    a, b = set(_words(label).split()), set(_words(heading).split())
    short, long = sorted((a, b), key=len)
    return len(short) >= 3 and short <= long and len(short) >= 0.75 * len(long)


def option_item(section_text: str, heading: str) -> str | None:
    """The options list's lead-in line and the numbered item named by ``heading`` with the bullets under it, as
    written in ``section_text`` (the text of the section that opens with the list); None when the section has no such
    list or no item, or more than one, is the option ``heading`` names (the same words first, then ``names``, then
    ``spells_out``). The item is cut at a bullet after ``MAX_ITEM_CHARS``."""
    lines = [line.strip() for line in section_text.splitlines()]
    header = ""
    items: list[tuple[str, int]] = []  # (lead-in, line number) of each numbered item under a lead-in
    for i, line in enumerate(lines):
        if _HEADER_RE.search(line):
            header = line
        elif _HEADING_RE.match(line) or (line and not _NUMBERED_RE.match(line) and not _BULLET_RE.match(line)):
            header = ""  # prose or a heading ends a list
        elif header and _NUMBERED_RE.match(line):
            items.append((header, i))
    same = [x for x in items if _words(lines[x[1]]) == _words(heading)][:1]
    found = same or [x for x in items if names(lines[x[1]], heading)] or \
        [x for x in items if spells_out(lines[x[1]], heading)]
    if len(found) != 1:  # none, or a heading that could be several items: no guess
        return None
    header, i = found[0]
    item = [lines[i]]
    size = len(header) + len(lines[i])
    for nxt in lines[i + 1:]:
        if not nxt:
            continue
        if not _BULLET_RE.match(nxt) or size + len(nxt) > MAX_ITEM_CHARS:
            break
        item.append(nxt)
        size += len(nxt) + 1
    return "\n\n".join([header, "\n".join(item)])


def scored_text(item: str) -> str:
    """What the cross-encoder reads of an ``option_item``: the lead-in and the option's line, links as their words.
    The bullets are drug names that add tokens (the cost of a pair grows with them) and little for relevance."""
    lead_in, _, listed = item.partition("\n\n")
    return _LINK_RE.sub(r"\1", f"{lead_in}\n\n{listed.splitlines()[0] if listed else ''}")
