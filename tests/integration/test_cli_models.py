"""`oncotui models list|setup` check each configured profile's model, not only the embedded files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from oncotui.cli import main


@pytest.fixture
def models_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path))
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    good = tmp_path / "good.gguf"
    good.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0) + b"\0" * 40)  # a GGUF header, no tensors
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__SMOLLM2__PATH", str(good))
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__QWEN_CODER__PATH", str(good))
    return tmp_path


def test_models_list_ok(models_env, capsys):
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert out.count("ok  ") == 2 and "GGUF" in out


def test_models_list_missing_and_corrupt_files_exit_1(models_env, capsys, monkeypatch):
    corrupt = models_env / "corrupt.gguf"
    corrupt.write_bytes(bytes(range(256)) * 4)  # 1 KB, no magic
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__SMOLLM2__PATH", str(corrupt))
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__QWEN_CODER__PATH", str(models_env / "nonexistent.gguf"))
    assert main(["models", "list"]) == 1
    captured = capsys.readouterr()
    assert "BAD smollm2" in captured.out and "is not a GGUF file" in captured.out
    assert "BAD qwen-coder" in captured.out and "file not found" in captured.out
    assert "models.tier1 = 'smollm2'" in captured.err and "models.tier2 = 'qwen-coder'" in captured.err
    assert main(["models", "list", "--json"]) == 1
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {r["profile"]: r["ok"] for r in rows} == {"smollm2": False, "qwen-coder": False}
    assert rows[0]["tiers"] == ["tier1"] and rows[0]["fallback"] is True


def test_only_a_tier_profile_fails_the_check(models_env, capsys, monkeypatch):
    monkeypatch.setenv("ONCOTUI_MODELS__FALLBACK_CHAIN", '["smollm2"]')
    monkeypatch.setenv("ONCOTUI_MODELS__TIER2", "smollm2")
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__QWEN_CODER__PATH", str(models_env / "gone.gguf"))
    assert main(["models", "list"]) == 0  # qwen-coder is used by no tier
    assert "BAD qwen-coder" in capsys.readouterr().out


def test_transformers_profile_needs_a_folder_with_config_json(models_env, capsys, monkeypatch):
    folder = models_env / "hf"
    folder.mkdir()
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__SMOLLM2__BACKEND", "transformers")
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__SMOLLM2__PATH", str(folder))
    assert main(["models", "list"]) == 1
    assert "no config.json" in capsys.readouterr().out


def test_models_setup_checks_the_configured_path_not_only_the_embedded_file(models_env, capsys, monkeypatch):
    import engine.models.embedded as embedded
    import kb.models

    monkeypatch.setattr(embedded, "install_embedded",
                        lambda model_dir: [("smollm2", models_env / "embedded.gguf", "ab" * 32, True)])
    monkeypatch.setattr(kb.models, "verify_embedded", lambda *a: [])
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__SMOLLM2__PATH", "/nonexistent.gguf")
    assert main(["models", "setup"]) == 1
    out = capsys.readouterr().out
    assert "ok  smollm2" in out  # the embedded file itself is fine...
    assert "BAD smollm2" in out and "/nonexistent.gguf" in out  # ...but the profile points elsewhere
