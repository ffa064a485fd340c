"""Fixtures the CLI integration tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data folder for the CLI, and no config file of the machine's (the repository's defaults)."""
    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path))
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    return tmp_path
