"""Profiles from a partial file or the environment merge over the built-in ones; unknown keys suggest a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import ConfigError, load_settings


def test_env_underscore_name_means_the_dash_profile():
    s = load_settings(None, environ={"ONCOTUI_MODELS__PROFILES__QWEN_CODER__PATH": "/models/q.gguf"})
    assert s.models.profiles["qwen-coder"].path == "/models/q.gguf"
    assert s.models.profiles["qwen-coder"].backend == "llama_cpp" and "qwen_coder" not in s.models.profiles


def test_partial_profile_table_merges_over_the_defaults(tmp_path: Path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[models.profiles.smollm2]\nn_threads = 1\n")
    s = load_settings(cfg, environ={"ONCOTUI_MODELS__PROFILES__QWEN_CODER__N_CTX": "2048"})
    assert s.models.profiles["smollm2"].n_threads == 1
    assert s.models.profiles["smollm2"].path == "embedded:smollm2" and s.models.profiles["smollm2"].evidence_locked
    assert s.models.profiles["qwen-coder"].n_ctx == 2048 and s.models.tier2 == "qwen-coder"


def test_a_new_profile_still_needs_its_backend(tmp_path: Path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[models.profiles.smolm2]\npath = "/x.gguf"\n')
    with pytest.raises(ConfigError) as exc:
        load_settings(cfg, environ={})
    msg = str(exc.value)
    assert "models.profiles.smolm2.backend is required" in msg and "did you mean smollm2?" in msg
    assert "{...}" not in msg


@pytest.mark.parametrize(("text", "expected"), [
    ("[kb]\nrecal_k = 3\n", "unknown key kb.recal_k (did you mean recall_k?)"),
    ("[models.profiles.smollm2]\nn_thread = 1\n", "unknown key models.profiles.smollm2.n_thread (did you mean "
                                                   "n_threads?)"),
    ("[ragg]\nhyde = true\n", "unknown key ragg (did you mean rag?)"),
])
def test_unknown_key_suggests_the_nearest(tmp_path: Path, text: str, expected: str):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_settings(cfg, environ={})
    assert expected in str(exc.value) and "Extra inputs" not in str(exc.value)
