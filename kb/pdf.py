"""PDF text extraction with PyMuPDF: pages in reading order, without running heads, with detected headings.

Reading order (``page_lines``): words are grouped into rows by baseline and each row into segments at wide
horizontal gaps. A page has two columns when some vertical gutter between 30% and 70% of the page width is
crossed by at most 10% of the rows while at least three rows have text on each side of it; then every run of rows
between full-width rows (titles, tables spanning the page: rows that cross the gutter) is read left column first,
then right column. This also handles columns whose lines share a baseline, which ``sort=True`` interleaves.

Running heads (``running_lines``): a line within the top or bottom 10% of the page is a header/footer and is
dropped when its text, with digits masked, recurs in the same band on at least half of the pages (3+ pages) or on
both pages at nearly the same height (2 pages). A band line made only of such repeated pieces and page numbers
("Copyright ...   4") goes too, as do bare page numbers ("12", "Page 3", "3 of 10", "- 4 -") in the bands.

Headings (``pdf_sections``): the body size is the font size carrying the most characters. A heading is a line of
one segment (not a table row) that is either clearly larger than the body (>= body + max(1 pt, 12%)) or entirely
bold at body size or above (when the body itself is not bold), is short, does not end like a sentence (. , ; and,
for bold lines, :), is no "Table 2"/"Figure 1" caption, and for bold lines does not sit inside a paragraph (the
line before it ends a sentence or is set apart, the line after it does not start in lower case). Consecutive
heading lines of one style are one wrapped heading. Levels rank (size, bold, numbering depth of "2.1 ...");
a largest-size heading that occurs only on the first page (or repeats there word for word as a running title) is
the document title, level 1 and out of the path. The section path carries across pages; every piece keeps its
page. A PDF without detected headings keeps "Page N" paths.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from kb.chunking import heading_sections, skipped_section

PDF_LAYOUT_VERSION = 2  # bump when what a PDF turns into (text, headings, paths) changes: such PDFs need re-ingesting


class PdfError(Exception):
    """Why a PDF cannot be indexed (meant for a person)."""


class Line(NamedTuple):
    top: float
    bottom: float
    text: str
    size: float = 0.0  # font size carrying most of the line's characters
    bold: bool = False  # (nearly) every character bold
    segments: int = 1  # pieces split at wide gaps: more than one is a table row or similar, never a heading


def _pymupdf():  # imported lazily: PyMuPDF is heavy
    try:
        import pymupdf
    except ImportError:  # older releases only ship the `fitz` name
        import fitz as pymupdf  # type: ignore[no-redef]
    try:
        pymupdf.TOOLS.mupdf_display_errors(False)
        pymupdf.TOOLS.mupdf_display_warnings(False)
    except Exception:  # pragma: no cover - older API
        pass
    return pymupdf


_PAGE_NO = re.compile(r"^[\s\-\u2013\u2014|]*(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?[\s\-\u2013\u2014|]*$", re.I)
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi", re.I)  # fonts whose flags miss bold
_ROW_TOL = 3.0  # points: words whose vertical centres differ less than this share a row
_MARGIN = 0.10  # top/bottom share of the page where running heads live


def _rows(words: list[tuple]) -> list[tuple[float, float, list[tuple]]]:
    """[(top y, bottom y, words sorted by x)] grouped by vertical centre."""
    rows: list[list[tuple]] = []
    centres: list[float] = []
    for w in sorted(words, key=lambda w: ((w[1] + w[3]) / 2, w[0])):
        c = (w[1] + w[3]) / 2
        if rows and abs(c - centres[-1]) <= _ROW_TOL:
            rows[-1].append(w)
        else:
            rows.append([w])
            centres.append(c)
    return [(min(w[1] for w in r), max(w[3] for w in r), sorted(r, key=lambda w: w[0])) for r in rows]


def _segments(row_words: list[tuple]) -> list[list[tuple]]:
    """Split a row at horizontal gaps wider than about two average character widths (min 12 pt)."""
    chars = sum(len(w[4]) for w in row_words) or 1
    char_w = sum(w[2] - w[0] for w in row_words) / chars
    gap = max(12.0, 2.5 * char_w)
    segs: list[list[tuple]] = [[row_words[0]]]
    for w in row_words[1:]:
        if w[0] - segs[-1][-1][2] > gap:
            segs.append([w])
        else:
            segs[-1].append(w)
    return segs


def _gutter(rows: list[list[list[tuple]]], width: float) -> float | None:
    """x of a column gutter (see the module docstring) or None for a single-column page."""
    if len(rows) < 6:
        return None
    best: tuple[int, float, float] | None = None
    x = width * 0.3
    while x <= width * 0.7:
        crossing = left = right = 0
        for segs in rows:
            spans = [(s[0][0], s[-1][2]) for s in segs]
            if any(a < x < b for a, b in spans):
                crossing += 1
            else:
                left += any(b <= x for _a, b in spans)
                right += any(a >= x for a, _b in spans)
        if crossing <= 0.1 * len(rows) and left >= 3 and right >= 3:
            key = (crossing, abs(x - width / 2), x)
            if best is None or key[:2] < best[:2]:
                best = key
        x += 2.0
    return None if best is None else best[2]


def _words(page: object) -> list[tuple]:
    """PyMuPDF words (x0, y0, x1, y1, text, ...), each followed by (font size, bold) of the span it lies in."""
    pymupdf = _pymupdf()
    tp = page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS)  # type: ignore[attr-defined]
    # one text page for both calls, so the words' (block, line) numbers index the dict's lines
    spans: dict[tuple[int, int], list[tuple[float, float, float, bool]]] = {}
    for block in page.get_text("dict", textpage=tp)["blocks"]:  # type: ignore[attr-defined]
        for li, line in enumerate(block.get("lines", ())):
            spans[(block["number"], li)] = [
                (s["bbox"][0], s["bbox"][2], float(s["size"]),
                 bool(s["flags"] & 16) or bool(_BOLD_FONT.search(str(s.get("font", "")))))
                for s in line["spans"] if str(s["text"]).strip()]
    out: list[tuple] = []
    for w in page.get_text("words", textpage=tp):  # type: ignore[attr-defined]
        if not str(w[4]).strip():
            continue
        cands = spans.get((w[5], w[6]), [])
        best = max(cands, key=lambda s: min(s[1], w[2]) - max(s[0], w[0]), default=None)
        out.append((*w[:5], best[2] if best else 0.0, best[3] if best else False))
    return out


def _line(top: float, bottom: float, segs: list[list[tuple]], sep: str) -> Line:
    sizes: Counter[float] = Counter()
    chars = bold = 0
    for w in (w for s in segs for w in s):
        n = len(str(w[4]))
        size = float(w[5]) if len(w) > 6 else 0.0
        sizes[round(size * 2) / 2] += n
        chars += n
        bold += n if len(w) > 6 and w[6] else 0
    text = sep.join(" ".join(str(w[4]) for w in s) for s in segs)
    return Line(top, bottom, text, sizes.most_common(1)[0][0], bold >= 0.9 * chars, len(segs))


def page_lines(page: object) -> list[Line]:
    """Lines of a page in reading order (multi-column aware), with font size and boldness."""
    words = _words(page)
    if not words:
        return []
    width = float(page.rect.width)  # type: ignore[attr-defined]
    rows = _rows(words)
    segmented = [_segments(r[2]) for r in rows]
    gutter = _gutter(segmented, width)
    if gutter is None:
        return [_line(top, bot, segs, "   ") for (top, bot, _w), segs in zip(rows, segmented)]
    out: list[Line] = []
    left: list[Line] = []
    right: list[Line] = []

    def flush() -> None:
        out.extend(left)
        out.extend(right)
        left.clear()
        right.clear()

    for (top, bot, _w), segs in zip(rows, segmented):
        spans = [(s[0][0], s[-1][2]) for s in segs]
        if any(a < gutter < b for a, b in spans):  # a full-width row ends the column run
            flush()
            out.append(_line(top, bot, segs, "   "))
            continue
        ls = [s for s, (a, b) in zip(segs, spans) if b <= gutter]
        rs = [s for s, (a, b) in zip(segs, spans) if a >= gutter]
        if ls:
            left.append(_line(top, bot, ls, " "))
        if rs:
            right.append(_line(top, bot, rs, " "))
    flush()
    return out


# --------------------------------------------------------------------------------------------- running heads

def _mask(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _pieces(text: str) -> list[str]:
    """A row's segments (joined by 3+ spaces in ``page_lines``), e.g. footer text and its page number."""
    return [p for p in re.split(r"\s{3,}", text.strip()) if p]


def _band(line: tuple, height: float) -> str | None:
    if line[1] <= height * _MARGIN:
        return "top"
    if line[0] >= height * (1 - _MARGIN):
        return "bottom"
    return None


def running_lines(pages: list[tuple[int, float, list[Line]]]) -> list[tuple[int, list[Line]]]:
    """[(page number, page height, lines)] -> [(page number, lines)] without headers, footers and page numbers."""
    seen: dict[tuple[str, str], dict[int, float]] = {}  # (band, masked text) -> {page index: top of the line}
    for i, (_n, height, lines) in enumerate(pages):
        for ln in lines:
            band = _band(ln, height)
            if band is None:
                continue
            for key in {_mask(ln[2]), *(_mask(p) for p in _pieces(ln[2]))}:
                seen.setdefault((band, key), {}).setdefault(i, float(ln[0]))

    def repeated(band: str, text: str) -> bool:
        key = _mask(text)
        if not any(c.isalpha() for c in key):  # a row of numbers (a table) is not branding
            return False
        tops = seen.get((band, key), {})
        if len(pages) >= 3:
            return len(tops) >= max(2, len(pages) / 2)
        # two pages: both, at nearly the same height (a real line rarely recurs in the very same place)
        return len(pages) == 2 and len(tops) == 2 and abs(tops[0] - tops[1]) <= 6.0

    def running(ln: Line, band: str) -> bool:
        if _PAGE_NO.match(ln[2]) or repeated(band, ln[2]):
            return True
        pieces = _pieces(ln[2])
        words = [p for p in pieces if not _PAGE_NO.match(p)]
        # "Copyright ...   4": repeated pieces plus a page number; a row of bare numbers (a table) is kept
        return bool(words) and all(repeated(band, p) for p in words)

    out: list[tuple[int, list[Line]]] = []
    for n, height, lines in pages:
        kept = [ln for ln in lines if (band := _band(ln, height)) is None or not running(ln, band)]
        out.append((n, kept))
    return out


# --------------------------------------------------------------------------------------------- headings

_NUMBERED = re.compile(r"^(?:(?:section|chapter|part)\s+)?(\d{1,2}(?:\.\d{1,2}){0,5})\.?\s+(?=\S)", re.I)
_CAPTION = re.compile(r"^(?:table|figure|fig\.?|box|algorithm)\s*[A-Z]?\d", re.I)
_TOC_ENTRY = re.compile(r"(?:\.\s?){4,}\s*\d*$|\u2026\s*\d*$")  # "Treatment ........ 12": a contents line
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")


def _depth(text: str) -> int:
    m = _NUMBERED.match(text)
    return m.group(1).count(".") + 1 if m else 1


def _heading_text_ok(text: str, bold_only: bool) -> bool:
    """Short, not a sentence, not a caption; bold-only lines also must not start in lower case or end in ':'."""
    words = text.split()
    letters = sum(c.isalpha() for c in text)
    if letters < 2 or len(words) > (14 if bold_only else 20) or len(text) > (100 if bold_only else 150):
        return False
    if text.rstrip()[-1] in ".,;" + (":" if bold_only else "") or _CAPTION.match(text) or _PAGE_NO.match(text) \
            or _TOC_ENTRY.search(text):
        return False
    first = next(c for c in text if c.isalpha())
    return not (bold_only and first.islower())


def _same(text: str) -> str:
    return " ".join(text.lower().split())  # digits kept: "Section 2" is no repeat of "Section 1"


def detect_headings(pages: list[tuple[int, list[Line]]]) -> tuple[str, list[tuple[int, list[tuple[int | None, str]]]]]:
    """(title heading or "", [(page number, [(heading level or None, text), ...])]); see the module docstring."""
    sizes: Counter[float] = Counter()
    bold_body = 0
    for _n, lines in pages:
        for ln in lines:
            sizes[ln.size] += len(ln.text)
    if not sizes:
        return "", [(n, [(None, ln.text) for ln in lines]) for n, lines in pages]
    body = sizes.most_common(1)[0][0]
    for _n, lines in pages:
        bold_body += sum(len(ln.text) for ln in lines if ln.bold and ln.size == body)
    bold_means_heading = bold_body < 0.5 * sizes[body]  # in an all-bold document bold says nothing
    large_min = body + max(1.0, 0.12 * body)

    def style(ln: Line) -> tuple[float, bool] | None:
        if ln.segments != 1:
            return None
        if ln.size >= large_min:
            return (ln.size, ln.bold)
        if ln.bold and bold_means_heading and ln.size >= body - 0.25:
            return (ln.size, True)
        return None

    # (page index, first line index, last line index, text, size, bold)
    found: list[tuple[int, int, int, str, float, bool]] = []
    for pi, (_n, lines) in enumerate(pages):
        i = 0
        while i < len(lines):
            st = style(lines[i])
            if st is None:
                i += 1
                continue
            j = i  # a wrapped heading: following lines of the same style, close below, not a new numbered one
            while (j + 1 < len(lines) and j - i < 2 and style(lines[j + 1]) == st
                   and -0.3 * st[0] <= lines[j + 1].top - lines[j].bottom <= 0.6 * st[0]
                   and not _NUMBERED.match(lines[j + 1].text)):
                j += 1
            text = " ".join(ln.text.strip() for ln in lines[i:j + 1])
            bold_only = st[0] < large_min
            ok = _heading_text_ok(text, bold_only)
            if ok and bold_only:  # an emphasised phrase inside a paragraph is no heading
                prev = lines[i - 1] if i > 0 else None
                nxt = lines[j + 1] if j + 1 < len(lines) else None
                if prev is not None and style(prev) is None and 0 <= lines[i].top - prev.bottom < 0.5 * st[0] \
                        and not _SENTENCE_END.search(prev.text.rstrip()):
                    ok = False
                if nxt is not None and nxt.text.lstrip()[:1].islower():
                    ok = False
            if ok:
                found.append((pi, i, j, text, st[0], st[1]))
            i = j + 1
    if not found:
        return "", [(n, [(None, ln.text) for ln in lines]) for n, lines in pages]

    def key(h: tuple[int, int, int, str, float, bool]) -> tuple[float, bool, int]:
        return (-h[4], not h[5], _depth(h[3]))

    # the title: the first heading, larger than every other heading (repeats of its own text aside), on page 1
    title = ""
    first = found[0]
    others = [h for h in found[1:] if _same(h[3]) != _same(first[3])]
    if first[0] == 0 and first[4] >= large_min and all(h[4] < first[4] for h in others):
        title = first[3]
    ranks = sorted({key(h) for h in found if not (title and _same(h[3]) == _same(title))})
    level_of = {k: min(6, 2 + r) for r, k in enumerate(ranks)}
    starts: dict[tuple[int, int], tuple[int, int, int | None, str]] = {}
    for h in found:
        is_title = bool(title) and _same(h[3]) == _same(title)
        if is_title and h is not first:
            starts[(h[0], h[1])] = (h[1], h[2], None, "")  # a running title: dropped
        else:
            starts[(h[0], h[1])] = (h[1], h[2], 1 if is_title else level_of[key(h)], h[3])
    out: list[tuple[int, list[tuple[int | None, str]]]] = []
    for pi, (n, lines) in enumerate(pages):
        items: list[tuple[int | None, str]] = []
        i = 0
        while i < len(lines):
            h = starts.get((pi, i))
            if h is None:
                items.append((None, lines[i].text))
                i += 1
                continue
            if h[2] is not None:
                items.append((h[2], h[3]))
            i = h[1] + 1
        out.append((n, items))
    return title, out


# --------------------------------------------------------------------------------------------- documents

def _clean(text: str) -> str:
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _cut_short(path: Path, data: bytes | None) -> bool:
    """Whether the file lacks the %%EOF marker near its end, as a download or copy cut off midway does."""
    try:
        if data is None:
            with open(path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 2048))
                data = f.read()
        return b"%%EOF" not in data[-2048:]
    except OSError:
        return False


def _page_list(numbers: list[int]) -> str:
    """[2, 3, 5] -> "pages 2-3, 5"; [4] -> "page 4"."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    text = ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
    return ("pages " if len(numbers) > 1 else "page ") + text


def _shows_image(doc: object, number: int) -> bool:
    try:
        return bool(doc.load_page(number - 1).get_image_info())  # type: ignore[attr-defined]
    except Exception:  # unreadable here means unknown: say nothing rather than guess
        return False


def _left_out(doc: object, raw: list[tuple[int, float, list[Line]]], pages: list[tuple[int, list[Line]]],
              failed: list[tuple[int, str]]) -> list[str]:
    """Sentences naming the pages of an otherwise readable PDF whose content is not indexed: pages that show an
    image but carry no text (scanned) and pages that could not be read. Blank pages are not mentioned."""
    texted = {n for n, _lines in pages}
    scanned = [n for n, _h, _lines in raw if n not in texted and _shows_image(doc, n)]
    notes = []
    if scanned:
        one = len(scanned) == 1
        notes.append(f"{_page_list(scanned)} {'has' if one else 'have'} no text layer (scanned?); "
                     f"{'its' if one else 'their'} content is not indexed: OCR the PDF first (e.g. ocrmypdf) and "
                     "ingest the result")
    if failed:
        one = len(failed) == 1
        notes.append(f"{_page_list([n for n, _e in failed])} could not be read ({failed[0][1]}); "
                     f"{'its' if one else 'their'} content is not indexed")
    return notes


def _check_header(path: Path, data: bytes | None) -> None:
    """PdfError for a file that is empty or is no PDF at all (no "%PDF-" in its first KiB, where MuPDF looks too),
    saying what it is instead of MuPDF's "Failed to open stream". Damaged PDFs are left to MuPDF."""
    try:
        if data is None:
            with open(path, "rb") as f:
                head = f.read(1024)
        else:
            head = data[:1024]
    except OSError:
        return  # unreadable: the caller's open names the reason
    if not head:
        raise PdfError("empty file (0 bytes): nothing to index; copy or export the PDF again")
    if b"%PDF-" in head:
        return
    try:  # incremental: a character cut at the end of the first KiB is not binary data
        sample = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        printable = all(c.isprintable() or c in "\r\n\t\f" for c in sample)
    except UnicodeDecodeError:
        printable = False
    if printable:
        first = " ".join(sample.split())[:40]
        what = f"it begins with the text {first!r}"
    else:
        what = "binary data"
    raise PdfError(f"not a readable PDF: no %PDF- header ({what}); a file of another kind named .pdf?")


def _read(path: Path, data: bytes | None) -> tuple[str, list[tuple[int, list[Line]]], list[str]]:
    """(metadata title, [(page number, lines)] for pages with text, what was left out (``_left_out``)), running
    heads stripped; PdfError when nothing can be indexed."""
    _check_header(path, data)
    pymupdf = _pymupdf()
    tools = getattr(pymupdf, "TOOLS", None)
    if tools is not None:
        tools.reset_mupdf_warnings()  # what MuPDF says while opening and reading tells a damaged file apart
    try:
        doc = pymupdf.open(stream=data, filetype="pdf") if data is not None else pymupdf.open(str(path), filetype="pdf")
    except Exception as e:
        raise PdfError(f"not a readable PDF (damaged or not a PDF at all): {e}") from e
    try:
        if doc.needs_pass or doc.is_encrypted:
            raise PdfError("password-protected (encrypted) PDF: save an unencrypted copy and ingest that")
        raw: list[tuple[int, float, list[Line]]] = []
        failed: list[tuple[int, str]] = []
        for index in range(doc.page_count):
            try:
                page = doc.load_page(index)
                raw.append((index + 1, float(page.rect.height), page_lines(page)))
            except Exception as e:
                failed.append((index + 1, str(e)))
        warnings = [w for w in (tools.mupdf_warnings() if tools is not None else "").splitlines() if w.strip()]
        pages = [(n, lines) for n, lines in running_lines(raw) if _clean("\n".join(ln.text for ln in lines))]
        why = "; ".join([*(f"page {n}: {e}" for n, e in failed[:2]), *warnings[:3]]) or \
            "MuPDF had to repair its structure"
        if doc.is_repaired and _cut_short(path, data):
            # what survives of a cut-off file is part of the guideline at best: indexing it would hide the loss
            raise PdfError(f"damaged or truncated PDF: the file ends early (no %%EOF at its end; {why}); "
                           "get an intact copy (re-download or re-export it) and ingest that")
        if not pages:
            if doc.is_repaired or failed or warnings or doc.page_count == 0:
                raise PdfError(f"damaged or truncated PDF: no text could be read from it ({why}); "
                               "get an intact copy (re-download or re-export it) and ingest that")
            raise PdfError(f"no extractable text on its {doc.page_count} page(s): an image-only or scanned PDF "
                           "(run OCR on it first, e.g. ocrmypdf, and ingest the result) or a blank document")
        meta = doc.metadata or {}
        return " ".join(str(meta.get("title") or "").split()), pages, _left_out(doc, raw, pages, failed)
    finally:
        doc.close()


def extract_pdf(path: Path, data: bytes | None = None,
                warnings: list[str] | None = None) -> tuple[str, list[tuple[int, str]]]:
    """(title, [(page number from 1, page text), ...]) for pages that have text (headings as plain lines).

    Raises PdfError for a file that is not a readable PDF, is damaged or truncated, is password-protected, or has
    no extractable text (image-only / scanned). ``warnings``, when given, receives a sentence for each kind of page
    left out of an otherwise readable PDF ("pages 2-3 have no text layer (scanned?); ...", unreadable pages).
    """
    title, pages, left_out = _read(path, data)
    if warnings is not None:
        warnings.extend(left_out)
    return title or path.stem, [(n, _clean("\n".join(ln.text for ln in lines))) for n, lines in pages]


def pdf_sections(path: Path, data: bytes | None = None,
                 warnings: list[str] | None = None) -> tuple[str, list[tuple[str, int, str]]]:
    """(title, [(section path, page, text), ...]) ready for ``kb.chunking.chunk_sections``.

    Paths are heading paths like Markdown's ("## Treatment > ### 2.1 Adjuvant therapy"), carried across pages;
    a PDF without detected headings gets "Page N". Reference lists and other ``SKIP_SECTIONS`` are left out.
    Raises PdfError and fills ``warnings`` as ``extract_pdf`` does.
    """
    meta_title, pages, left_out = _read(path, data)
    if warnings is not None:
        warnings.extend(left_out)
    heading_title, marked = detect_headings(pages)
    title = meta_title or heading_title or path.stem
    if not any(level for _n, items in marked for level, _t in items):
        return title, [(f"Page {n}", n, _clean("\n".join(t for _l, t in items))) for n, items in marked]
    lines: Iterable[tuple[str, tuple[int, str] | None, int]] = (
        (text + "\n", (level, text) if level else None, n) for n, items in marked for level, text in items)
    return title, [(p, int(pg or 0), _clean(t)) for p, pg, t in heading_sections(lines) if not skipped_section(p)]
