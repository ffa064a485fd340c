"""Start-up: the real engine is built without loading models or the knowledge base; settings errors end the app
with the CLI's message; `oncotui --help` never imports Textual."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.tui.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "llama_cpp", "chromadb", "sentence_transformers", "onnxruntime")

START_AND_REPORT = """
import json, sys
from engine.config import Settings
from oncotui.app import create_app

app = create_app(settings=Settings().with_overrides({"paths.data_dir": sys.argv[1]}))

async def auto(pilot):
    while app.engine is None:
        await pilot.pause(0.05)
    await pilot.pause()
    app.exit(json.dumps({"kb_opened": app.engine._kb is not None, "models": sorted(app.engine.models._models),
                         "patients_subtitle": str(app.patients_pane.border_subtitle),
                         "heavy": sorted(m for m in sys.modules if m.split(".")[0] in json.loads(sys.argv[2]))}))

print(app.run(headless=True, auto_pilot=auto, size=(100, 30)))
"""


def test_real_engine_starts_without_models_or_kb(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", START_AND_REPORT, str(tmp_path), json.dumps(HEAVY)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"kb_opened": False, "models": [], "patients_subtitle": "0 patients", "heavy": []}


def test_importing_the_app_does_not_import_the_engine() -> None:
    code = "import oncotui.app, sys; print(sorted(m for m in sys.modules if m.startswith(('engine', 'pydantic'))))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # they load in a thread after the first frame (cold start)


def test_help_still_skips_textual() -> None:
    code = ("import sys\nfrom oncotui.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('textual' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


async def test_settings_error_ends_the_app_with_the_message(tmp_path: Path, capsys) -> None:
    from oncotui.app import create_app

    bad = tmp_path / "config.toml"
    bad.write_text("[engine]\nmax_retries = 9\n", encoding="utf-8")
    app = create_app(config_path=bad)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app._exit, timeout=20)
    assert app.return_code == 2
    err = capsys.readouterr().err
    assert "oncotui: Invalid settings" in err and "engine.max_retries = 9" in err
