"""Evidence pane: each claim with its release state and support score; moving onto a claim marks its passages."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable

from tests.fakes import BREAST_PASSAGE, FakeModel
from tests.tui.conftest import build, submit

SIZE = (160, 48)
DRAFT = json.dumps({
    "assessment": "Two questions.", "caveats": [], "missing_information": [],
    "recommendations": [
        {"text": "FOLFIRINOX or gemcitabine plus nab-paclitaxel are first-line options for metastatic pancreatic "
                 "adenocarcinoma with good performance status.", "evidence": ["E1"]},
        {"text": BREAST_PASSAGE + " Add wonderdrugumab 500 mg weekly.", "evidence": ["E2"]},
    ]})


async def test_claims_show_states_and_selecting_one_marks_its_passages(tmp_path: Path) -> None:
    app, engine, _ = build(tmp_path, model=FakeModel(outputs=[DRAFT]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await submit(pilot, "Pancreatic adenocarcinoma and early breast cancer: options?")
        claims = app.evidence.query_one("#claims", DataTable)
        assert claims.display and claims.row_count == 3
        states = [str(claims.get_row_at(i)[1]) for i in range(3)]
        # C2 quotes the breast passage, but the case's cancer type (one per case) is pancreatic: not released;
        # C1 is for metastatic disease and the case states no stage: released qualified
        assert states == ["qualified", "blocked", "blocked"]
        assert float(str(claims.get_row_at(0)[2])) == 1.0 and float(str(claims.get_row_at(2)[2])) < 0.5
        summary = str(app.evidence.query_one("#evidence-summary").content)
        assert "1 qualified" in summary and "2 blocked" in summary
        view = next(iter(app.chat.views.values()))
        assert "wonderdrugumab" not in view.report.split("## Withheld")[0]  # never shown as a recommendation

        claims.focus()
        await pilot.pause()
        await pilot.press("down")  # onto C2, which cites E2
        await pilot.pause()
        assert app.evidence.marked == frozenset({"E2"})
        passages = app.evidence.query_one("#passages", DataTable)
        marked = [str(passages.get_row_at(i)[0]) for i in range(passages.row_count)]
        assert marked == ["★ E1", "▶ E2"]  # ★ cited by the answer, ▶ cited by the selected claim
        detail = str(app.evidence.query_one("#passage-text").content)
        assert "C2" in detail and "another cancer" in detail and "E2: supports" in detail
        await pilot.press("down")  # C3: the invented drug, blocked, and why
        await pilot.pause()
        detail = str(app.evidence.query_one("#passage-text").content)
        assert "blocked" in detail and "wonderdrugumab" in detail and "drug:" in detail
