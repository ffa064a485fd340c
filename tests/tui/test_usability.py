"""Fixes from a usability review as a clinician and as a reviewer: a case typed or pasted before choosing where it
goes is kept, an empty question is answered, a reviewer's unsent edits survive closing the review screen, quitting
mid-consult asks first, and help says what each key does in plain words (and lists Enter, Tab and Esc)."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.tui.conftest import build, wait_for
from tests.tui.test_flows import SIZE


async def test_a_case_typed_on_the_patient_list_goes_to_the_prompt(tmp_path: Path) -> None:
    """First start: the patient list has the focus, the chat says 'Type the case'. What is typed must not vanish
    (nor an 'n' inside a word make a patient and leave the rest of the case in the prompt)."""
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.focused is app.patients_pane.query_one("#patient-list")
        await pilot.press(*"Stage IV pancreatic")
        assert app.chat.prompt.value == "Stage IV pancreatic"
        assert app.focused is app.chat.prompt and app.current_patient is None
        await pilot.press("enter")  # no patient open: the consult makes one
        await wait_for(pilot, lambda: app._consult is not None and not app.consult_running)
        assert app.current_patient == "PT-0001"


async def test_fast_typing_and_paste_on_the_patient_list_reach_the_prompt(tmp_path: Path) -> None:
    """Keys that arrive together (typed fast, or sent by a terminal multiplexer) are queued before the focus moves:
    an 'n' among them is still text. A pasted note (bracketed paste) goes to the prompt too."""
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for char in "Stage IV pancreatic":
            app.post_message(events.Key("space" if char == " " else char, char))
        await wait_for(pilot, lambda: app.chat.prompt.value == "Stage IV pancreatic")
        assert app.current_patient is None
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.patients_pane.query_one("#patient-list"))
        await pilot.press("n")  # n on its own, with the list focused, is still 'new patient'
        assert app.current_patient == "PT-0001"
        app.chat.prompt.value = ""
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.patients_pane.query_one("#patient-list"))
        app.post_message(events.Paste("ECOG 1, adenocarcinoma of the pancreas. Options?"))
        await wait_for(pilot, lambda: app.chat.prompt.value == "ECOG 1, adenocarcinoma of the pancreas. Options?")
        assert app.focused is app.chat.prompt


async def test_coming_back_to_a_half_typed_case_does_not_select_it(tmp_path: Path) -> None:
    """The prompt selected all its text when it got the focus (Textual's default): after opening the patient the
    case is for (which focuses the prompt) or looking at another pane, the next key replaced the whole case."""
    app, engine, _ = build(tmp_path)
    engine.store.ensure_patient(engine.store.new_patient_id())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.focused is app.chat.prompt)
        await pilot.press(*"ECOG 1")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.patients_pane.query_one("#patient-list"))
        await pilot.press("enter")  # opens PT-0001 and focuses the prompt again
        await wait_for(pilot, lambda: app.current_patient == "PT-0001" and app.focused is app.chat.prompt)
        await pilot.pause()
        await pilot.press(*", pancreas")
        assert app.chat.prompt.value == "ECOG 1, pancreas"


async def test_an_empty_question_says_what_to_type(tmp_path: Path, notices) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        app.chat.prompt.value = "   "
        await pilot.press("enter")
        await pilot.pause()
        assert app._consult is None
        assert any(severity == "warning" and "Type the case" in message for severity, message in notices), notices
