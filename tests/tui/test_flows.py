"""Pilot tests: each flow of issue 4 driven through the keyboard against the real engine (fake model and KB)."""

from __future__ import annotations

import re
from pathlib import Path

from rich.text import Text
from textual.widgets import DataTable, Label, Static

from engine.graph import EngineError
from oncotui.screens.help import HelpScreen
from oncotui.screens.review import ReviewScreen
from oncotui.widgets.chat.consult_view import ConsultView
from tests.fakes import GOOD_DRAFT, FakeModel
from tests.tui.conftest import (TIER1_CASE, TIER2_CASE, build, run_palette_command, signed, streaming_model, submit,
                                wait_for)

SIZE = (120, 40)


def step_texts(app) -> list[str]:
    return [line for view in app.query(ConsultView) for line in view.step_lines]


async def open_review(pilot, key: str) -> ReviewScreen:
    """F5 then ``key`` in the approvals queue; waits for each step (focus and screens change a frame later)."""
    app = pilot.app
    await pilot.press("f5")
    await wait_for(pilot, lambda: app.focused is app.approvals.table)
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.is_active
                   and app.focused is not None and app.focused.screen is app.screen)
    return app.screen


async def test_create_patient_ask_steps_evidence_answer(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")  # the patient list has focus at start
        assert app.current_patient == "PT-0001"
        assert app.focused is app.chat.prompt
        app.chat.prompt.value = "Pancreatic adenocarcinoma, ECOG 1."
        await pilot.press(*" Options?", "enter")  # real keystrokes for the end of it (each press is slow)
        await wait_for(pilot, lambda: not app.consult_running)
        await pilot.pause()
        steps = step_texts(app)
        for label in ("Redacting identifiers", "Scoring complexity", "Retrieving guidelines",
                      "Drafting a recommendation", "Checking the draft", "Formatting the answer"):
            assert any(label in s for s in steps), (label, steps)
        assert all(" s" in s for s in steps if "✓" in s)  # every finished step shows its duration
        # the governor's verdict, as it comes: the metastatic line is qualified (the case states no stage)
        assert any("claims: 1 qualified" in s for s in steps), steps
        table = app.evidence.query_one("#passages", DataTable)
        assert table.row_count == 1
        assert "rag_confidence" in str(app.evidence.border_subtitle)
        view = app.query_one(ConsultView)
        assert view.status == "released"
        assert "## Assessment" in view.report
        assert not view.query_one(".drafting").display  # the raw draft gives way to the checked report
        assert "pancreatic adenocarcinoma" in str(app.patients_pane.query_one("#case-summary").content)
        assert "Tier 1" in str(app.patients_pane.query_one("#routing").content)
        await pilot.press("f4")
        await wait_for(pilot, lambda: app.focused is app.evidence.query_one("#passages"))
        await pilot.press("enter")  # select the passage: shown whole
        await wait_for(pilot, lambda: app.evidence.query_one("#passage-detail").display)
        assert "Olaparib maintenance" in str(app.evidence.query_one("#passage-text").content)
        await submit(pilot, TIER1_CASE)  # a follow-up: the earlier answer folds to its title line
        first, second = app.chat.views.values()
        assert first.folded and not second.folded and not first.query_one(".answer").display
        await pilot.press("f6")
        assert not first.folded and first.query_one(".answer").display


async def test_tier2_case_waits_for_review_then_approval_releases_reviewed_answer(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        view = app.query_one(ConsultView)
        assert view.status == "pending_review" and not view.report
        table = app.approvals.table
        assert table.row_count == 1
        item = engine.store.approvals("pending")[0]
        assert "Tier 2" in item.reasons[0]
        await open_review(pilot, "a")
        await pilot.press(*"agree", "enter")
        await signed(pilot, "reviewed", view)
        assert "## Review" in view.report and "dr-review" in view.report
        assert "reviewed" in str(view.query_one(".answer-title", Label).content)
        decided = engine.store.approval(item.id)
        assert decided.status == "approved" and decided.reviewer == "dr-review" and decided.note == "agree"
        await wait_for(pilot, lambda: table.row_count == 0)


async def test_approve_with_edits_and_reject_from_the_review_screen(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        await submit(pilot, TIER2_CASE)
        first, second = engine.store.approvals("pending")
        screen = await open_review(pilot, "enter")  # view mode: nothing preselected
        assert screen.item.id == first.id
        await pilot.click("#approve_with_edits")  # opens the editor on the draft
        checks = screen.query_one("#review-checks", Static)
        screen.query_one("#review-edit").text = "Give 80 mg/m2 of irinotecan weekly; it always works."
        await wait_for(pilot, lambda: "dose" in str(checks.content) and "absolute" in str(checks.content))
        screen.query_one("#review-edit").text = "Discuss at the tumour board first."
        await wait_for(pilot, lambda: "nothing found" in str(checks.content))
        await pilot.click("#approve_with_edits")  # signs
        views = {v.consult_id: v for v in app.query(ConsultView)}
        await signed(pilot, "reviewed", views[first.consult_id])
        assert engine.store.approval(first.id).status == "approved_with_edits"
        await wait_for(pilot, lambda: app.approvals.table.row_count == 1)
        await open_review(pilot, "r")
        await pilot.press(*"not supported", "enter")
        await signed(pilot, "refused", views[second.consult_id])
        assert engine.store.approval(second.id).status == "rejected"
        assert "tumour board first" in views[first.consult_id].report
        assert views[first.consult_id].status == "reviewed"


async def test_escape_cancels_mid_stream_and_ctrl_r_resumes(tmp_path: Path) -> None:
    model = streaming_model()
    app, engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE, wait=False)
        view = await _first_view(pilot)
        await wait_for(pilot, lambda: view.query_one(".drafting").display)  # tokens are streaming
        assert app.consult_running
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.consult_running)
        await pilot.pause()
        assert view.status == "cancelled"
        assert "ctrl+r" in str(view.query_one(".answer-title", Label).content)
        cp = engine.store.latest("PT-0001")
        assert cp.node == "corrective_rag" and cp.next_node == "specialist"  # consistent: last finished node
        model.outputs, model.delay_s = [GOOD_DRAFT], 0.0
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app._consult is not None and not app.consult_running, timeout=10)
        await wait_for(pilot, lambda: view.status == "released")
        assert engine.store.latest("PT-0001").next_node == "__end__"


async def test_escape_cancels_a_running_consult_with_a_pane_zoomed(tmp_path: Path) -> None:
    """The footer says "esc Cancel consult"; with the chat zoomed Esc only restored the pane and the consult ran on."""
    model = streaming_model()
    app, _engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE, wait=False)
        view = await _first_view(pilot)
        await wait_for(pilot, lambda: view.query_one(".drafting").display)
        await pilot.press("ctrl+o")
        assert app.screen.maximized is not None and app.consult_running
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.consult_running)
        await pilot.pause()
        assert view.status == "cancelled"
        await pilot.press("escape")  # nothing runs now: Esc restores the pane, as before
        assert app.screen.maximized is None


async def _first_view(pilot) -> ConsultView:
    await wait_for(pilot, lambda: bool(pilot.app.query(ConsultView)))
    return pilot.app.query_one(ConsultView)


async def test_tier_override_reaches_the_engine(tmp_path: Path) -> None:
    routed = []
    app, engine, _ = build(tmp_path)

    def hook(message) -> None:
        event = getattr(message, "event", None)
        if event is not None and event.kind == "RoutingDecided":
            routed.append(event.routing)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await pilot.press("n")
        await pilot.press("ctrl+t", "ctrl+t")  # auto -> 1 -> 2
        assert app.tier_override == 2
        assert str(app.patients_pane.query_one("#tier-select").value) == "2"
        await submit(pilot, TIER1_CASE)
        assert routed[-1].override == 2 and routed[-1].tier == 2 and routed[-1].auto_tier == 1
        assert engine.store.approvals("pending")  # Tier 2 always waits for a reviewer
        await pilot.press("ctrl+t")
        assert app.tier_override is None
        await submit(pilot, TIER1_CASE)
        assert routed[-1].override is None and routed[-1].tier == 1


async def test_export_writes_report_evidence_and_approval_record(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        await open_review(pilot, "a")
        await pilot.press(*"ok", "enter")
        view = app.query_one(ConsultView)
        await signed(pilot, "reviewed", view)
        await pilot.press("ctrl+s")
        path = app.last_export
        assert path is not None and path.parent == tmp_path / "exports"
        text = path.read_text(encoding="utf-8")
        assert view.report in text
        assert "FOLFIRINOX or gemcitabine plus nab-paclitaxel are first-line options" in text  # the passage
        assert "## Approval record" in text and "approved" in text and "dr-review" in text


async def test_engine_errors_are_notices_not_tracebacks(tmp_path: Path, notices) -> None:
    from engine.models.base import ModelError

    async def broken(state, ctx):
        raise ModelError("models.profiles.smollm2.path: file not found")

    from engine.graph import NODES

    app, _engine, _ = build(tmp_path, nodes={**NODES, "specialist": broken})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE)
        view = app.query_one(ConsultView)
        assert view.status == "refused"
        errors = [m for s, m in notices if s == "error"]
        assert any("file not found" in m and "oncotui models setup" in m for m in errors)
        await pilot.press("ctrl+r")  # nothing to resume: a notice that says so, not a "Consult stopped" error
        await wait_for(pilot, lambda: not app.consult_running)
        await pilot.pause()
        assert any("already finished" in m for s, m in notices if s == "warning")
        assert not any("already finished" in m for s, m in notices if s == "error")
        assert not any("Traceback" in m for _, m in notices)


async def test_approval_items_survive_a_restart(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
    app2, _engine2, _ = build(tmp_path)
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app2.approvals.table.row_count == 1
        await pilot.press("enter")  # open PT-0001 from the list: the waiting consult is restored
        await pilot.pause()
        view = app2.query_one(ConsultView)
        assert view.status == "pending_review"
        await open_review(pilot, "a")
        await pilot.press("enter")
        await signed(pilot, "reviewed", view)


async def test_prompt_history_and_patient_search(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE)
        await pilot.press("up")
        assert app.chat.prompt.value == TIER1_CASE
        await pilot.press("down")
        assert app.chat.prompt.value == ""
        for _ in range(2):
            engine.store.ensure_patient(engine.store.new_patient_id())
        app.refresh_patients()
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.patients_pane.query_one("#patient-list"))
        await pilot.press("slash")
        await wait_for(pilot, lambda: app.focused is app.patients_pane.query_one("#patient-search"))
        await pilot.press(*"0003", "enter")
        await pilot.pause()
        assert app.current_patient == "PT-0003"
        assert not app.query(ConsultView)  # the chat shows this patient's consults only
        await submit(pilot, "Uveal melanoma with liver metastases: what next?")  # outside the (fake) guidelines
        assert app.query_one(ConsultView).status == "refused"
        summary = str(app.evidence.query_one("#evidence-summary").content)
        assert "Gate refused" in summary and "Melanoma (Demo)" in summary and "0.930" in summary


async def test_keymap_help_palette_and_badge(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path, overrides={"ui.keymap": {"new_patient": "f9"}})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        assert app.current_patient is None  # rebound away from n
        await pilot.press("f9")
        assert app.current_patient == "PT-0001"
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        rows = {row[3]: row for row in app.screen.rows}
        assert rows["new_patient"][0] == "f9" and "cancel" in rows and "approve" in rows and "export" in rows
        await pilot.press("escape")
        await run_palette_command(pilot, "new pat", "New patient")
        await wait_for(pilot, lambda: app.current_patient == "PT-0002")
        assert app.query_one("#badge").display
        app.action_toggle_theme()  # light theme (also in the palette)
        await pilot.pause()
        assert app.theme == "textual-light"


async def test_no_badge_for_real_models(tmp_path: Path) -> None:
    overrides = {"models.profiles.smollm2.label": "Site model A", "models.profiles.qwen-coder.label": "Site model B"}
    app, _, _ = build(tmp_path, overrides=overrides)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.query_one("#badge").display


async def test_works_at_80x24(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER1_CASE)
        for pane in ("#patients", "#chat", "#evidence", "#approvals"):
            region = app.query_one(pane).region
            assert region.width >= 20 and region.height >= 5, (pane, region)
        await pilot.press("ctrl+o")  # zoom the chat pane
        assert app.screen.maximized is app.chat
        await pilot.press("escape")
        assert app.screen.maximized is None


def test_engine_error_type_is_for_people() -> None:
    from engine.errors import user_error_types

    assert EngineError in user_error_types()


async def test_switching_patients_mid_consult_and_back(tmp_path: Path) -> None:
    """By keys, as a clinician does (they take turns with the engine's events on the app's message queue; calling
    open_patient from the test could run it in the middle of routing an event). The model waits at the drafting
    step until the clinician is back, so the switch is surely mid-consult."""
    import threading

    drafting = threading.Event()
    model = FakeModel(block=drafting)
    app, _engine, _ = build(tmp_path, model=model)
    async with app.run_test(size=SIZE) as pilot:
        try:
            await pilot.press("n")
            await submit(pilot, TIER1_CASE, wait=False)
            await wait_for(pilot, lambda: app.chat.pending is None and bool(app.chat.views))  # first step arrived
            await pilot.press("ctrl+n")  # PT-0002 while PT-0001's consult runs (the prompt has the focus)
            await wait_for(pilot, lambda: app.current_patient == "PT-0002")
            assert not app.chat.views
            await pilot.press("f2")
            await wait_for(pilot, lambda: app.focused is app.patients_pane.query_one("#patient-list"))
            await pilot.press("slash", *"0001", "enter")
            await wait_for(pilot, lambda: app.current_patient == "PT-0001")
            assert app.consult_running
        finally:
            drafting.set()
        await wait_for(pilot, lambda: not app.consult_running)
        await pilot.pause()
        (view,) = app.chat.views.values()
        assert view.status == "released" and "## Assessment" in view.report


async def test_periodic_refresh_survives_shutdown(tmp_path: Path) -> None:
    """The 5 s approvals timer can fire while the app tears its panes down; that must not crash the app."""
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.approvals.remove()
        await app.patients_pane.remove()
        app.refresh_approvals()
        app.refresh_patients()
        await pilot.pause()


async def test_palette_ingest_real_kb_with_a_bad_file(tmp_path: Path) -> None:
    """Palette → Ingest guidelines: a real knowledge base indexes a folder; a corrupt PDF is named and skipped."""
    from engine.kbfactory import open_kb
    from oncotui.screens.ingest import IngestScreen

    docs = tmp_path / "my guidelines"
    docs.mkdir()
    (docs / "gist.md").write_text("# GIST (test)\n\n## Treatment\n\nImatinib is first-line for advanced KIT-positive "
                                  "gastrointestinal stromal tumours.\n", encoding="utf-8")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7 this is not really a pdf")
    app, engine, _ = build(tmp_path)
    engine._kb = open_kb(engine.settings)  # the product's Chroma KB instead of the fake
    async with app.run_test(size=SIZE) as pilot:
        await run_palette_command(pilot, "ingest", "Ingest guidelines")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        screen = app.screen
        result = screen.query_one("#ingest-result")
        await pilot.press(*"/no/such/dir", "enter")
        assert "Not found" in str(result.content)
        screen.query_one("#ingest-paths").value = f'"{docs}"'  # quoted: the folder name has a space
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Esc closes" in str(result.content) and not screen.running, timeout=60)
        text = str(result.content)
        assert "Added 1" in text and "broken.pdf" in text, text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, IngestScreen))
    assert engine.kb().stats()["documents"] == 1


async def test_the_case_summary_shows_the_age_and_fitness_the_answer_was_fitted_to(tmp_path: Path):
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, "A 93-year-old with pancreatic adenocarcinoma, frail, ECOG 2. Options?")
        summary = Text.from_markup(str(app.patients_pane.query_one("#case-summary").content)).plain
        assert "Age: over 89" in summary and "Age: 93" not in summary  # a redacted age is never shown
        assert "Fitness: frail" in summary


async def test_the_case_summary_shows_the_line_history_and_groups_case_fit_used(tmp_path: Path):
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, "Metastatic clear cell renal cell carcinoma, IMDC intermediate risk. First-line "
                            "ipilimumab plus nivolumab, progressed after 11 months. Sunitinib was stopped for "
                            "grade 3 hand-foot syndrome. What second-line therapy?")
        summary = Text.from_markup(str(app.patients_pane.query_one("#case-summary").content)).plain
        assert "Line: past the first line" in summary
        assert "Progressed after: ipilimumab, nivolumab" in summary
        assert "Avoided: sunitinib" in summary  # stopped for a toxicity: case fit does not offer it again
        assert "Groups: intermediate-risk" in summary


async def test_a_long_step_counts_its_seconds_and_stops_counting_when_done(tmp_path: Path) -> None:
    """A long case on a small CPU model streams nothing for minutes while the prompt is read; the running
    step's line counts the seconds so the clinician sees it is still working (session 15's QA: 142 s of a bare
    "…")."""
    import threading

    drafting = threading.Event()
    app, _engine, _ = build(tmp_path, model=FakeModel(block=drafting))
    async with app.run_test(size=SIZE) as pilot:
        try:
            await pilot.press("n")
            await submit(pilot, TIER1_CASE, wait=False)
            view = await _first_view(pilot)
            await wait_for(pilot, lambda: "specialist" in view._step_started)
            view._step_started["specialist"] -= 40  # as if drafting had started 40 s ago
            await wait_for(pilot, lambda: any(re.search(r"Drafting a recommendation….*\b4\d s\b", line)
                                              for line in view.step_lines), timeout=3)
        finally:
            drafting.set()
        await wait_for(pilot, lambda: not app.consult_running)
        await pilot.pause()
        assert not any(line.lstrip().startswith("[b $accent]▸") for line in view.step_lines)
        assert view._ticker is None
