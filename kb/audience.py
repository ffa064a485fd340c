"""Who a document is written for: ``kb ingest`` skips patient-facing material (patient versions, leaflets).

The knowledge base answers clinicians' questions; a patient leaflet repeats the guideline in simplified, often
less precise words and would crowd the clinician versions out of retrieval. The heuristic, in order:

1. **Title lines.** The document title (front matter ``title``, PDF metadata) and its first headings (the first
   ``TITLE_HEADINGS`` Markdown headings, or the first ``TITLE_LINES`` lines of a PDF) are read with links removed
   (``[Go to Patient Version](...)`` in a clinician summary points *elsewhere*). A clinician label ("Health
   Professional Version", "for health professionals", "for clinicians", ...) keeps the document, whatever follows;
   a patient label ("Patient Version", "for patients", "patient information", "patient guide/leaflet/handout",
   ...) skips it.
2. **Second person.** Otherwise a document of at least ``MIN_WORDS`` words whose rate of "you/your/yours/yourself/
   you're/..." reaches ``SECOND_PERSON_PER_1000`` per 1,000 words is patient-facing: leaflets talk to the reader,
   guidelines talk about "patients". Measured (words outside front matter and links): the 12 demo guidelines
   0.0 per 1,000; the 80 PDQ health-professional summaries (``../shared/corpus/pdq``) 0.0 to 0.09 (median 0.0);
   patient-style texts written for the tests (a leaflet; a mostly third-person "patient version") 44 to 105. The
   threshold of 10 is 100 times the highest clinician document and 4 times below the lowest patient text.

Front-matter audience fields (``audienceLevel`` etc.) are ignored: all 80 PDQ health-professional summaries say
``audienceLevel: patient``. ``kb ingest --include-patient-material`` turns the check off.
"""

from __future__ import annotations

import re

TITLE_HEADINGS = 3  # Markdown: the first headings that can carry the audience label ("# X – Patient Version")
TITLE_LINES = 5  # PDF: the first non-empty lines of the first page
MIN_WORDS = 80  # below this a handful of "you" says little
SECOND_PERSON_PER_1000 = 10.0

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_CLINICIAN = re.compile(
    r"health[\s-]*(?:care\s+)?professional(?:s)?(?:'|’)?\s+version|for\s+(?:health[\s-]*(?:care\s+)?)?"
    r"professionals|for\s+(?:clinicians|physicians|oncologists|health\s+professionals)|clinician\s+version"
    r"|\bHP\s+version", re.I)
_PATIENT = re.compile(
    r"patient(?:s)?(?:'|’)?\s+version|for\s+patients|patient\s+(?:information|education|guide|leaflet|handout"
    r"|booklet|fact\s*sheet)|information\s+for\s+(?:patients|you)|patients\s+and\s+(?:families|caregivers)",
    re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves)(?:['’](?:re|ll|ve|d))?\b", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def _strip_links(text: str) -> str:
    return _LINK.sub("", text)


def second_person_rate(text: str) -> tuple[float, int]:
    """(second-person words per 1,000 words, word count) of ``text`` with links removed."""
    plain = _strip_links(text)
    words = len(_WORD.findall(plain))
    if not words:
        return 0.0, 0
    return 1000.0 * len(_SECOND_PERSON.findall(plain)) / words, words


def markdown_title_lines(title: str, body: str) -> list[str]:
    """The front-matter title and the first ``TITLE_HEADINGS`` headings of a Markdown body."""
    heads = [line.lstrip("#").strip() for line in body.splitlines() if line.lstrip().startswith("#")]
    return [title, *heads[:TITLE_HEADINGS]]


def pdf_title_lines(title: str, first_page: str) -> list[str]:
    lines = [line.strip() for line in first_page.splitlines() if line.strip()]
    return [title, *lines[:TITLE_LINES]]


def patient_facing(title_lines: list[str], body: str) -> str | None:
    """Why the document is patient-facing (for the skip message), or None when it is kept (module docstring)."""
    for line in title_lines:
        if _CLINICIAN.search(_strip_links(line or "")):
            return None
    for line in title_lines:
        m = _PATIENT.search(_strip_links(line or ""))
        if m:
            return f"title says {m.group(0)!r}"
    rate, words = second_person_rate(body)
    if words >= MIN_WORDS and rate >= SECOND_PERSON_PER_1000:
        return f"{rate:.0f} 'you/your' per 1,000 words; threshold {SECOND_PERSON_PER_1000:.0f}, guidelines stay near 0"
    return None
