"""Real-terminal smoke test: tmux runs `python -m oncotui` (no command: the app), keys create a patient, and the
captured screen shows the four panes. No model runs here (the app loads models only on a first consult).

Skipped when tmux is missing, unless CI=true (then a missing tmux is a failure).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tmux() -> str:
    path = shutil.which("tmux")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is required in CI (apt-get install -y tmux)")
        pytest.skip("tmux is not installed")
    return path


def test_app_opens_in_a_real_terminal(tmux: str, tmp_path: Path) -> None:
    socket = tmp_path / "tmux.sock"  # a private tmux server (and socket file): never touches anyone else's
    env = {**os.environ, "ONCOTUI_PATHS__DATA_DIR": str(tmp_path / "data"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "TERM": "xterm-256color"}
    env.pop("TMUX", None)
    base = [tmux, "-S", str(socket), "-f", "/dev/null"]

    def capture() -> str:
        out = subprocess.run([*base, "capture-pane", "-p", "-t", "smoke"], capture_output=True, text=True, check=False)
        return out.stdout

    def wait_for(predicate: Callable[[str], bool], timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = capture()
            if predicate(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"screen never matched; last capture:\n{screen}")

    def keys(*names: str) -> None:
        subprocess.run([*base, "send-keys", "-t", "smoke", *names], check=True)

    command = f"{sys.executable} -m oncotui"
    subprocess.run([*base, "new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30", "-c", str(ROOT), command],
                   check=True, env=env)
    try:
        wait_for(lambda s: "0 patients" in s)  # first frame painted and the engine (not the models) is up
        keys("n")
        screen = wait_for(lambda s: "PT-0001" in s and "1 patient" in s)
        for title in ("Patients", "Chat", "Evidence", "Approvals", "demo models: clinically useless"):
            assert title in screen, screen
        keys("F1")
        wait_for(lambda s: "Keys" in s and "new_patient" in s)
        keys("Escape")
        wait_for(lambda s: "new_patient" not in s)
        keys("C-q")
        deadline = time.monotonic() + 10
        while subprocess.run([*base, "has-session", "-t", "smoke"], capture_output=True, check=False).returncode == 0:
            assert time.monotonic() < deadline, "the app did not quit on ctrl+q"
            time.sleep(0.1)
        assert (tmp_path / "data" / "oncotui.db").is_file()
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True, check=False)
