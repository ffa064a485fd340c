"""PDF text extraction with PyMuPDF: one section per page ("Page N"), in reading order, without running heads.

Reading order (``page_lines``): words are grouped into rows by baseline and each row into segments at wide
horizontal gaps. A page has two columns when some vertical gutter between 30% and 70% of the page width is
crossed by at most 10% of the rows while at least three rows have text on each side of it; then every run of rows
between full-width rows (titles, tables spanning the page: rows that cross the gutter) is read left column first,
then right column. This also handles columns whose lines share a baseline, which ``sort=True`` interleaves.

Running heads (``strip_running_heads``): in documents of 3+ pages, a line within the top or bottom 10% of the
page whose text, with digits masked, recurs on at least half of the pages is a header/footer and is dropped;
so are bare page numbers ("12", "Page 3", "3 of 10", "- 4 -") in those margins.
"""

from __future__ import annotations

import re
from pathlib import Path


class PdfError(Exception):
    """Why a PDF cannot be indexed (meant for a person)."""


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


def page_lines(page: object) -> list[tuple[float, float, str]]:
    """(top y, bottom y, text) lines of a page in reading order (multi-column aware)."""
    words = [w for w in page.get_text("words") if str(w[4]).strip()]  # type: ignore[attr-defined]
    if not words:
        return []
    width = float(page.rect.width)  # type: ignore[attr-defined]
    rows = _rows(words)
    segmented = [_segments(r[2]) for r in rows]
    gutter = _gutter(segmented, width)

    def text(ws: list[tuple]) -> str:
        return " ".join(str(w[4]) for w in ws)

    if gutter is None:
        return [(top, bot, "   ".join(text(s) for s in segs)) for (top, bot, _w), segs in zip(rows, segmented)]
    out: list[tuple[float, float, str]] = []
    left: list[tuple[float, float, str]] = []
    right: list[tuple[float, float, str]] = []

    def flush() -> None:
        out.extend(left)
        out.extend(right)
        left.clear()
        right.clear()

    for (top, bot, _w), segs in zip(rows, segmented):
        spans = [(s[0][0], s[-1][2]) for s in segs]
        if any(a < gutter < b for a, b in spans):  # a full-width row ends the column run
            flush()
            out.append((top, bot, "   ".join(text(s) for s in segs)))
            continue
        ls = [s for s, (a, b) in zip(segs, spans) if b <= gutter]
        rs = [s for s, (a, b) in zip(segs, spans) if a >= gutter]
        if ls:
            left.append((top, bot, " ".join(text(s) for s in ls)))
        if rs:
            right.append((top, bot, " ".join(text(s) for s in rs)))
    flush()
    return out


def _mask(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def strip_running_heads(pages: list[tuple[int, float, list[tuple[float, float, str]]]]) -> list[tuple[int, str]]:
    """[(page number, page height, lines)] -> [(page number, text)] without headers, footers and page numbers."""
    def in_margin(line: tuple[float, float, str], height: float) -> bool:
        return line[1] <= height * _MARGIN or line[0] >= height * (1 - _MARGIN)

    counts: dict[str, int] = {}
    for _n, height, lines in pages:
        for key in {_mask(ln[2]) for ln in lines if in_margin(ln, height)}:
            counts[key] = counts.get(key, 0) + 1
    repeated = {k for k, c in counts.items() if len(pages) >= 3 and c >= max(2, len(pages) / 2)}
    out: list[tuple[int, str]] = []
    for n, height, lines in pages:
        kept = [ln[2] for ln in lines
                if not (in_margin(ln, height) and (_mask(ln[2]) in repeated or _PAGE_NO.match(ln[2])))]
        out.append((n, "\n".join(kept)))
    return out


def _clean(text: str) -> str:
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def extract_pdf(path: Path, data: bytes | None = None) -> tuple[str, list[tuple[int, str]]]:
    """(title, [(page number from 1, page text), ...]) for pages that have text.

    Raises PdfError for a file that is not a readable PDF, is password-protected, has no pages, or has no
    extractable text (image-only / scanned).
    """
    pymupdf = _pymupdf()
    try:
        doc = pymupdf.open(stream=data, filetype="pdf") if data is not None else pymupdf.open(str(path), filetype="pdf")
    except Exception as e:
        raise PdfError(f"not a readable PDF (damaged or not a PDF at all): {e}") from e
    try:
        if doc.needs_pass or doc.is_encrypted:
            raise PdfError("password-protected (encrypted) PDF: save an unencrypted copy and ingest that")
        if doc.page_count == 0:
            raise PdfError("PDF has no pages")
        raw: list[tuple[int, float, list[tuple[float, float, str]]]] = []
        failed = 0
        for index in range(doc.page_count):
            try:
                page = doc.load_page(index)
                raw.append((index + 1, float(page.rect.height), page_lines(page)))
            except Exception:
                failed += 1
                continue
        pages = [(n, text) for n, text in ((n, _clean(t)) for n, t in strip_running_heads(raw)) if text]
        if not pages:
            if failed == doc.page_count:
                raise PdfError(f"could not read any of its {doc.page_count} page(s) (damaged PDF)")
            raise PdfError(f"no extractable text on its {doc.page_count} page(s): an image-only or scanned PDF "
                           "(run OCR on it first, e.g. ocrmypdf, and ingest the result) or a blank document")
        meta = doc.metadata or {}
        title = " ".join(str(meta.get("title") or "").split())
        return title or path.stem, pages
    finally:
        doc.close()
