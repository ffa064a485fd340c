"""Fixes from the read-only audit of the app: what the reviewer signs for, the review screen's own footer, the
approvals columns at 80x24, passages about another cancer, keys that work where help says, the tier override per
patient, redacted text in the live chat, and timeline words."""

from __future__ import annotations

from pathlib import Path

import pytest

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
        await app.action_new_patient()  # another patient: its consults start on auto
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
        app.chat.prompt.focus()
        await pilot.press("up")  # the prompt's history recalls the case as stored, too
        assert app.chat.prompt.value == stored
        for identifier in ("Thornbury", "88412907", "Whitcombe", "03/14/1961"):
            assert identifier not in question and identifier not in view.question
            assert not any(identifier in entry for entry in app.chat.prompt.history)


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


def test_short_reasons_and_since() -> None:
    from oncotui.widgets.approval.approvals_pane import short_reasons, since

    reasons = ("Tier 2 chosen by the clinician (tier override; complexity score 0.40 would route to Tier 1)",
               "Low retrieval confidence (0.21 < 0.40)", "Claim C2 deferred: no cited passage",
               "Claim C3 deferred: qualifier", "The case text contains instruction-like text (a possible ...)")
    assert short_reasons(reasons) == "Tier 2 (override), low confidence, instructions in note, C2, C3 deferred"
    assert short_reasons(("Tier 2 case (complexity score 0.95)",)) == "Tier 2"
    assert short_reasons(("Retrieved passage E1, E3 contains instructions to the system (a possibly poisoned "
                          "guideline; those sentences were dropped, not used)",)) == "poisoned passage"
    assert short_reasons(("The question asks what to do, but no released claim names a treatment or approach (the "
                          "quoted passages may not answer it)",)) == "no treatment named"
    assert short_reasons(("The question asks for a drug or regimen, but no released claim names one (the quoted "
                          "passages answer another part of the question or give background)",)) == "no drug named"
    from engine.nodes.hitl_gate import review_reasons
    from tests.unit.test_hitl_gate import ALK, STATS, TRIAL, state

    assert short_reasons(review_reasons(state(ALK, TRIAL, STATS), 0.0)) == "trial results only"
    assert short_reasons(("Tier 2 case (complexity score 0.95): router scored Tier 2; Tier 1 forced by the "
                          "clinician",)) == "Tier 2 (override)"
    assert since("2025-03-14T09:30:00+00:00", wide=False, today="2025-03-14") == "09:30"
    assert since("2025-03-14T09:30:00+00:00", wide=False, today="2025-03-15") == "03-14"
    assert since("2025-03-14T09:30:00+00:00", wide=True) == "03-14 09:30"


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)])
async def test_approvals_columns_and_hint_fit(tmp_path: Path, size: tuple[int, int]) -> None:
    from textual.widgets import DataTable, Static

    from tests.tui.test_evidence_layout import column_spans

    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        await submit(pilot, TIER2_CASE)
        table: DataTable = app.approvals.table
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.pause()

        def fits() -> None:
            visible = table.scrollable_content_region.width
            row = [str(cell) for cell in table.get_row_at(0)]
            for (label, (_, end)), column, cell in zip(column_spans(table).items(), table.ordered_columns, row,
                                                       strict=True):
                assert end <= visible, (label, end, visible)  # no column off to the right
                assert column.content_width >= len(cell), (label, cell)  # no cell cut ("Tie…")
                assert len(label) <= column.content_width  # nor a header
            assert app.approvals.border_subtitle == "enter review"  # a/e/r: in the footer (test_review_gaps.py)
            detail = app.approvals.query_one("#approval-detail", Static)  # the highlighted item's whole "why"
            needed = detail.get_content_height(detail.container_size, app.size, detail.content_size.width)
            assert needed <= detail.content_size.height, (needed, detail.content_size)  # wrapped, not cut

        fits()
        labels = [str(c.label) for c in table.ordered_columns]
        assert labels[:2] in (["patient", "since"], ["item", "patient"]) and labels[-1] == "why"
        await pilot.press("f5", "ctrl+o")  # zoomed: the item id and the full reason too
        await wait_for(pilot, lambda: [str(c.label) for c in table.ordered_columns][0] == "item")
        await pilot.pause()
        fits()
        assert "Tier 2 case (complexity score 0.95)" in [str(c) for c in table.get_row_at(0)]


async def test_a_passage_about_another_cancer_is_shown_as_not_used(tmp_path: Path) -> None:
    from textual.widgets import DataTable

    from tests.fakes import FakeModel
    from tests.tui.test_claims_pane import DRAFT

    events = []

    def hook(message) -> None:
        event = getattr(message, "event", None)
        if event is not None and event.kind == "EvidenceReady":
            events.append(event)

    app, engine, _ = build(tmp_path, model=FakeModel(outputs=[DRAFT]))
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await pilot.press("n")
        await submit(pilot, "Pancreatic adenocarcinoma, ECOG 1. Also breast cancer guidance? Options?")
        state = engine.store.latest(app.current_patient).state
        assert state.facts.cancer_type == "pancreatic adenocarcinoma"
        flags = {p.title: (p.relevant, p.other_cancer) for p in state.retrieval.passages}
        assert flags == {"Pancreatic Cancer (Demo)": (True, False), "Breast Cancer (Demo)": (True, True)}
        assert {p.title: p.other_cancer for p in events[-1].passages} == {  # the live event carries it too
            "Pancreatic Cancer (Demo)": False, "Breast Cancer (Demo)": True}
        table = app.evidence.query_one("#passages", DataTable)
        grades = {str(table.get_row_at(i)[-2]): str(table.get_row_at(i)[1]) for i in range(table.row_count)}
        assert grades == {"Pancreatic Cancer (Demo)": "yes", "Breast Cancer (Demo)": "other cancer"}
        summary = shown(app.evidence.query_one("#evidence-summary"))
        assert "1/2 relevant" in summary and "1 about another cancer" in summary, summary
        table.focus()
        await pilot.pause()
        breast = next(i for i in range(table.row_count) if "Breast" in str(table.get_row_at(i)[-2]))
        table.move_cursor(row=breast)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "another cancer" in shown(app.evidence.query_one("#passage-text")))
        assert "not used for this case" in shown(app.evidence.query_one("#passage-text"))


async def test_review_screen_at_80x24_keeps_room_for_the_draft(tmp_path: Path) -> None:
    app, _engine, _ = build(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await submit(pilot, PHI_TIER2 + " A long history follows here, long enough to need several lines." * 3)
        screen = await open_review(pilot, "a")
        await pilot.pause()
        assert screen.query_one("#review-case").region.height == 2  # scrolls; the draft keeps the room
        assert screen.query_one("#review-preview").region.height >= 5
