"""A settings file that cannot be read as TOML text is a clear ConfigError naming the file, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.config import ConfigError, load_settings


def test_a_config_file_that_is_not_utf8_names_the_file_and_the_byte(tmp_path: Path):
    bad = tmp_path / "c.toml"
    bad.write_bytes('[ui]\ntheme = "textual-dark"\nreviewer = "Jos\xe9"\n'.encode("latin-1"))
    with pytest.raises(ConfigError) as exc:
        load_settings(bad, environ={})
    msg = str(exc.value)
    assert str(bad) in msg and "not UTF-8" in msg and "line 3" in msg


def test_a_directory_given_as_the_config_file_says_so(tmp_path: Path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_settings(tmp_path, environ={})
    with pytest.raises(ConfigError, match="is a directory"):
        load_settings(None, environ={"ONCOTUI_CONFIG": str(tmp_path)})


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_config_file_is_a_clear_error(tmp_path: Path):
    bad = tmp_path / "c.toml"
    bad.write_text("[ui]\n", encoding="utf-8")
    bad.chmod(0)
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(bad, environ={})


def test_an_unreadable_config_file_is_a_clear_error_whoever_runs_it(tmp_path: Path, monkeypatch):
    bad = tmp_path / "c.toml"
    bad.write_text("[ui]\n", encoding="utf-8")

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    monkeypatch.setattr(Path, "read_text", denied)
    with pytest.raises(ConfigError, match="cannot read .*Permission denied"):
        load_settings(bad, environ={})


def test_a_reviewer_given_as_a_string_shows_the_table_to_write(tmp_path: Path):
    bad = tmp_path / "c.toml"
    bad.write_text('[hitl]\nreviewers = ["dr.lee"]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_settings(bad, environ={})
    msg = str(exc.value)
    assert "hitl.reviewers[0] = 'dr.lee'" in msg and '{ id = "dr.lee", role = "' in msg
    assert "instance of Reviewer" not in msg  # pydantic's class name means nothing to a user


def test_a_section_given_as_a_value_says_it_is_a_table(tmp_path: Path):
    bad = tmp_path / "c.toml"
    bad.write_text('engine = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_settings(bad, environ={})
    msg = str(exc.value)
    assert "engine = 3" in msg and "[engine] table" in msg and "EngineConfig" not in msg
