"""PDF reading order and running-head stripping on PDFs generated here with PyMuPDF (no model needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

pymupdf = pytest.importorskip("pymupdf")

from kb.pdf import extract_pdf  # noqa: E402

LEFT = ("Left column first sentence about surgery. " * 3 + "LEFTEND marks the left column end. ") * 2
RIGHT = ("Right column text about chemotherapy dosing. " * 3 + "RIGHTEND marks the right column end. ") * 2


def _two_column_pdf(path: Path, pages: int = 3) -> None:
    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 40), "Oncology Center Guideline Series 2024", fontsize=9)  # running header
        page.insert_textbox(pymupdf.Rect(72, 80, 523, 110), f"Title Spanning Both Columns On Page {n}", fontsize=14)
        # two columns; lines of both share baselines (same font size and top)
        page.insert_textbox(pymupdf.Rect(72, 120, 290, 700), f"P{n}A " + LEFT, fontsize=10)
        page.insert_textbox(pymupdf.Rect(305, 120, 523, 700), f"P{n}B " + RIGHT, fontsize=10)
        page.insert_text((290, 815), f"Page {n} of {pages}", fontsize=9)  # footer with page number
    doc.set_metadata({"title": "Two Column Test"})
    doc.save(str(path))


def test_two_columns_on_shared_baselines_read_column_by_column(tmp_path):
    pdf = tmp_path / "two.pdf"
    _two_column_pdf(pdf)
    # the naive sort interleaves the columns: that is what this guards against
    naive = pymupdf.open(str(pdf)).load_page(0).get_text("text", sort=True)
    assert naive.index("RIGHTEND") < naive.rindex("LEFTEND")
    title, pages = extract_pdf(pdf)
    assert title == "Two Column Test" and [n for n, _t in pages] == [1, 2, 3]
    for n, text in pages:
        flat = " ".join(text.split())
        assert flat.index("Title Spanning Both Columns") < flat.index(f"P{n}A")
        # every left-column word comes before the right column starts
        assert flat.rindex("LEFTEND") < flat.index(f"P{n}B")
        assert "Left column first sentence about surgery. Left column" in flat  # lines not interleaved
        assert "Oncology Center Guideline Series" not in text  # running header gone
        assert "of 3" not in text  # page-number footer gone


def test_single_column_and_short_documents_keep_their_text(tmp_path):
    pdf = tmp_path / "one.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(72, 72, 523, 400), "A single column paragraph about radiotherapy. " * 8)
    page.insert_text((72, 40), "Header Line", fontsize=9)
    doc.save(str(pdf))
    _title, pages = extract_pdf(pdf)
    text = " ".join(pages[0][1].split())
    assert text.startswith("Header Line")  # one page: nothing repeats, nothing is stripped
    assert text.count("radiotherapy") == 8


def test_pdf_chunks_keep_page_numbers(tmp_path):
    from kb.chunking import chunk_sections

    pdf = tmp_path / "two.pdf"
    _two_column_pdf(pdf, pages=2)
    title, pages = extract_pdf(pdf)
    chunks = chunk_sections(((f"Page {n}", n, t) for n, t in pages), title=title, source=str(pdf), doc_hash="0" * 64,
                            max_chars=300)
    assert {c.page for c in chunks} == {1, 2}
    assert all(c.section == f"Page {c.page}" for c in chunks)


# --------------------------------------------------------------------------------------------- headings

BODY = ["Body text about staging and imaging.", "It continues on this line of text.", "A third line ends the paragraph."]


class _Col:
    """Writes lines down one column at explicit baselines, so both columns share baselines."""

    def __init__(self, page, x: float, y: float = 120.0) -> None:
        self.page, self.x, self.y = page, x, y

    def line(self, text: str, size: float = 10, font: str = "helv") -> None:
        self.y += size * 1.45
        self.page.insert_text((self.x, self.y), text, fontsize=size, fontname=font)

    def body(self, tag: str, n: int = 1) -> None:
        for i in range(n):
            for ln in BODY:
                self.line(f"{tag}{i} {ln}")


def _headings_pdf(path: Path) -> None:
    doc = pymupdf.open()
    for n in (1, 2):
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 40), "Acme Oncology Network | Guideline Series", fontsize=9)  # running header
        page.insert_text((72, 815), "Confidential. For internal use.", fontsize=9)
        page.insert_text((500, 815), str(n), fontsize=9)  # page number sharing the footer's row
        left, right = _Col(page, 72), _Col(page, 320)
        if n == 1:
            page.insert_text((72, 100), "Zorblax Cancer Guideline", fontsize=20)  # title, full width
            left.line("Treatment", 14)
            left.body("TREAT", 2)
            left.line("Adjuvant therapy", 12)
            left.body("ADJ")
            left.line("Consider adjuvant treatment with")  # a bold phrase on a line of its own, mid-sentence
            left.line("FOLFOX or CAPOX regimens", font="hebo")
            left.line("for six months after surgery.")
            left.line("Regimen", font="hebo")  # a table header row: bold cells, wide gap between them
            page.insert_text((210, left.y), "Dose", fontsize=10, fontname="hebo")
            left.line("FOLFOX            every two weeks")
            right.body("RADJ", 2)
            right.line("Follow-up care", font="hebo")  # bold heading at body size
            right.body("FOLLOW")
            right.line("Patients with an ")  # a bold in-line phrase
            page.insert_text((320 + pymupdf.get_text_length("Patients with an ", fontsize=10), right.y),
                             "important", fontsize=10, fontname="hebo")
            right.line("risk are seen more often.")
            right.line("3.2 Surveillance imaging", font="hebo")  # numbered bold heading
            right.body("SURV", 2)
        else:
            left.body("P2L", 4)  # no heading at the top: the path flows on from page 1
            right.line("Supportive care", 14)
            right.body("SUPP", 3)
    doc.set_metadata({"title": ""})
    doc.save(str(path))


def _sections(pdf: Path) -> list[tuple[str, int, str]]:
    from kb.chunking import plain_section
    from kb.pdf import pdf_sections

    _title, secs = pdf_sections(pdf)
    return [(plain_section(p), pg, " ".join(t.split())) for p, pg, t in secs]


def test_headings_of_two_sizes_bold_and_numbered_in_two_columns(tmp_path):
    pdf = tmp_path / "h.pdf"
    _headings_pdf(pdf)
    from kb.pdf import pdf_sections

    title, raw = pdf_sections(pdf)
    assert title == "Zorblax Cancer Guideline"  # no metadata title: the detected title heading
    secs = _sections(pdf)
    where = {tag: (path, pg) for tag in ("TREAT0", "ADJ0", "RADJ0", "FOLLOW0", "SURV0", "P2L0", "SUPP0")
             for path, pg, text in secs if tag in text}
    assert where["TREAT0"] == ("Treatment", 1)
    assert where["ADJ0"] == ("Treatment > Adjuvant therapy", 1)
    assert where["RADJ0"] == ("Treatment > Adjuvant therapy", 1)  # right column continues the left one's section
    assert where["FOLLOW0"] == ("Treatment > Adjuvant therapy > Follow-up care", 1)
    assert where["SURV0"] == ("Treatment > Adjuvant therapy > Follow-up care > 3.2 Surveillance imaging", 1)
    assert where["P2L0"] == ("Treatment > Adjuvant therapy > Follow-up care > 3.2 Surveillance imaging", 2)
    assert where["SUPP0"] == ("Supportive care", 2)  # 14 pt like "Treatment": a sibling
    # levels: 14 pt -> ##, 12 pt -> ###, bold body size -> ####, numbered depth 2 -> #####
    assert [p for p, _pg, _t in raw][:2] == ["## Treatment", "## Treatment > ### Adjuvant therapy"]
    paths = {p for p, _pg, _t in secs}
    for not_heading in ("FOLFOX or CAPOX", "Regimen", "important", "Acme Oncology", "Confidential"):
        assert not any(not_heading in p for p in paths), not_heading
    text = " ".join(t for _p, _pg, t in secs)
    assert "with FOLFOX or CAPOX regimens for six months" in text  # the bold phrase stays in its sentence
    assert "Regimen" in text and "Dose" in text
    assert "Acme Oncology Network" not in text and "Confidential" not in text  # running head and footer gone
    assert "Zorblax Cancer Guideline" not in text  # the title is a heading, not passage text
    # reading order: the left column's text comes before the right column's on page 1
    page1 = " ".join(t for _p, pg, t in secs if pg == 1)
    assert page1.index("TREAT1") < page1.index("ADJ0") < page1.index("RADJ0") < page1.index("SURV1")


def test_pdf_section_chunks_keep_pages_and_paths(tmp_path):
    from kb.chunking import chunk_sections, embedding_text
    from kb.pdf import pdf_sections

    pdf = tmp_path / "h.pdf"
    _headings_pdf(pdf)
    title, secs = pdf_sections(pdf)
    chunks = chunk_sections(secs, title=title, source=str(pdf), doc_hash="0" * 64, max_chars=200)
    assert {c.page for c in chunks} == {1, 2}
    assert all(c.section for c in chunks)
    sup = next(c for c in chunks if "SUPP0" in c.text)
    assert embedding_text(sup).startswith("Zorblax Cancer Guideline\nSupportive care\n")


def test_pdf_without_headings_keeps_page_paths_and_bold_body_is_no_heading(tmp_path):
    from kb.pdf import pdf_sections

    pdf = tmp_path / "bold.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    y = 80.0
    for i in range(12):  # a document set entirely in bold: bold says nothing there
        y += 14
        page.insert_text((72, y), f"Short bold line {i}", fontsize=10, fontname="hebo")
    doc.save(str(pdf))
    _title, secs = pdf_sections(pdf)
    assert [(p, pg) for p, pg, _t in secs] == [("Page 1", 1)]


def test_reference_sections_are_skipped_in_pdfs(tmp_path):
    pdf = tmp_path / "refs.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    col = _Col(page, 72, 60)
    col.line("Treatment", 14)
    col.body("T", 2)
    col.line("References", 14)
    col.line("1. Smith J. Prognosis of widget cancer. J Onc. 2020.")
    doc.save(str(pdf))
    secs = _sections(pdf)
    assert [p for p, _pg, _t in secs] == ["Treatment"]


def test_heading_sections_carry_the_path_across_pages():
    from kb.chunking import heading_sections

    items = [("intro\n", None, 1), ("", (2, "A"), 1), ("a1\n", None, 1), ("a2\n", None, 2), ("", (3, "B"), 2),
             ("b1\n", None, 2), ("b2\n", None, 3)]
    assert heading_sections(items) == [("", 1, "intro"), ("## A", 1, "a1"), ("## A", 2, "a2"),
                                       ("## A > ### B", 2, "b1"), ("## A > ### B", 3, "b2")]


# --------------------------------------------------------------------------------------------- running heads

def _two_page_pdf(path: Path) -> None:
    doc = pymupdf.open()
    for n in (1, 2):
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 40), "Acme Cancer Institute | Clinical Guideline v2", fontsize=9)
        page.insert_text((72, 815), "Copyright Acme Health 2024. For internal use.", fontsize=9)
        page.insert_text((500, 815), str(n), fontsize=9)  # page number on the footer's row
        page.insert_text((72, 70), f"Top band line unique to page {'one' if n == 1 else 'two'}.", fontsize=10)
        # the same real sentence near the top of both pages, but at different heights: content, not a header
        page.insert_text((72, 60 if n == 1 else 78), "Confirm the histology before treatment.", fontsize=10)
        for i in range(10):
            page.insert_text((72, 120 + 14 * i), f"Body line {n}-{i} about frobnicator cancer therapy.", fontsize=10)
    doc.save(str(path))


def test_two_page_header_footer_and_page_number_are_stripped(tmp_path):
    pdf = tmp_path / "two_pages.pdf"
    _two_page_pdf(pdf)
    _title, pages = extract_pdf(pdf)
    assert [n for n, _t in pages] == [1, 2]
    for n, text in pages:
        assert "Acme Cancer Institute" not in text and "Copyright" not in text
        assert not any(ln.strip() == str(n) for ln in text.splitlines())
        assert "Top band line unique to page" in text
        assert "Confirm the histology before treatment." in text
        assert f"Body line {n}-9" in text


def test_footer_piece_and_page_number_row_on_three_pages(tmp_path):
    pdf = tmp_path / "three.pdf"
    doc = pymupdf.open()
    for n in (1, 2, 3):
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 815), "Acme Health guideline", fontsize=9)
        page.insert_text((500, 815), f"Page {n}", fontsize=9)
        page.insert_text((72, 800), f"{n}0   {n}5", fontsize=9)  # a table row of numbers in the band: kept
        for i in range(5):
            page.insert_text((72, 120 + 14 * i), f"Body {n}-{i} text.", fontsize=10)
    doc.save(str(pdf))
    _title, pages = extract_pdf(pdf)
    for n, text in pages:
        assert "Acme Health" not in text and f"Page {n}" not in text
        assert f"{n}0" in text


# --------------------------------------------------------------------------------------------- damaged files

def _text_pdf_bytes() -> bytes:
    doc = pymupdf.open()
    for n in range(3):
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 523, 700), f"Page {n} guidance about widget cancer. " * 40)
    return doc.tobytes(deflate=True)


@pytest.mark.parametrize("share", [0.25, 0.5, 0.9])  # nothing readable / page 1 readable / all pages readable
def test_truncated_pdf_is_reported_as_damaged_not_as_scanned(tmp_path, share):
    from kb.pdf import PdfError, pdf_sections

    data = _text_pdf_bytes()
    pdf = tmp_path / "truncated.pdf"
    pdf.write_bytes(data[: int(len(data) * share)])
    for read in (extract_pdf, pdf_sections):
        with pytest.raises(PdfError) as e:
            read(pdf)
        assert "damaged or truncated" in str(e.value) and "OCR" not in str(e.value)
    with pytest.raises(PdfError, match="damaged or truncated"):  # bytes handed over, as kb.store does
        extract_pdf(pdf, pdf.read_bytes())


def test_clean_pdf_without_text_layer_gets_the_ocr_message(tmp_path):
    from kb.pdf import PdfError

    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(100, 100, 300, 300), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))  # a "scan"
    pdf = tmp_path / "scan.pdf"
    doc.save(str(pdf))
    with pytest.raises(PdfError) as e:
        extract_pdf(pdf)
    assert "OCR" in str(e.value) and "damaged" not in str(e.value)


def _partly_scanned_pdf(path: Path) -> None:
    """Page 1 has text, pages 2-3 only a picture (as a scanner makes them), page 4 is blank, page 5 has text."""
    doc = pymupdf.open()
    picture = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 80), 0)
    picture.clear_with(180)
    for n in range(1, 6):
        page = doc.new_page()
        if n in (1, 5):
            page.insert_textbox(pymupdf.Rect(72, 72, 523, 400), f"Page {n} text about adjuvant therapy. " * 5)
        elif n in (2, 3):
            page.insert_image(page.rect, pixmap=picture)
    doc.save(str(path))


def test_pages_without_a_text_layer_are_named(tmp_path):
    from kb.pdf import pdf_sections

    pdf = tmp_path / "partly-scanned.pdf"
    _partly_scanned_pdf(pdf)
    warnings: list[str] = []
    _title, pages = extract_pdf(pdf, warnings=warnings)
    assert [n for n, _t in pages] == [1, 5]
    # the blank page 4 lost nothing: not mentioned
    assert warnings == ["pages 2-3 have no text layer (scanned?); their content is not indexed: OCR the PDF first "
                        "(e.g. ocrmypdf) and ingest the result"]
    warnings.clear()
    pdf_sections(pdf, warnings=warnings)
    assert len(warnings) == 1 and warnings[0].startswith("pages 2-3 have no text layer")
    assert pdf_sections(pdf)[1]  # without the list: as before
