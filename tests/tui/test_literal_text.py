"""Stored and model text is shown literally: Textual markup must not eat the redactor's placeholders ("[PERSON_1]")
or anything else in square brackets (passages, titles, notes, errors)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from textual.content import Content
from textual.widget import Widget
from textual.widgets import DataTable

from oncotui.widgets.chat.consult_view import ConsultView
from oncotui.widgets.literal import ZERO_WIDTH_SPACE, literal
from tests.fakes import PANCREAS_PASSAGE, FakeKB
from tests.tui.conftest import build, submit, wait_for

SIZE = (120, 40)
PHI_CASE = ("Patient: Margaret Thornbury, MRN 88412907, DOB 03/14/1961. Seen by Dr. Alan Whitcombe. "
            "Pancreatic adenocarcinoma, ECOG 1. Literal [bold]x[/bold] and [E9]. Options?")
PLACEHOLDER = re.compile(r"\[[A-Z]+_\d+\]")


def shown(widget: Widget) -> str:
    """The text a Static / Label draws (its visual), without the zero-width spaces ``literal`` may add."""
    visual = widget.render()
    return getattr(visual, "plain", str(visual)).replace(ZERO_WIDTH_SPACE, "")


@pytest.mark.parametrize("text", [
    "[PERSON_1], MRN [MRN_1], DOB [DATE_1]", "[bold]x[/bold]", "[E1] [/i] [/]", "a\\[b] c", "ends in \\",
    "C:\\path\\[x]\\", "[$accent]x", "[@click=app.quit]q[/]", "plain", ""])
@pytest.mark.parametrize("template", ["{}", "[b]{}[/b] after", "[dim]{}[/] [red]y[/red]"])
def test_literal_renders_exactly_the_text(text: str, template: str) -> None:
    markup = template.format(literal(text))
    expected = re.sub(r"\[/?(b|dim|red)?\]", "", template).format(text)
    assert Content.from_markup(markup).plain.replace(ZERO_WIDTH_SPACE, "") == expected


async def test_placeholders_and_brackets_in_the_case_text_show_verbatim(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, PHI_CASE)
        stored = engine.store.latest(app.current_patient).state.case_text
        assert PLACEHOLDER.search(stored) and "Thornbury" not in stored  # the redactor ran
        await app.open_patient(app.current_patient)  # reopened: the question comes from the store
        await pilot.pause()
        [view] = app.query(ConsultView)
        question = shown(view.query_one(".question"))
        assert stored in question
        for placeholder in PLACEHOLDER.findall(stored):
            assert placeholder in question
        assert "Literal [bold]x[/bold] and [E9]." in question


class BracketKB(FakeKB):
    """Passages whose title, section and text carry square brackets; out-of-domain queries get a bracketed title."""

    def __init__(self) -> None:
        super().__init__()
        self.docs[0] = replace(self.docs[0], title="Pancreatic Cancer [Demo]",
                               section="## Treatment > ### Metastatic [2024]",
                               text=PANCREAS_PASSAGE + " See [REF_1] and [bold]x[/bold].")

    def retrieve(self, query, params, anchor=None):
        result = super().retrieve(query, params, anchor)
        if result.closest is not None and not result.hits:
            result = replace(result, closest=replace(result.closest, title="[Draft] Melanoma [v2]"))
        return result


async def test_passages_titles_sections_and_refusals_show_verbatim(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path, kb=BracketKB())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, "Pancreatic adenocarcinoma, ECOG 1. Options?")
        table = app.evidence.query_one("#passages", DataTable)
        row = [str(cell) for cell in table.get_row_at(0)]
        assert "Pancreatic Cancer [Demo]" in row and "Treatment > Metastatic [2024]" in row
        table.focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        detail = shown(app.evidence.query_one("#passage-text"))
        assert "Pancreatic Cancer [Demo]" in detail and "Treatment > Metastatic [2024]" in detail
        assert "See [REF_1] and [bold]x[/bold]." in detail and "##" not in detail

        await submit(pilot, "Uveal melanoma with liver metastases: options?")  # refused by the distance gate
        summary = shown(app.evidence.query_one("#evidence-summary"))
        assert "“[Draft] Melanoma [v2]”" in summary
        view = app.query(ConsultView).last()
        await wait_for(pilot, lambda: "[Draft] Melanoma [v2]" in shown(view.query_one(".steps")))


async def test_errors_in_the_chat_and_in_notices_keep_their_brackets(tmp_path: Path) -> None:
    from engine.graph import NODES
    from engine.models.base import ModelError

    async def broken(state, ctx):
        raise ModelError("models.profiles.[tier1].path: file [MRN_1].gguf not found")

    app, _engine, _ = build(tmp_path, nodes={**NODES, "specialist": broken})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, "Pancreatic adenocarcinoma, ECOG 1. Options?")
        [view] = app.query(ConsultView)
        assert "[tier1]" in shown(view.query_one(".steps")) and "[MRN_1].gguf" in shown(view.query_one(".steps"))
        toasts = [n for n in app._notifications if "[MRN_1]" in n.message]
        assert toasts and not any(n.markup for n in toasts)  # shown as written, not parsed as markup
        await view.show_stopped("KBError: chunk [c1] of [MRN_1].txt is unreadable", "failed")
        await pilot.pause()
        assert "KBError: chunk [c1] of [MRN_1].txt is unreadable" in shown(view.query_one(".answer-title"))
