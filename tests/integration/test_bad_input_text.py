"""Case text that is not UTF-8 (a note saved as Windows-1252, a file piped in by mistake) is refused with a clear
message before anything is stored; it used to crash the consult with a traceback after it had been started."""

from __future__ import annotations

import io
import sqlite3
import sys
from pathlib import Path

import pytest

from oncotui.cli import main


class _Stdin(io.TextIOWrapper):
    """A stdin whose bytes are given; reading it as text fails the way a strict UTF-8 locale does."""

    def __init__(self, data: bytes, tty: bool = False) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="strict")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _consults(data_dir: Path) -> int:
    db = data_dir / "oncotui.db"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("select count(*) from consults").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


LATIN1_NOTE = "Stage IV NSCLC, EGFR exon 19 deletion. Seen by Dr. Jos\xe9 Mu\xf1oz. Options?".encode("latin-1")


def test_ask_with_non_utf8_stdin_is_refused_before_anything_is_stored(data_dir, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", _Stdin(LATIN1_NOTE))
    assert main(["ask", "--patient", "PT-0001", "-"]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8" in err and "0xe9" in err and "iconv" in err and "Traceback" not in err
    assert _consults(data_dir) == 0  # no half-started consult is left behind for `patients` to list


def test_ask_with_undecodable_bytes_on_the_command_line_is_refused(data_dir, capsys):
    # Python hands undecodable argv bytes over as lone surrogates ("\udcff"); SQLite cannot store them
    assert main(["ask", "--patient", "PT-0001", "stage IV NSCLC \udce9 options?"]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8" in err and "command line" in err
    assert _consults(data_dir) == 0


def test_route_and_kb_query_read_stdin_the_same_way(data_dir, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", _Stdin(b"stage IV \xff pancreatic"))
    assert main(["route", "-"]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_utf8_stdin_with_a_byte_order_mark_is_read(data_dir, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", _Stdin("\ufeffStage IV pancreatic adenocarcinoma, KRAS".encode()))
    assert main(["route", "-", "--json"]) == 0
    assert '"tier": 2' in capsys.readouterr().out.replace('"tier":2', '"tier": 2')


def test_reading_a_terminal_says_how_to_end_the_note(data_dir, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", _Stdin(b"Stage IV pancreatic adenocarcinoma, KRAS", tty=True))
    assert main(["route", "-"]) == 0
    assert "Ctrl-D" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["route", ""], ["route", "   "], ["kb", "query", ""], ["kb", "query", "-"]])
def test_an_empty_question_is_refused_not_scored(data_dir, monkeypatch, capsys, argv):
    # `route ''` printed "score 0.00 -> Tier 1" and `kb query ''` ran retrieval on nothing
    monkeypatch.setattr(sys, "stdin", _Stdin(b"\n\n"))
    assert main(argv) == 2
    assert "empty" in capsys.readouterr().err


def test_resume_of_a_consult_id_that_does_not_exist_says_so(data_dir, capsys):
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(data_dir)
    collect(lambda: engine.stream("PT-0001", "Pancreatic adenocarcinoma, what are the first-line options?"))
    assert main(["resume", "--patient", "PT-0001", "--consult", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no consult 'nope'" in err and "audit show --thread PT-0001" in err
    other = engine.store.consults("PT-0001")[0]["id"]
    assert main(["resume", "--patient", "PT-0002", "--consult", other]) == 2  # another patient's consult
    assert f"consult {other!r} belongs to PT-0001" in capsys.readouterr().err


def test_an_interrupted_consult_names_the_patient_to_resume(data_dir, monkeypatch, capsys):
    import oncotui.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "ask", interrupted)
    monkeypatch.setattr(cli, "_resumable", lambda args: True)  # stopped after a checkpoint
    assert main(["ask", "--patient", "PT-0007", "stage IV NSCLC"]) == 130
    assert "oncotui resume --patient PT-0007`" in capsys.readouterr().err  # not "PT-XXXX"


def test_a_closed_stdin_is_a_clear_error(data_dir, monkeypatch, capsys):
    # `oncotui route - <&-`: Python sets sys.stdin to None
    monkeypatch.setattr(sys, "stdin", None)
    assert main(["route", "-"]) == 2
    assert "standard input is closed" in capsys.readouterr().err
