"""Markdown (and page text) -> retrieval chunks; sentence-safe cutting to a character budget.

Rules:

* Front matter (``---`` ... ``---`` at the top) is stripped; the title comes from its ``title:`` key, else the first
  ``#`` heading, else the file name.
* Sections split on ATX headings (``#`` .. ``######``) outside code fences. A section's path is its heading chain,
  e.g. ``"## Treatment by Stage > ### Early / Resectable Disease"``; the leading ``#`` title heading(s) are not
  part of the path, later ``#`` headings are. Text before the first heading has the path ``""``. Empty sections are skipped.
* A section longer than ``max_chars`` is packed greedily from whole paragraphs; a paragraph that does not fit
  alone is split into its list items/lines and then sentences. A sentence is never cut: a single sentence
  longer than ``max_chars`` becomes a chunk of its own (the only way a chunk exceeds ``max_chars``).
* Chunk text is a verbatim slice of the section (original line breaks and list markers kept).
* Sections that are not guidance are skipped (``SKIP_SECTIONS``, matched against every heading of the path, so
  their subsections go too): reference lists ("References", "Key References for ...", "Bibliography",
  "Citations") and summary boilerplate ("About This PDQ Summary", "Latest Updates to This Summary (04/25/2025)"
  with or without its date, "Changes to
  This Summary"). A store chunked before a name joined the list still holds those chunks: retrieval skips them
  (``kb.store``), so no re-ingest is needed. In the PDQ
  corpus they are 44% of the chunks (reference lists alone 40%); skipping them nearly halves embedding work, and
  their paper titles ("Prognosis of ...") otherwise pull section-level queries into the wrong place.
* Chunk ids are stable: the first 16 hex digits of the document's SHA-256 plus the chunk's index.
  ``CHUNKER_VERSION`` is stored with every chunk; a document chunked by another version is re-ingested.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

CHUNKER_VERSION = 3  # 3: a chunk cut inside a paragraph or list item carries that block's first sentence (lead)
SKIP_SECTIONS = re.compile(r"^(?:references?|key references(?: for .+)?|bibliography|citations|about this pdq "
                           r"summary|latest updates to this summary|changes to this summary)(?: \([\d/]+\))?$", re.I)


def skipped_section(path: str) -> bool:
    """Whether a section path (``## A > ### B``) lies under a heading that ``SKIP_SECTIONS`` matches."""
    return any(SKIP_SECTIONS.match(part) for part in plain_section(path).split(" > ") if part)


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    title: str
    source: str
    section: str  # heading path, e.g. "## A > ### B"; "Page N" for PDFs without headings; "" before the first one
    page: int | None
    doc_hash: str
    # When the chunk begins inside a paragraph or list item too long for one chunk: that block's first sentence,
    # verbatim ("3. **Nivolumab plus chemotherapy:** The CheckMate-649 trial randomly assigned ..."), which says
    # whose results the chunk's "A total of 789 patients ..." are. "" otherwise.
    lead: str = ""


def doc_hash_of(data: bytes | str) -> str:
    """SHA-256 hex digest of a document's bytes (str is UTF-8 encoded)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def chunk_id(doc_hash: str, index: int) -> str:
    return f"{doc_hash[:16]}-{index:04d}"


# --------------------------------------------------------------------------------------------- front matter

_FM_OPEN = re.compile(r"\A\ufeff?[ \t]*---[ \t]*\r?\n")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)
_FM_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")
_FM_ITEM = re.compile(r"^[ \t]*-[ \t]+(.*?)[ \t]*$")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return inner.replace('\\"', '"') if value[0] == '"' else inner.replace("''", "'")
    return value


def _fm_value(raw: str) -> object:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        return [_unquote(v.strip()) for v in inner.split(",") if v.strip()] if inner else []
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return _unquote(raw)


def parse_front_matter(text: str) -> tuple[dict[str, object], str]:
    """Split off a leading ``---`` front matter block: (simple ``key: value`` mapping, remaining text).

    Values: ``[a, b]`` or a ``- item`` block -> list of str, ``true``/``false`` -> bool, quoted or bare scalars ->
    str. Other nested YAML is not interpreted (such lines are ignored). Text without a closed front matter block is returned unchanged.
    """
    m = _FM_OPEN.match(text)
    if not m:
        return {}, text.lstrip("\ufeff")
    close = _FM_CLOSE.search(text, m.end())
    if not close:
        return {}, text.lstrip("\ufeff")
    meta: dict[str, object] = {}
    block_key: str | None = None  # a key with an empty value, possibly followed by "- item" lines
    for line in text[m.end():close.start()].splitlines():
        item = _FM_ITEM.match(line)
        if item and block_key is not None:
            items = meta.setdefault(block_key, [])
            if isinstance(items, list):
                items.append(_unquote(item.group(1)))
            continue
        km = _FM_KEY.match(line)
        block_key = None
        if km and km.group(2):
            meta[km.group(1)] = _fm_value(km.group(2))
        elif km:
            block_key = km.group(1)
    return meta, re.sub(r"\A\r?\n", "", text[close.end():])


# --------------------------------------------------------------------------------------------- markdown

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _heading_text(raw: str | None) -> str:
    return re.sub(r"(?:^|[ \t]+)#+$", "", (raw or "").strip()).strip()


def _iter_lines(body: str) -> Iterable[tuple[str, tuple[int, str] | None]]:
    """(line, (level, heading text) or None), with headings inside code fences ignored."""
    fence: str | None = None
    for line in body.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        if fence is not None:
            if stripped.strip().startswith(fence):
                fence = None
            yield line, None
            continue
        fm = _FENCE.match(stripped)
        if fm:
            fence = fm.group(1)[0] * 3
            yield line, None
            continue
        hm = _HEADING.match(stripped)
        if hm:
            yield line, (len(hm.group(1)), _heading_text(hm.group(2)))
        else:
            yield line, None


def parse_markdown(text: str, source: str) -> tuple[str, str]:
    """(title, body): front matter stripped; title from front matter ``title:``, else the first ``#`` heading,
    else the file name of ``source``."""
    meta, body = parse_front_matter(text)
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return " ".join(title.split()), body
    for _line, heading in _iter_lines(body):
        if heading and heading[0] == 1 and heading[1]:
            return heading[1], body
    return Path(source).stem if source else "Untitled", body


def markdown_sections(body: str) -> list[tuple[str, str]]:
    """(section path, section text) in document order, empty sections dropped.

    The first ``#`` heading is the document's title heading, as are ``#`` headings directly under it with no text
    in between (e.g. a "...-Health Professional Version" subtitle); they are left out of section paths. Later ``#``
    headings are ordinary sections.
    """
    return [(path, text) for path, _page, text in heading_sections((line, h, None) for line, h in _iter_lines(body))]


def heading_sections(items: Iterable[tuple[str, tuple[int, str] | None, int | None]]
                     ) -> list[tuple[str, int | None, str]]:
    """(section path, page, text) from (line, (level, heading text) or None, page) items in document order.

    The rules of ``markdown_sections``; in addition a section is cut where the page changes (each piece keeps
    its page) while its heading path carries on across the page break. Heading lines are not section text.
    """
    sections: list[tuple[str, int | None, str]] = []
    stack: list[tuple[int, str]] = []
    buf: list[str] = []
    buf_page: int | None = None
    title_block: bool | None = None  # None: no H1 yet; True: inside the leading title heading(s); False: past them
    text_since_heading = False  # page cuts flush too, so "text under the title" is tracked apart from flushes

    def flush() -> None:
        nonlocal text_since_heading
        text = "".join(buf).strip()
        buf.clear()
        if text:
            sections.append((" > ".join(label for _lvl, label in stack), buf_page, text))
            text_since_heading = True

    for line, heading, page in items:
        if heading is None:
            if page != buf_page:
                flush()
                buf_page = page
            buf.append(line)
            continue
        flush()
        buf_page = page
        if title_block and text_since_heading:
            title_block = False
        text_since_heading = False
        level, htext = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        if level == 1 and title_block is None:
            title_block = True
            continue
        if level == 1 and title_block:
            continue
        if title_block:
            title_block = False
        if htext:
            stack.append((level, f"{'#' * level} {htext}"))
    flush()
    return sections


def chunk_markdown(text: str, source: str, max_chars: int, doc_hash: str | None = None) -> list[Chunk]:
    """Split a Markdown document into chunks of at most ``max_chars`` characters (see module docstring)."""
    title, body = parse_markdown(text, source)
    sections = [(path, sec) for path, sec in markdown_sections(body) if not skipped_section(path)]
    return chunk_sections(((path, None, sec) for path, sec in sections), title=title, source=source,
                          doc_hash=doc_hash or doc_hash_of(text), max_chars=max_chars)


def chunk_sections(sections: Iterable[tuple[str, int | None, str]], *, title: str, source: str, doc_hash: str,
                   max_chars: int) -> list[Chunk]:
    """Chunks from (section path, page or None, text) triples, numbered across the whole document."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    chunks: list[Chunk] = []
    for section, page, text in sections:
        for piece, lead in pack_with_leads(text, max_chars):
            chunks.append(Chunk(id=chunk_id(doc_hash, len(chunks)), text=piece, title=title, source=source,
                                section=section, page=page, doc_hash=doc_hash, lead=lead))
    return chunks


# --------------------------------------------------------------------------------------------- sentences

_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "vs", "v", "cf", "ca", "approx", "dr", "mr", "mrs", "ms", "prof", "fig", "figs", "al", "no", "nos",
    "st", "ref", "refs", "vol", "pp", "p", "inc", "ltd", "jr", "sr", "dept", "eq", "resp",
})
_SENT_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])")
_BLOCK_START = re.compile(r"^[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+|\|)")
_INITIALISM = re.compile(r"^(?:[A-Za-z]\.){2,}$")


def _paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of blank-line separated paragraphs (trailing whitespace excluded)."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos, cur_start, cur_end = start, None, start
    for line in text[start:end].splitlines(keepends=True):
        content = line.rstrip()
        if content.strip():
            if cur_start is None:
                cur_start = pos + (len(line) - len(line.lstrip()))
            cur_end = pos + len(content)
        elif cur_start is not None:
            spans.append((cur_start, cur_end))
            cur_start = None
        pos += len(line)
    if cur_start is not None:
        spans.append((cur_start, cur_end))
    return spans


def _block_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Within one paragraph: list items / table rows start new blocks; other lines continue the current one."""
    blocks: list[tuple[int, int]] = []
    pos = start
    for line in text[start:end].splitlines(keepends=True):
        content = line.rstrip()
        if content.strip():
            s = pos + (len(line) - len(line.lstrip()))
            e = pos + len(content)
            if blocks and not _BLOCK_START.match(line):
                blocks[-1] = (blocks[-1][0], e)
            else:
                blocks.append((s, e))
        pos += len(line)
    return blocks


def _is_abbreviation(text: str, seg_start: int, dot_end: int) -> bool:
    """Whether the terminator run ending at ``dot_end`` closes an abbreviation such as "e.g." or "vs."."""
    i = dot_end
    while i > seg_start and not text[i - 1].isspace():
        i -= 1
    token = text[i:dot_end].lstrip("([\"'\u201c\u2018")
    token = token.rstrip("\"'\u201d\u2019)]")
    if not token.endswith("."):
        return False
    if _INITIALISM.match(token):
        return True
    return token[:-1].casefold() in _ABBREVIATIONS


def _sentence_spans_in(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    seg = start
    for m in _SENT_END.finditer(text, start, end):
        if _is_abbreviation(text, seg, m.end()) and text[m.start()] == ".":
            continue
        spans.append((seg, m.end()))
        nxt = m.end()
        while nxt < end and text[nxt].isspace():
            nxt += 1
        seg = nxt
    if seg < end and text[seg:end].strip():
        spans.append((seg, end))
    return spans


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text``; paragraph and list-item boundaries also end sentences."""
    out: list[tuple[int, int]] = []
    for ps, pe in _paragraph_spans(text):
        for bs, be in _block_spans(text, ps, pe):
            out.extend(_sentence_spans_in(text, bs, be))
    return out


def split_sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


_MARKER_ONLY = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]*$")
MAX_LEAD_CHARS = 600  # a longer first sentence is not repeated before each chunk of its block


def _units(text: str, max_chars: int) -> list[tuple[int, int, tuple[int, int] | None]]:
    """Indivisible-enough pieces for packing: whole paragraphs, else list items/lines, else sentences. Each with
    the span of its block's first sentence when it is a later sentence of a block cut into sentences, else None."""
    units: list[tuple[int, int, tuple[int, int] | None]] = []
    for ps, pe in _paragraph_spans(text):
        if pe - ps <= max_chars:
            units.append((ps, pe, None))
            continue
        for bs, be in _block_spans(text, ps, pe):
            if be - bs <= max_chars:
                units.append((bs, be, None))
                continue
            sentences = _sentence_spans_in(text, bs, be)
            # a numbered item's marker reads as a sentence of its own ("1." before "In the ... ToGA trial ...")
            k = 1 if len(sentences) > 1 and _MARKER_ONLY.match(text, *sentences[0]) else 0
            head = (sentences[0][0], sentences[k][1])
            units.extend((s, e, head if i > k and head[1] - head[0] <= MAX_LEAD_CHARS else None)
                         for i, (s, e) in enumerate(sentences))
    return units


def pack_with_leads(text: str, max_chars: int) -> list[tuple[str, str]]:
    """Greedy packing of ``text`` into verbatim slices of at most ``max_chars`` that never cut a sentence, each with
    its lead (``Chunk.lead``): the first sentence of the block it begins inside, or ""."""
    pieces: list[tuple[str, str]] = []
    cur: tuple[int, int] | None = None
    lead = ""
    for s, e, first in _units(text, max_chars):
        if cur is not None and e - cur[0] <= max_chars:
            cur = (cur[0], e)
            continue
        if cur is not None:
            pieces.append((text[cur[0]:cur[1]], lead))
        cur, lead = (s, e), text[first[0]:first[1]].strip() if first else ""
    if cur is not None:
        pieces.append((text[cur[0]:cur[1]], lead))
    return [(p, lead) for p, lead in ((p.strip(), lead) for p, lead in pieces) if p]


def pack(text: str, max_chars: int) -> list[str]:
    """Greedy packing of ``text`` into verbatim slices of at most ``max_chars`` that never cut a sentence."""
    return [p for p, _ in pack_with_leads(text, max_chars)]


# --------------------------------------------------------------------------------------------- budget

def cut_to_sentences(text: str, max_chars: int) -> str:
    """The longest prefix of ``text`` made of whole sentences within ``max_chars`` ("" when none fits)."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    best = 0
    for _s, e in sentence_spans(text):
        if e > max_chars:
            break
        best = e
    return text[:best].rstrip()


def trim_to_budget(texts: Sequence[str], budget: int) -> list[tuple[int, str]]:
    """Fit passages (in rank order) into ``budget`` characters in total.

    Returns (index, text) for each passage kept: whole when it fits in what is left, else cut at a sentence
    boundary; a passage of which not even one sentence fits is dropped and later (shorter) passages may still
    fill the remaining budget. Only passage characters count (no separators).
    """
    kept: list[tuple[int, str]] = []
    remaining = budget
    for i, text in enumerate(texts):
        if remaining <= 0:
            break
        text = text.strip()
        if not text:
            continue
        piece = text if len(text) <= remaining else cut_to_sentences(text, remaining)
        if piece:
            kept.append((i, piece))
            remaining -= len(piece)
    return kept


# --------------------------------------------------------------------------------------------- context

def plain_section(section: str) -> str:
    """``"## A > ### B"`` -> ``"A > B"``."""
    return " > ".join(re.sub(r"^#+\s*", "", part.strip()) for part in section.split(" > ") if part.strip())


_PAGE_PATH = re.compile(r"^Page \d+$")


def context_text(title: str, section: str, page: int | None, text: str) -> str:
    """What gets embedded / reranked: the passage with its document title and heading path in front, so that a
    passage such as "Surgery is ..." under a breast-cancer guideline carries "breast cancer" with it."""
    head = [title] if title else []
    if section and not _PAGE_PATH.match(section):  # "Page N" (a PDF without detected headings) says nothing
        head.append(plain_section(section))
    return "\n".join([*head, text]) if head else text


def with_lead(lead: str, text: str) -> str:
    """A chunk's text after its lead (``Chunk.lead``), when it has one: how it is embedded and retrieved."""
    return f"{lead}\n{text}" if lead else text


def embedding_text(chunk: Chunk) -> str:
    """What a chunk is embedded (and indexed for BM25) as: ``context_text`` of its lead and text."""
    return context_text(chunk.title, chunk.section, chunk.page, with_lead(chunk.lead, chunk.text))
