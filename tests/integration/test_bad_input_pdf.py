"""PDFs that cannot be indexed, each with a reason a person can act on: an empty file says it is empty, a text
file renamed .pdf says it is not a PDF, an encrypted one says so, a scanned one says to OCR it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.pdf import PdfError, extract_pdf


def _reason(path: Path) -> str:
    with pytest.raises(PdfError) as exc:
        extract_pdf(path)
    return str(exc.value)


def test_zero_byte_pdf_says_it_is_empty(tmp_path):
    pdf = tmp_path / "zero.pdf"
    pdf.write_bytes(b"")
    reason = _reason(pdf)
    assert "empty file (0 bytes)" in reason and "Cannot open empty stream" not in reason


def test_text_file_renamed_pdf_says_what_it_is(tmp_path):
    pdf = tmp_path / "renamed.pdf"
    pdf.write_text("Adjuvant therapy notes, exported as plain text\nline two\n", encoding="utf-8")
    reason = _reason(pdf)
    assert reason.startswith("not a readable PDF") and "%PDF" in reason
    assert "'Adjuvant therapy notes" in reason and "Failed to open stream" not in reason


def test_binary_junk_is_not_a_readable_pdf(tmp_path):
    pdf = tmp_path / "junk.pdf"
    pdf.write_bytes(bytes(range(256)) * 4)
    reason = _reason(pdf)
    assert reason.startswith("not a readable PDF") and "binary data" in reason


def test_a_pdf_with_a_little_junk_before_its_header_still_reads(tmp_path):
    fitz = pytest.importorskip("pymupdf")
    doc = fitz.open()
    doc.new_page().insert_text((72, 72), "Adjuvant FOLFOX is a standard option after resection.", fontsize=11)
    pdf = tmp_path / "prefixed.pdf"
    pdf.write_bytes(b"\r\n\r\n" + doc.tobytes())
    _title, pages = extract_pdf(pdf)
    assert "FOLFOX" in pages[0][1]


def test_encrypted_and_scanned_pdfs_keep_their_reasons(tmp_path):
    fitz = pytest.importorskip("pymupdf")
    doc = fitz.open()
    doc.new_page().insert_text((72, 72), "Secret guideline", fontsize=11)
    enc = tmp_path / "enc.pdf"
    doc.save(enc, encryption=fitz.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")
    assert "password-protected" in _reason(enc)
    scan = fitz.open()
    pix = fitz.Pixmap(fitz.csRGB, fitz.IRect(0, 0, 50, 50), False)
    pix.clear_with(200)
    scan.new_page().insert_image(fitz.Rect(72, 72, 122, 122), pixmap=pix)
    scanned = tmp_path / "scan.pdf"
    scan.save(scanned)
    assert "OCR" in _reason(scanned)
