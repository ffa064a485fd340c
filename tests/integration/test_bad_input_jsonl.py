"""A question set (JSONL) that is not UTF-8, e.g. saved as Latin-1 by a spreadsheet, is refused with the same kind of
message as a file that cannot be read or is not JSON (exit 2); it used to end in a UnicodeDecodeError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.errors import KBError
from kb.evaluate import read_jsonl
from oncotui.cli import main

LATIN1 = '{"query": "first-line treatment of pleural mesothelioma"}\n{"query": "caf\u00e9 au lait spots"}\n'


GUIDE = """# Mesothelioma Test Guide

## First-Line Therapy
Malignant pleural mesothelioma is treated first line with nivolumab plus ipilimumab in fit patients.
"""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder whose knowledge base holds one guideline (the eval commands refuse an empty one first)."""
    root = tmp_path_factory.mktemp("jsonl")
    (root / "guide.md").write_text(GUIDE)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ONCOTUI_PATHS__DATA_DIR", str(root / "data"))
        mp.delenv("ONCOTUI_CONFIG", raising=False)
        mp.setenv("XDG_CONFIG_HOME", str(root / "no-config"))
        assert main(["kb", "ingest", str(root / "guide.md")]) == 0
    return root / "data"


@pytest.fixture
def latin1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> Path:
    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(data_dir))
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    path = tmp_path / "questions.jsonl"
    path.write_bytes(LATIN1.encode("latin-1"))
    return path


def test_read_jsonl_names_the_line_that_is_not_utf8(latin1: Path) -> None:
    with pytest.raises(KBError) as e:
        read_jsonl(latin1)
    assert str(e.value) == (f"cannot read {latin1}:2: not UTF-8 text (invalid continuation byte at byte 72); save "
                            "it as UTF-8")
    # a UTF-8 file with a byte-order mark (Notepad) is read as it was meant
    latin1.write_bytes(LATIN1.encode("utf-8-sig"))
    assert [r["query"] for r in read_jsonl(latin1)][1] == "caf\u00e9 au lait spots"


@pytest.mark.parametrize("args", [
    ["eval", "retrieval", "--set", "{set}"],
    ["kb", "calibrate", "--in", "{set}", "--out", "{out}"],
    ["eval", "gate", "--in", "{set}", "--out", "{out}"],
])
def test_commands_reading_a_question_set_exit_2_with_the_reason(latin1: Path, args: list[str],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = latin1.with_name("out.jsonl")
    rc = main([a.format(set=latin1, out=out) for a in args])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"cannot read {latin1}:2: not UTF-8 text" in err and "Traceback" not in err
    assert not out.exists()
