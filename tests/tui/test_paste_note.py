"""A note pasted from the record arrives whole: Textual's Input kept a paste's first line only, so a four-line
note became its identifier line and the facts and question were lost; pasted on the patient list it kept raw
newlines, which broke the prompt's row out of its pane."""

from __future__ import annotations

from pathlib import Path

from textual import events

from oncotui.widgets.chat.prompt_input import one_line
from tests.tui.conftest import build, wait_for
from tests.tui.test_flows import SIZE

NOTE = ("Seen today for stage IV non-small cell lung cancer,\n"
        "adenocarcinoma, EGFR exon 19 deletion.\r\n"
        "\n"
        "   ECOG 1.\n"
        "Question: what first-line treatment?")
JOINED = ("Seen today for stage IV non-small cell lung cancer, adenocarcinoma, EGFR exon 19 deletion. "
          "ECOG 1. Question: what first-line treatment?")


def test_a_note_s_lines_are_joined_as_prose() -> None:
    assert one_line(NOTE) == JOINED


async def test_a_note_pasted_into_the_prompt_keeps_every_line(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    engine.store.ensure_patient(engine.store.new_patient_id())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.focused is app.chat.prompt)
        await pilot.press(*"Note: ")
        app.chat.prompt.post_message(events.Paste(NOTE))
        await wait_for(pilot, lambda: app.chat.prompt.value == "Note: " + JOINED)


async def test_a_note_pasted_on_the_patient_list_arrives_the_same_way(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.focused is app.patients_pane.query_one("#patient-list")
        app.post_message(events.Paste(NOTE))
        await wait_for(pilot, lambda: app.chat.prompt.value == JOINED)
        assert "\n" not in app.chat.prompt.value
