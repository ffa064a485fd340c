"""Piped consult output: the reviewer commands stay whole (on stdout, once), and Markdown answers are wrapped, never cropped."""

from __future__ import annotations

from types import SimpleNamespace

from rich.markdown import Markdown


def test_piped_output_keeps_commands_whole_and_wraps_the_answer(capsys):
    from oncotui.cli import ConsultPrinter

    printer = ConsultPrinter()
    reasons = ("Tier 2 case (complexity score 0.95)", "Low retrieval confidence (0.13 < 0.30) " + "x" * 60)
    printer(SimpleNamespace(kind="HitlRequired", approval_id="HITL-a7ffe91e", reasons=reasons))
    piped = capsys.readouterr()
    assert "oncotui hitl approve HITL-a7ffe91e --reviewer ID" in piped.out and "x" * 60 in piped.out
    # the progress log notes the stop and why, once; the commands are on stdout only, not repeated there
    assert "Waiting for a reviewer (HITL-a7ffe91e)" in piped.err and "x" * 60 in piped.err
    assert "hitl approve" not in piped.err

    long_item = "For stage III, adjuvant fluoropyrimidine with oxaliplatin (FOLFOX or CAPOX) is standard " * 2
    printer.out.print(Markdown(f"1. {long_item.strip()}"))
    out = " ".join(capsys.readouterr().out.split())
    assert long_item.strip() in out  # every word arrives (wrapped lines), nothing cut at 80 columns
