"""The options list above a retrieved passage.

PDQ opens a treatment section with its options ("Treatment options for patients with newly diagnosed stage IV ...
disease include:" then "6. ALK inhibitors (for patients with ALK translocations)." and the drugs in bullets under it)
and then gives each option its own heading with the trials behind it ("... > #### ALK inhibitors (for patients with
ALK translocations) > ##### Lorlatinib"). Retrieval finds the trial passages; the list that says they are options is
split over several link-heavy chunks and is rarely among the top five. ``option_item`` cuts from a section's text
the list's lead-in and the one item a retrieved passage's heading names, verbatim, so the answer can quote the
guideline's recommendation beside the trial; ``list_context`` gives a retrieved chunk that begins inside the list
(the drugs under an item) the lead-in and the item line it continues. Lead-ins other than "... include:" and lists
of bullets are read too (``lead_in``); a list under any other lead-in (factors, trials, results) never is. An item
too short to be quoted as a sentence ("4. Immunotherapy.", ``short``) is given the paragraph its option's own
section opens with (``opening``), verbatim, so the answer has a sentence of the guideline's to quote for it.
"""

from __future__ import annotations

import re

# An options list's lead-in (``lead_in``), read on its words with trailing citation markers and a bold wrapper
# dropped: "Treatment options for ... include:", "... include the following:[[5](#cit/...)]", "**Treatment options for
# patients with ovarian germ cell tumors include:**", "Treatment options:", "Treatment options for patients with bulky
# tumors:", "The standard treatment option for ... is the following:", "Standard treatment options for ... are:".
# Not "Treatment options also depend on the site of recurrence, as follows:" nor a list of factors, trials or results.
_INCLUDE_RE = re.compile(r"\b(?:options?|approach(?:es)?|regimens?|choices?)\b[^:\n]*\binclude\b[^:\n]*:$",
                         re.IGNORECASE)
_BARE_RE = re.compile(r"^(?:standard\s+)?(?:treatment|therapy|therapeutic)\s+options(?:\s+for\b[^:]*)?:$"
                      r"(?<!as follows:)", re.IGNORECASE)
# "Treatment options for ... depend on the site of involvement, as follows:"
_NOT_BARE_RE = re.compile(r"\b(?:depends?|var(?:y|ies)|differs?)\b", re.IGNORECASE)
_STANDARD_RE = re.compile(r"^(?:the\s+)?standard\s+(?:treatment\s+)?options?\b[^:]*\b(?:is|are)"
                          r"(?:\s+the\s+following)?:$", re.IGNORECASE)
_CITES_RE = re.compile(r"(?:\[(?:\[[^\[\]]*\]\([^()\s]*\)[,\-\u2013\s]*)+\])+$")  # "[[5](#cit/section_5.5)]"
_NUMBERED_RE = re.compile(r"^\d{1,2}[.)]\s+")
_BULLET_RE = re.compile(r"^[-*+\u2022]\s+")
_HEADING_RE = re.compile(r"^#{1,6}\s")
_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
MAX_ITEM_CHARS = 900  # an item with many drugs is cut at a bullet (about one chunk)
SHORT_ITEM_WORDS = 4  # engine.safety.MIN_SENTENCE_WORDS: an item of fewer words ("1. Immunotherapy.") is not quotable
MAX_OPENING_CHARS = 500  # the opening paragraph under a short item's heading, cut at a sentence
_CITATION = r"\[(?:\[[^\[\]]*\]\([^()\s]*\)[,\-\u2013\s]*)+\]"  # "[[12](#cit/section_1.12)]" (engine.safety)
_CITATION_RE = re.compile(_CITATION)
_SENTENCE_END_RE = re.compile(r"(?:(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)\.|[!?;])(?:;?\s*" + _CITATION
                              + r")*(?=\s+[A-Z(\"'\[])")


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


def lead_in(line: str) -> str | None:
    """``line`` as an options list's lead-in (see ``_INCLUDE_RE`` and the shapes above it), or None. A bold wrapper is
    dropped ("**Treatment options ... include:**" reads as a heading, not as the header of its items); the words,
    links and citation markers are kept as written."""
    core = _CITES_RE.sub("", line.strip()).strip()
    if len(core) > 4 and core.startswith("**") and core.endswith("**") and "**" not in core[2:-2]:
        line = core = core[2:-2].strip()
    # the last sentence of a paragraph that ends in a colon: not "... regimen ... Results from this study include
    # the following:"
    plain = _LINK_RE.sub(r"\1", _CITATION_RE.sub(" ", core))  # "tumors.[[5](#cit/...)] In this ...": two sentences
    plain = re.split(r"(?<=[.!?])\s+(?=[A-Z(\[*])", " ".join(plain.split()))[-1]
    if _INCLUDE_RE.search(plain) or (_BARE_RE.match(plain) and not _NOT_BARE_RE.search(plain)) or \
            _STANDARD_RE.match(plain):
        return line.strip()
    return None


def _scan(lines: list[str]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """The options lists in ``lines`` (stripped): (lead-in, line number) of each item, and for each line the lead-in
    of the list it is in ("" when none) and the line number of the item it belongs to (-1 before the first item).
    A list's items are numbered ("6. ALK inhibitors ...", the drugs in bullets under each) or, when its first line is
    a bullet, bullets ("- Neoadjuvant chemotherapy."); prose or a heading ends it."""
    items: list[tuple[str, int]] = []
    state: list[tuple[str, int]] = []
    header, kind, item = "", None, -1
    for i, line in enumerate(lines):
        lead = lead_in(line)
        if lead:
            header, kind, item = lead, None, -1
        elif line and (_HEADING_RE.match(line) or not (_NUMBERED_RE.match(line) or _BULLET_RE.match(line))):
            header, kind, item = "", None, -1  # prose or a heading ends a list
        elif header and line:
            kind = kind or (_NUMBERED_RE if _NUMBERED_RE.match(line) else _BULLET_RE)
            if kind.match(line):
                items.append((header, i))
                item = i
        state.append((header, item))
    return items, state


def _item_lines(lines: list[str], i: int, size: int) -> list[str]:
    """Item ``i`` and, for a numbered item, the bullets under it, cut at a bullet after ``MAX_ITEM_CHARS``."""
    item = [lines[i]]
    if not _NUMBERED_RE.match(lines[i]):
        return item
    size += len(lines[i])
    for nxt in lines[i + 1:]:
        if not nxt:
            continue
        if not _BULLET_RE.match(nxt) or size + len(nxt) > MAX_ITEM_CHARS:
            break
        item.append(nxt)
        size += len(nxt) + 1
    return item


def option_item(section_text: str, heading: str) -> str | None:
    """The options list's lead-in line and the item named by ``heading`` (a numbered item with the bullets under it,
    or a bullet of a bulleted list), as written in ``section_text`` (the text of the section that opens with the
    list); None when the section has no such list or no item, or more than one, is the option ``heading`` names (the
    same words first, then ``names``, then ``spells_out``). The item is cut at a bullet after ``MAX_ITEM_CHARS``."""
    lines = [line.strip() for line in section_text.splitlines()]
    items, _ = _scan(lines)
    same = [x for x in items if _words(lines[x[1]]) == _words(heading)][:1]
    found = same or [x for x in items if names(lines[x[1]], heading)] or \
        [x for x in items if spells_out(lines[x[1]], heading)]
    if len(found) != 1:  # none, or a heading that could be several items: no guess
        return None
    header, i = found[0]
    return "\n\n".join([header, "\n".join(_item_lines(lines, i, len(header)))])


def list_context(section_text: str, start: int) -> tuple[str, str] | None:
    """For a chunk that begins at ``start`` in ``section_text`` inside an options list (after its lead-in, at an item
    or in the bullets under one): the list's lead-in as written and the numbered item line the chunk's first bullets
    sit under ("" when the chunk begins at an item, or in a bulleted list); in the bullets under an item of any other
    numbered list, ("", the item line). None when the chunk does not begin inside such a list (its first line is no
    item or bullet)."""
    if start <= 0:
        return None
    before = [line.strip() for line in section_text[:start].splitlines()]
    first = next((line.strip() for line in section_text[start:].splitlines() if line.strip()), "")
    if not before or not (_NUMBERED_RE.match(first) or _BULLET_RE.match(first)) or lead_in(first):
        return None
    items, state = _scan(before + [first])
    header, item = state[-1]
    if not header:
        # any other numbered list ("Evidence (...):" then "3. PrE0102 ... compared ... in postmenopausal women whose
        # disease had progressed after an AI." and its results in bullets): a chunk that begins in the bullets under
        # an item gets the item, the trial whose population they share (a QA pass's untreated premenopausal case was
        # offered PrE0102's "Median PFS was 10.3 months on the combination arm ..." without it)
        if not _BULLET_RE.match(first):
            return None
        k = len(before) - 1
        while k >= 0 and (not before[k] or _BULLET_RE.match(before[k])):
            k -= 1
        end = k + 1
        while k >= 0 and before[k] and not _NUMBERED_RE.match(before[k]) and not _BULLET_RE.match(before[k]):
            k -= 1  # an item wrapped over lines
        return ("", "\n".join(before[k:end])) if k >= 0 and _NUMBERED_RE.match(before[k]) else None
    if item == len(before) or item < 0:  # the chunk begins at an item (or before the first one)
        return header, ""
    return header, before[item] if _NUMBERED_RE.match(before[item]) else ""


def short(line: str) -> bool:
    """An item line too short to be quoted as a sentence: under ``SHORT_ITEM_WORDS`` words once its number or bullet
    and citation markers are dropped ("1. [Immunotherapy](/x#_1).", "2. TUR with fulguration.")."""
    body = _CITATION_RE.sub(" ", re.sub(r"^(?:\d{1,2}[.)]|[-*+\u2022])\s+", "", line.strip()))
    return len(body.split()) < SHORT_ITEM_WORDS


def _sentence_ends(text: str) -> list[int]:
    """Where the sentences of a paragraph end, as engine.safety splits them: at . ! ? ; and the citation markers
    after it, before a capital letter, a bracket or a quote mark (not after "e.g.", "i.e.", "vs."); and its end."""
    return [m.end() for m in _SENTENCE_END_RE.finditer(text)] + [len(text.rstrip())]


def opening(section_text: str) -> str | None:
    """The paragraph a section opens with, verbatim (its hard-wrapped lines as written), its first sentences within
    ``MAX_OPENING_CHARS`` (at least the first, when it fits in ``MAX_ITEM_CHARS``), without a last sentence that
    opens a list ("Combinations include the following:"): PDQ opens an option's own section with what it is for
    ("Intravesical BCG is the treatment of choice for reducing the risk of cancer progression ..."). None when the
    section opens with a heading, a list, a table, an image or a list's lead-in alone, or has no text."""
    para: list[str] = []
    for raw in section_text.splitlines():
        line = raw.strip()
        if not line:
            if para:
                break
            continue
        if _HEADING_RE.match(line) or _NUMBERED_RE.match(line) or _BULLET_RE.match(line) or line[0] in "|!<" or \
                (line.startswith("**") and line.rstrip(":").endswith("**")):
            break
        para.append(line)
    text = "\n".join(para)
    ends = _sentence_ends(text)
    if ends and _CITES_RE.sub("", text).rstrip().endswith(":"):
        ends = ends[:-1]  # a list's lead-in says nothing without its list
    if not ends:
        return None
    fit = [e for e in ends if e <= MAX_OPENING_CHARS] or [e for e in ends[:1] if e <= MAX_ITEM_CHARS]
    return text[:fit[-1]].rstrip() or None if fit else None


def item_key(line: str) -> str:
    """A short key of an item line for an options passage's id: its number ("6"), or its first words for a bullet."""
    m = re.match(r"^(\d{1,2})[.)]\s", line)
    return m.group(1) if m else "-".join(_words(line).split()[:6])


def scored_text(item: str) -> str:
    """What the cross-encoder reads of an ``option_item``: the lead-in and the option's line, links as their words.
    The bullets are drug names that add tokens (the cost of a pair grows with them) and little for relevance."""
    lead_in, _, listed = item.partition("\n\n")
    return _LINK_RE.sub(r"\1", f"{lead_in}\n\n{listed.splitlines()[0] if listed else ''}")
