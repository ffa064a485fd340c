"""Piped consult output keeps long lines whole (a reviewer copies commands out of it)."""

from __future__ import annotations


def test_piped_output_is_not_wrapped_at_80_columns(capsys):
    from oncotui.cli import ConsultPrinter

    printer = ConsultPrinter()
    command = "run `oncotui hitl approve HITL-a7ffe91e --reviewer ID` " + "x" * 120
    printer.err.print(command)
    printer.out.print(command)
    out = capsys.readouterr()
    assert command in out.err and command in out.out
