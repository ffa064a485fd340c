"""kb.chunking: Markdown -> chunks, sentence-safe packing and budget trimming (no models, no Chroma)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

from kb.chunking import (  # noqa: E402
    Chunk,
    chunk_id,
    chunk_markdown,
    cut_to_sentences,
    doc_hash_of,
    embedding_text,
    pack,
    parse_front_matter,
    parse_markdown,
    plain_section,
    split_sentences,
    trim_to_budget,
)

DOC = """---
title: "Lung Cancer: Demo Guideline"
cancerTypes: [nsclc, lung adenocarcinoma]
demo: true
---
> Demonstration content. Not for clinical use.

# Lung Cancer: Demo Guideline

## Overview
Non-small cell lung cancer is the most common type. Treatment depends on stage.

## Treatment by Stage
### Early Disease
Stage I disease is resected. Stereotactic radiotherapy is an alternative for patients unfit for surgery.

### Advanced Disease
Driver mutations guide first-line therapy (e.g. EGFR, ALK). Immunotherapy is used otherwise.

## Empty Section

## Biomarkers
- EGFR: osimertinib.
- ALK: alectinib.
"""


def sentences_of(text: str) -> list[str]:
    return [" ".join(s.split()) for s in split_sentences(text)]


# ------------------------------------------------------------------------------------------- front matter

def test_front_matter_title_and_values():
    meta, body = parse_front_matter(DOC)
    assert meta["title"] == "Lung Cancer: Demo Guideline"
    assert meta["cancerTypes"] == ["nsclc", "lung adenocarcinoma"]
    assert meta["demo"] is True
    assert not body.startswith("---") and "title:" not in body


def test_front_matter_block_list():
    meta, body = parse_front_matter("---\ntitle: X\ncancerTypes:\n- breast\n- lung\nstatus: active\n---\n# X\n")
    assert meta == {"title": "X", "cancerTypes": ["breast", "lung"], "status": "active"}
    assert body == "# X\n"


def test_title_precedence():
    title, body = parse_markdown(DOC, "docs/lung.md")
    assert title == "Lung Cancer: Demo Guideline"
    assert "title:" not in body
    assert parse_markdown("intro\n\n# First Heading\n\n## Sub\ntext", "a/b.md")[0] == "First Heading"
    assert parse_markdown("just text, no headings", "guides/my_doc.md")[0] == "my_doc"
    assert parse_markdown("---\nfoo: bar\n---\n# From H1\n", "x.md")[0] == "From H1"


# ------------------------------------------------------------------------------------------- sections

def test_sections_follow_heading_paths():
    chunks = chunk_markdown(DOC, "docs/lung.md", max_chars=900)
    assert [c.section for c in chunks] == [
        "",  # the preamble before the first heading
        "## Overview",
        "## Treatment by Stage > ### Early Disease",
        "## Treatment by Stage > ### Advanced Disease",
        "## Biomarkers",
    ]
    assert all(c.title == "Lung Cancer: Demo Guideline" and c.source == "docs/lung.md" for c in chunks)
    assert all(c.page is None for c in chunks)
    assert chunks[-1].text == "- EGFR: osimertinib.\n- ALK: alectinib."  # verbatim slice, markers kept
    assert not any("Empty Section" in c.section for c in chunks)  # empty sections are skipped
    assert not any(c.text.lstrip().startswith("#") for c in chunks)  # headings are not chunk text


def test_title_heading_is_not_in_the_path_but_other_h1s_are():
    text = "# Guide\n\nintro text.\n\n## A\nalpha.\n\n# Appendix\n\n## B\nbeta.\n"
    sections = [c.section for c in chunk_markdown(text, "g.md", 500)]
    assert sections == ["", "## A", "# Appendix > ## B"]


def test_leading_title_and_subtitle_headings_stay_out_of_paths():
    text = ("---\ntitle: Anal Cancer Treatment - NCI\n---\n\n# Anal Cancer Treatment - NCI\n\n"
            "# Anal Cancer Treatment - Health Professional Version\n\n## General Information\nSome facts.\n\n"
            "### Incidence\nNumbers.\n")
    chunks = chunk_markdown(text, "anal.md", 500)
    assert [c.section for c in chunks] == ["## General Information", "## General Information > ### Incidence"]
    assert chunks[0].title == "Anal Cancer Treatment - NCI"


def test_headings_inside_code_fences_do_not_split():
    text = "# T\n\n## Code\n```\n# not a heading\nx = 1\n```\nAfter the fence.\n\n## Next\nMore.\n"
    chunks = chunk_markdown(text, "t.md", 500)
    assert [c.section for c in chunks] == ["## Code", "## Next"]
    assert "# not a heading" in chunks[0].text


def test_headings_with_closing_hashes():
    chunks = chunk_markdown("# T #\n\n## Dosing ##\nGive it daily.\n", "t.md", 100)
    assert chunks[0].title == "T" and chunks[0].section == "## Dosing"


# ------------------------------------------------------------------------------------------- sizes

LONG_SECTION = " ".join(
    f"Sentence number {i} describes regimen {i} in some detail, e.g. dosing and schedule, for stage {i % 4 + 1}."
    for i in range(40)
)


@pytest.mark.parametrize("max_chars", [120, 250, 400, 900])
def test_max_chars_and_sentences_are_never_cut(max_chars):
    text = f"# T\n\n## Long\n{LONG_SECTION}\n\nA second paragraph. It is short.\n"
    chunks = chunk_markdown(text, "t.md", max_chars)
    assert len(chunks) > 1
    original = sentences_of(LONG_SECTION) + ["A second paragraph.", "It is short."]
    rebuilt: list[str] = []
    for c in chunks:
        assert len(c.text) <= max_chars, (len(c.text), c.text)
        assert c.section == "## Long"
        rebuilt.extend(sentences_of(c.text))
    assert rebuilt == original  # nothing lost, nothing split, order kept


def test_a_sentence_longer_than_max_chars_stays_whole():
    long_sentence = "This single sentence " + "goes on and on " * 20 + "until it ends."
    text = f"## S\nShort one. {long_sentence} Another short one.\n"
    chunks = chunk_markdown(text, "t.md", max_chars=60)
    assert [c.text for c in chunks] == ["Short one.", long_sentence, "Another short one."]


def test_list_items_are_kept_whole_when_a_list_is_split():
    items = "\n".join(f"- Item {i}: drug {i} is used for indication {i}." for i in range(12))
    chunks = chunk_markdown(f"## List\n{items}\n", "t.md", max_chars=150)
    assert len(chunks) > 1
    for c in chunks:
        assert len(c.text) <= 150
        for line in c.text.splitlines():
            assert re.fullmatch(r"- Item \d+: drug \d+ is used for indication \d+\.", line)


def test_abbreviations_do_not_end_sentences():
    assert split_sentences("Use e.g. EGFR testing. Then vs. ALK. The U.S. FDA approved it. Done.") == [
        "Use e.g. EGFR testing.", "Then vs. ALK.", "The U.S. FDA approved it.", "Done."]
    assert split_sentences("Dose is 2.5 mg daily. Next.") == ["Dose is 2.5 mg daily.", "Next."]


def test_pack_drops_blank_text():
    assert pack("   \n\n  ", 100) == []


# ------------------------------------------------------------------------------------------- ids

def test_chunk_ids_are_stable_and_depend_on_content():
    a = chunk_markdown(DOC, "docs/lung.md", 900)
    b = chunk_markdown(DOC, "docs/lung.md", 900)
    assert [c.id for c in a] == [c.id for c in b]
    h = doc_hash_of(DOC)
    assert all(c.doc_hash == h for c in a)
    assert [c.id for c in a] == [chunk_id(h, i) for i in range(len(a))]
    assert len({c.id for c in a}) == len(a)
    changed = chunk_markdown(DOC.replace("most common", "commonest"), "docs/lung.md", 900)
    assert not {c.id for c in changed} & {c.id for c in a}
    given = chunk_markdown(DOC, "docs/lung.md", 900, doc_hash="ab" * 32)
    assert given[0].id.startswith("abababababababab-")


def test_embedding_text_carries_title_and_section():
    c = Chunk(id="x", text="Surgery first.", title="Breast Guide", source="s", section="## A > ### B", page=None,
              doc_hash="h")
    assert embedding_text(c) == "Breast Guide\nA > B\nSurgery first."
    assert plain_section("## Treatment > ### Early") == "Treatment > Early"


# ------------------------------------------------------------------------------------------- budget

PASSAGES = [
    "First passage has one sentence. And a second sentence here. And a third one to finish.",
    "Second passage is short.",
    "Third passage. It has two sentences.",
]


def test_trim_keeps_whole_passages_that_fit():
    assert trim_to_budget(PASSAGES, 10_000) == list(enumerate(PASSAGES))


def test_trim_cuts_at_a_sentence_boundary():
    budget = len(PASSAGES[0]) + 10
    kept = trim_to_budget(PASSAGES, budget)
    assert kept[0] == (0, PASSAGES[0])
    # "Second passage is short." (24) does not fit in 10 and is a single sentence -> dropped
    assert [i for i, _ in kept] == [0]
    kept = trim_to_budget(PASSAGES, 45)
    # 31 chars of the first passage (its next sentence would pass 45); 14 left: passage 2 (24) is dropped and
    # the first sentence of passage 3 (14) fills the rest
    assert kept == [(0, "First passage has one sentence."), (2, "Third passage.")]


def test_trim_drops_a_passage_when_no_sentence_fits_but_later_ones_can_fill():
    kept = trim_to_budget(["A very long first sentence that cannot fit at all here.", "Tiny one."], 20)
    assert kept == [(1, "Tiny one.")]


@pytest.mark.parametrize("budget", [0, 5, 24, 40, 60, 90, 120, 200])
def test_trim_never_exceeds_budget_nor_cuts_a_sentence(budget):
    kept = trim_to_budget(PASSAGES, budget)
    assert sum(len(t) for _, t in kept) <= budget
    for i, text in kept:
        assert PASSAGES[i].startswith(text)
        assert set(sentences_of(text)) <= set(sentences_of(PASSAGES[i]))
        assert text.endswith((".", "!", "?"))


def test_cut_to_sentences():
    assert cut_to_sentences("One. Two. Three.", 9) == "One. Two."
    assert cut_to_sentences("One. Two. Three.", 3) == ""
    assert cut_to_sentences("  One. Two.  ", 100) == "One. Two."


# ------------------------------------------------------------------------------------------- layering

def test_import_kb_is_cheap_and_layered():
    code = (
        "import sys, kb, kb.store, kb.chunking, kb.models, kb.embed, kb.rerank, kb.pdf\n"
        "kb.KnowledgeBase, kb.RetrievalParams, kb.Embedder, kb.resolve_embedder\n"
        "heavy = [m for m in ('chromadb', 'torch', 'sentence_transformers', 'onnxruntime', 'fitz', 'pymupdf',\n"
        "                     'transformers', 'numpy', 'engine', 'oncotui') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=120)


def test_kb_sources_do_not_import_higher_layers():
    for path in (REPO / "kb").glob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import)\s+(engine|oncotui)\b", text, re.M), path


def test_reference_lists_and_boilerplate_sections_are_skipped():
    from kb.chunking import chunk_markdown

    doc = ("# T\n\n## Prognosis\nSurvival is good.\n\n###### References\n1. Smith J: Prognosis of cancer. 2001.\n\n"
           "## About This PDQ Summary\n\n### Purpose of This Summary\nBoilerplate.\n\n## Treatment\nSurgery.\n")
    chunks = chunk_markdown(doc, "t.md", 900)
    assert [c.section for c in chunks] == ["## Prognosis", "## Treatment"]
    assert not any("Smith" in c.text or "Boilerplate" in c.text for c in chunks)


def test_a_chunk_cut_inside_a_long_list_item_carries_the_items_first_sentence():
    """Session 20: CheckMate-649's "A total of 789 patients ..." had been retrieved without the item's head, which
    names the trial and its HER2-negative population."""
    item = ("1. In a randomized phase III study (CheckMate-649), 1,581 patients with HER2-negative gastric cancer "
            "were assigned to nivolumab plus chemotherapy or chemotherapy. "
            + "Overall survival was longer with nivolumab in every subgroup that was studied. " * 3
            + "A total of 789 patients were assigned to the CPS 5 group. The median follow-up was 13 months.")
    chunks = chunk_markdown(f"## Trials\n{item}\n\nA new paragraph follows here.\n", "t.md", max_chars=220)
    head = item.split(" Overall")[0]  # "1." is no sentence of its own: the lead is the whole first sentence
    assert chunks[0].text.startswith(head) and chunks[0].lead == ""
    later = [c for c in chunks if "789 patients" in c.text]
    assert later and later[0].lead == head
    assert all(c.lead in ("", head) for c in chunks)
    assert embedding_text(later[0]).startswith(f"t\nTrials\n{head}\n")
    assert pack("Short one. Another.", 100) == ["Short one. Another."]
