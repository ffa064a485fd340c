"""Fixes from a usability review as a clinician and as a reviewer: a case typed or pasted before choosing where it
goes is kept (and a half-typed case is not selected, then replaced, when the prompt gets the focus back), an empty
question is answered, a reviewer's unsent edits survive closing the review screen, quitting mid-consult asks first,
help says what each key does in plain words (and lists Enter, Tab and Esc), the status line does not call a model
that fell back or failed 'ready', and the patient pane shows the new case's facts while its consult runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events

from oncotui.screens.review import ReviewScreen
from tests.fakes import FakeModel
from tests.tui.conftest import TIER1_CASE, TIER2_CASE, build, signed, streaming_model, submit, wait_for
from tests.tui.test_flows import SIZE, _first_view, open_review


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


async def test_review_edits_and_note_survive_closing_the_review_screen(tmp_path: Path, notices) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        [item] = engine.store.approvals("pending")
        screen = await open_review(pilot, "e")
        screen.query_one("#review-edit").text = "Discuss at the tumour board first."
        screen.query_one("#review-note").value = "checked the trial data"
        await pilot.press("escape")  # by mistake, or to look something up in the evidence pane
        await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen))
        assert any("kept" in message and item.id in message for _, message in notices), notices
        screen = await open_review(pilot, "enter")  # opened again: the edits, the note and the choice are back
        assert screen.query_one("#review-edit").text == "Discuss at the tumour board first."
        assert screen.query_one("#review-note").value == "checked the trial data"
        assert screen.action == "approve_with_edits" and screen.query_one("#review-edit").display
        await pilot.click("#cancel")  # the Cancel button keeps them too
        await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen))
        screen = await open_review(pilot, "enter")
        assert screen.query_one("#review-edit").text == "Discuss at the tumour board first."
        await pilot.click("#approve_with_edits")  # signs what was kept
        await signed(pilot, "reviewed")
        assert engine.store.approval(item.id).status == "approved_with_edits"
        assert engine.store.approval(item.id).note == "checked the trial data"
        assert not app._review_drafts  # signed: nothing kept


async def test_closing_an_untouched_review_keeps_nothing(tmp_path: Path, notices) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        await open_review(pilot, "a")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen))
        assert not app._review_drafts and not any("kept" in message for _, message in notices)


async def test_quit_mid_consult_asks_first(tmp_path: Path, notices) -> None:
    model = streaming_model()
    app, _engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE, wait=False)
        await wait_for(pilot, lambda: app.chat.pending is None and bool(app.chat.views))  # first step arrived
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app._exit and app.consult_running
        [warning] = [m for s, m in notices if s == "warning" and "quit" in m.lower()]
        warning = warning.replace("^", "ctrl+")  # keys as the footer shows them
        assert "PT-0001" in warning and "ctrl+q again" in warning and "ctrl+r continues" in warning
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app._exit)


async def test_quit_with_nothing_running_quits_at_once(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app._exit)


async def test_quit_with_unsigned_review_edits_asks_first(tmp_path: Path, notices) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "e")
        screen.query_one("#review-note").value = "half way through"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen))
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app._exit
        assert any("Unsigned review edits" in m for s, m in notices if s == "warning"), notices
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app._exit)


async def test_quit_with_the_review_still_open_and_typed_in_asks_first(tmp_path: Path, notices) -> None:
    """The edits of a review still open were not counted (they are kept only when it closes): ctrl+q quit at
    once."""
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "e")
        screen.query_one("#review-note").value = "half way through"
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app._exit and app.screen is screen
        assert any("Unsigned review edits" in m for s, m in notices if s == "warning"), notices
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app._exit)


async def test_help_says_what_each_key_does_and_lists_enter_tab_and_esc(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = app.binding_rows()
        by_id = {row[3]: row for row in rows if row[3]}
        # plain words, not a bare noun: what the key does
        assert "auto" in by_id["tier"][1] and "next consult" in by_id["tier"][1].lower()
        assert by_id["resume"][1].lower().startswith("continue")
        assert by_id["focus_evidence"][1].lower().startswith("go to")
        assert by_id["cancel"][2] == "while a consult runs"
        assert by_id["review_close"][1].endswith("(edits kept)")
        keys = {row[0].lower(): row for row in rows if not row[3]}  # keys that are not bindings of ours
        assert any(key.startswith("enter") for key in keys), rows
        assert any("tab" in key for key in keys), rows
        assert any("zoom" in row[1].lower() for key, row in keys.items() if key.startswith("esc")), rows
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen.query_one("#help-table").row_count == len(rows)  # every row shown, keyed uniquely


FALLBACK_NOTICE = ("Tier 2 model 'qwen-coder' unavailable (models.profiles.qwen-coder.path: embedded model "
                   "'qwen-coder-0.5b' is not installed yet); using 'smollm2' instead.")


def fallback_models(model: FakeModel) -> Any:
    """The fake models, with Tier 2's missing: the engine walks the fallback chain to smollm2 and says so."""
    from engine.models.manager import LoadedModel
    from tests.fakes import FakeModels

    class FallbackModels(FakeModels):
        def get(self, tier: int) -> LoadedModel:
            loaded = super().get(tier)
            return LoadedModel(loaded.model, "smollm2", tier, (FALLBACK_NOTICE,) if tier == 2 else ())

    return FallbackModels(model)


async def test_status_line_says_when_tier_2_fell_back_to_another_model(tmp_path: Path) -> None:
    """The status line said 'Tier 2 model ready' while the Tier 2 model was missing and the Tier 1 model wrote the
    draft: the clinician reads which model answered from it."""
    app, engine, model = build(tmp_path)
    engine.models = fallback_models(model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        status = str(app.query_one("#status").content)
        assert "Tier 2 model ready" not in status and "using smollm2" in status, status
        await submit(pilot, TIER1_CASE)  # Tier 1 has its own model: ready
        assert "Tier 1 model ready" in str(app.query_one("#status").content)


async def test_status_line_does_not_call_a_model_that_failed_ready(tmp_path: Path) -> None:
    from engine.graph import NODES
    from engine.models.base import ModelError

    async def broken(state, ctx):
        raise ModelError("models.profiles.smollm2.path: file not found: /nope/model.gguf")

    app, _engine, _ = build(tmp_path, nodes={**NODES, "specialist": broken})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE)
        status = str(app.query_one("#status").content)
        assert "ready" not in status and "Tier 1 model failed" in status, status


async def test_case_summary_shows_the_new_cases_facts_while_the_consult_runs(tmp_path: Path) -> None:
    """The patient pane kept 'No consult yet' (or the previous case's facts) until the consult ended: what the
    engine understood of the case (cancer, stage, markers) is worth reading while the draft is written."""
    model = streaming_model()
    app, _engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE, wait=False)
        view = await _first_view(pilot)
        await wait_for(pilot, lambda: view.query_one(".drafting").display)  # the draft streams: still running
        summary = str(app.patients_pane.query_one("#case-summary").content)
        assert "pancreatic adenocarcinoma" in summary and "No consult yet" not in summary, summary
        assert "not finished" in summary  # the timeline has the running consult
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.consult_running)


async def test_kept_review_edits_go_when_the_item_is_signed_elsewhere(tmp_path: Path) -> None:
    from engine.graph import decision

    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        [item] = engine.store.approvals("pending")
        screen = await open_review(pilot, "r")
        screen.query_one("#review-note").value = "not yet"
        await pilot.press("escape")
        await wait_for(pilot, lambda: item.id in app._review_drafts)
        # a colleague signs it from the CLI (oncotui hitl approve): the next refresh drops what was kept
        async for _ in engine.resume(item.thread_id, decision("approve", "dr-other", "fine"), item.consult_id):
            pass
        app.refresh_approvals()
        assert not app._review_drafts


async def test_back_to_a_patient_whose_consult_just_ended_shows_its_answer(tmp_path: Path) -> None:
    """Opening a patient while its consult's worker is still winding down (the answer stored, the Final event routed
    while another patient was shown) restored the consult as 'still running' and it stayed so: its last events had
    gone by. (test_switching_patients_mid_consult_and_back failed now and then under load on this.)"""
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await app.action_new_patient()  # PT-0002 is shown while PT-0001's consult ends
        async for event in engine.stream("PT-0001", TIER1_CASE):
            live = (event.thread_id, event.consult_id)
        app._live, app._consult_active = live, True  # the worker has not reported its end yet
        await app.open_patient("PT-0001")
        await pilot.pause()
        (view,) = app.chat.views.values()
        assert view.status == "released" and "## Assessment" in view.report
        app._consult_active = False


async def test_signing_an_item_another_reviewer_decided_meanwhile_says_who(tmp_path: Path, notices) -> None:
    """It said "Consult stopped — The latest consult of PT-0001 has already finished."."""
    from engine.graph import decision

    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        screen = await open_review(pilot, "a")
        [item] = engine.store.approvals("pending")
        async for _ in engine.resume(item.thread_id, decision("approve", "dr.cli", "fine"), item.consult_id):
            pass  # signed from the CLI while the review is open
        screen.query_one("#review-note").value = "agree"
        await pilot.click("#approve")
        await wait_for(pilot, lambda: any("already decided" in m for s, m in notices if s == "error"))
        [message] = [m for s, m in notices if s == "error"]
        assert item.id in message and "approved by dr.cli" in message and "not applied" in message
        assert engine.store.approval(item.id).reviewer == "dr.cli"


async def test_export_while_the_consult_runs_waits_for_it(tmp_path: Path, notices) -> None:
    """ctrl+s mid-consult wrote "Not finished (stopped before specialist)" with status running; then it
    finished."""
    model = streaming_model()
    app, _engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE, wait=False)
        await wait_for(pilot, lambda: app.chat.pending is None and bool(app.chat.views))
        app.action_export()
        assert app.last_export is None
        assert any("still running" in m for s, m in notices if s == "warning"), notices
        await wait_for(pilot, lambda: not app.consult_running, timeout=20)
        app.action_export()
        assert app.last_export is not None and "Not finished" not in app.last_export.read_text()


async def test_the_clinician_who_asked_is_warned_only_when_approving(tmp_path: Path, notices) -> None:
    """Rejecting their own item is allowed and reading it is harmless: `r` and Enter had popped
    "Sign-off refused"."""
    # the clinician who asks (conftest)
    app, _engine, _ = build(tmp_path, overrides={"ui.reviewer": "dr-ask"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        for key in ("r", "enter"):
            await open_review(pilot, key)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen))
        assert not [m for s, m in notices if "cannot approve" in m]
        await open_review(pilot, "a")
        assert [m for s, m in notices if s == "warning" and "cannot approve" in m]


async def test_f1_lists_the_keys_from_the_review_and_ingest_screens_too(tmp_path: Path) -> None:
    """The app's F1 did not reach these modal screens, and the ingest screen's Esc was missing from the
    list."""
    from oncotui.screens.help import HelpScreen
    from oncotui.screens.ingest import IngestScreen

    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        await open_review(pilot, "enter")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen))
        app.action_ingest()
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert "ingest_close" in {row[3] for row in app.screen.rows}


async def test_patient_search_clears_once_used_says_when_nothing_matches_and_esc_clears_it(
        tmp_path: Path) -> None:
    """The filter stayed after picking a patient (one row of many shown), Esc did not clear it, and a search
    with no match showed an empty list, as if there were no patients."""
    from textual.widgets import OptionList

    app, engine, _ = build(tmp_path)
    for _ in range(3):
        engine.store.ensure_patient(engine.store.new_patient_id())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.refresh_patients()
        pane = app.patients_pane
        options = pane.query_one("#patient-list", OptionList)
        await wait_for(pilot, lambda: options.option_count == 3)
        await pilot.press("slash", *"0002", "enter")
        await wait_for(pilot, lambda: app.current_patient == "PT-0002")
        await wait_for(pilot, lambda: options.option_count == 3
                       and not pane.query_one("#patient-search").value)
        await pilot.press("f2", "slash", *"9999")
        await wait_for(pilot, lambda: options.option_count == 1)
        assert "No patient matches '9999'" in str(options.get_option_at_index(0).prompt)
        await pilot.press("escape")
        await wait_for(pilot, lambda: options.option_count == 3 and app.focused is options)


async def test_at_80_columns_the_status_line_still_names_the_fallback_model(tmp_path: Path) -> None:
    """The status line was cut at 80 columns ("PT-0001 · tier auto · Tier 2 model un…"): which model wrote the
    draft was not to be read there."""
    app, engine, model = build(tmp_path)
    engine.models = fallback_models(model)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        status = app.query_one("#status")
        text = str(status.content)
        assert "T2→smollm2" in text and len(text) <= status.content_region.width, (text, status.content_region)


async def test_after_a_restart_ctrl_r_shows_the_model_of_the_consult_it_continues(tmp_path: Path) -> None:
    """A consult continued in a fresh session left the status line at "models load on first consult": the tier
    was learnt from the routing step only, which a continued consult does not run again."""
    from tests.fakes import GOOD_DRAFT

    model = streaming_model()
    app, _engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE, wait=False)
        await wait_for(pilot, lambda: bool(app.chat.views) and app.chat.pending is None)
        await wait_for(pilot, lambda: any(v.query_one(".drafting").display for v in app.chat.views.values()))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.consult_running)
    again, _engine, model = build(tmp_path)  # a new session on the same store
    model.outputs = [GOOD_DRAFT]
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await again.open_patient("PT-0001")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: again._consult is not None and not again.consult_running, timeout=10)
        assert "Tier 1 model ready" in str(again.query_one("#status").content)
