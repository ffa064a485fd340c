"""The app on the embedded defaults: real redactor, Chroma, ONNX embeddings and cross-encoder, llama.cpp SmolLM2.

Whatever the tiny model writes, the clinician sees the steps, the evidence behind the answer and an outcome that
the safety stack allowed (released, waiting for a reviewer, or a refusal that says why) — never a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from engine.config import Settings
from engine.graph import Engine
from oncotui.widgets.chat.consult_view import ConsultView
from tests.tui.conftest import wait_for

CASE = ("Mrs. Ana Ruiz, DOB 03/04/1961, has stage II hormone receptor-positive breast cancer after lumpectomy, "
        "ECOG 0. Which adjuvant therapy do the guidelines describe?")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    from kb.store import DEMO_DIR

    data = tmp_path_factory.mktemp("tui-real")
    settings = Settings().with_overrides({"paths.data_dir": str(data), "ui.reviewer": "dr-review"})
    eng = Engine(settings)
    assert not eng.kb().ingest([DEMO_DIR], chunk_chars=settings.kb.chunk_chars).errors
    return eng


@pytest.mark.slow  # ~1-2.5 min on two cores (model load, demo ingest, consult): `make test-all` runs it
async def test_consult_in_the_app_on_real_models(engine: Engine, tmp_path: Path) -> None:
    from oncotui.app import create_app

    app = create_app(lambda: engine)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.engine is not None)
        assert app.query_one("#badge").display  # the tiny embedded models say so
        await pilot.press("n")
        app.chat.prompt.value = CASE
        await pilot.press("enter")
        await wait_for(pilot, lambda: app._consult is not None and not app.consult_running, timeout=240)
        await pilot.pause()
        view = app.query_one(ConsultView)
        assert view.status in {"released", "pending_review", "refused"}, view.status
        assert any("Retrieving guidelines" in s for s in view.step_lines)
        passages = app.evidence.query_one("#passages", DataTable)
        assert passages.row_count >= 1  # the evidence is shown whatever the model wrote
        assert "Breast" in str(passages.get_row_at(0))
        assert "rag_confidence" in str(app.evidence.border_subtitle)
        assert "Ruiz" not in app.chat.query_one(ConsultView).report  # redacted before any model saw it
