"""Usage mistakes get exit 2 and a message saying what to give: a malformed patient id for
`audit show --thread` (it listed nothing and exited 0), an empty `kb remove ""` (it said " is not in the
knowledge base")."""

from __future__ import annotations

import pytest

from oncotui.cli import main


def test_audit_show_refuses_a_malformed_patient_id(data_dir, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "show", "--thread", "XX-1"]) == 2
    assert "PT-0001" in capsys.readouterr().err
    assert main(["audit", "show", "--thread", "PT-0001"]) == 0  # well formed, nothing logged yet


def test_kb_remove_needs_a_document(data_dir, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "remove", " "]) == 2
    assert "needs a document" in capsys.readouterr().err


def test_the_rebuild_help_says_the_old_index_is_kept_on_failure(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["kb", "ingest", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "drop the collection first" not in text and "the old one stays as it was" in text


def test_ctrl_c_before_the_first_step_says_to_ask_again(data_dir, capsys, monkeypatch) -> None:
    """It said the consult "can be continued with `oncotui resume`", which then found nothing to resume."""
    from oncotui import cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "ask", interrupted)
    assert main(["ask", "--patient", "PT-0001", "stage IV pancreatic adenocarcinoma: options?"]) == 130
    err = capsys.readouterr().err
    assert "ask again" in err and "oncotui resume" not in err


def test_a_reader_that_goes_away_ends_like_any_broken_pipe() -> None:
    """`oncotui ask ... | head` exited 1 ("a check failed"): rich's console exits 1 on a broken pipe by
    itself; ours raises it to main(), which exits 141 as for every other command."""
    from oncotui.cli import _console

    class GoneReader:
        def write(self, text: str) -> int:
            raise BrokenPipeError

        def flush(self) -> None:
            raise BrokenPipeError

    with pytest.raises(BrokenPipeError):
        _console(file=GoneReader()).print("Answer")
