"""Fixes from the read-only audit of the app: what the reviewer signs for, the review screen's own footer, the
approvals columns at 80x24, passages about another cancer, keys that work where help says, the tier override per
patient, redacted text in the live chat, and timeline words."""

from __future__ import annotations

from pathlib import Path

from textual.widgets._footer import FooterKey

from tests.tui.conftest import TIER2_CASE, build, submit, wait_for
from tests.tui.test_flows import SIZE, open_review
from tests.tui.test_literal_text import shown

PHI_TIER2 = "Patient Margaret Thornbury, MRN 88412907. " + TIER2_CASE


async def test_review_screen_shows_the_stored_case_and_question(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, PHI_TIER2)
        stored = engine.store.latest(app.current_patient).state.case_text
        assert "Thornbury" not in stored and "[PERSON_1]" in stored  # the redactor ran
        screen = await open_review(pilot, "a")
        case = shown(screen.query_one("#review-case-text"))
        assert stored in case and "First-line options?" in case  # the question, with its placeholders verbatim
        assert "Thornbury" not in case and "88412907" not in case


async def test_review_screen_footer_shows_its_own_keys(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "a")
        await wait_for(pilot, lambda: bool(screen.query(FooterKey)))
        keys = {key.key: key.description for key in screen.query(FooterKey)}
        assert keys.get("escape") == "Close without deciding", keys
        assert not {"a", "e", "r", "n"} & set(keys), keys  # the approvals pane's and the main screen's keys


async def test_n_types_in_the_prompt_and_ctrl_n_makes_a_patient_there(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")  # the patient list has focus: n makes a patient and focuses the prompt
        assert app.current_patient == "PT-0001" and app.focused is app.chat.prompt
        await pilot.press("n")
        assert app.chat.prompt.value == "n" and app.current_patient == "PT-0001"  # typed, as in any text field
        await wait_for(pilot, lambda: any(k.action == "new_patient" for k in app.screen.query(FooterKey)))
        [footer_key] = [k for k in app.screen.query(FooterKey) if k.action == "new_patient"]
        assert footer_key.key == "ctrl+n"  # the footer offers the key that works while typing
        await pilot.press("ctrl+n")
        assert app.current_patient == "PT-0002"
        rows = {row[3]: row for row in app.binding_rows()}
        keys, _, where, _ = rows["new_patient"]
        assert "n" in keys.split(" / ") and "ctrl+n" in keys.lower().replace("^", "ctrl+")
        assert where == "everywhere (^n while typing)", where
        assert rows["export"][2] == "everywhere"  # a ctrl key works in text fields too


async def test_tier_override_is_reset_for_another_patient(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.press("ctrl+t", "ctrl+t")  # auto -> 1 -> 2
        assert app.tier_override == 2
        await pilot.press("ctrl+n")  # another patient: its consults start on auto
        await pilot.pause()
        assert app.current_patient == "PT-0002" and app.tier_override is None
        assert str(app.patients_pane.query_one("#tier-select").value) == "auto"
        assert "tier auto" in shown(app.query_one("#status"))
        await pilot.press("ctrl+t")  # an override chosen for this patient stays while it is open ...
        await app.open_patient("PT-0002")
        assert app.tier_override == 1
        await app.open_patient("PT-0001")  # ... and is dropped when another one is opened
        await pilot.pause()
        assert app.tier_override is None and str(app.patients_pane.query_one("#tier-select").value) == "auto"


async def test_live_chat_shows_the_redacted_case_not_what_was_typed(tmp_path: Path) -> None:
    from oncotui.widgets.chat.consult_view import ConsultView
    from tests.tui.test_literal_text import PHI_CASE

    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, PHI_CASE)
        stored = engine.store.latest(app.current_patient).state.case_text
        [view] = app.query(ConsultView)
        question = shown(view.query_one(".question"))
        assert stored in question  # without reopening the patient
        for identifier in ("Thornbury", "88412907", "Whitcombe", "03/14/1961"):
            assert identifier not in question and identifier not in view.question


async def test_timeline_says_what_a_status_means(tmp_path: Path) -> None:
    from tests.tui.conftest import TIER1_CASE

    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE)
        await submit(pilot, TIER2_CASE)
        summary = shown(app.patients_pane.query_one("#case-summary"))
        assert "answered" in summary and "waiting for review" in summary, summary
        assert "pending_review" not in summary and "released" not in summary
