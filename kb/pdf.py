"""Basic PDF text extraction with PyMuPDF: one section per page ("Page N"). Layout analysis is out of scope."""

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
        pages: list[tuple[int, str]] = []
        failed = 0
        for index in range(doc.page_count):
            try:
                text = _clean(doc.load_page(index).get_text("text"))
            except Exception:
                failed += 1
                continue
            if text:
                pages.append((index + 1, text))
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
