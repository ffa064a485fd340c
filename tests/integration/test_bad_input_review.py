"""A reviewer's mistakes at the command line: an id typed in the wrong case or mistyped, signing an item twice,
an empty reviewer id. Each is a clear message with the right exit code, and nothing is signed by accident."""

from __future__ import annotations


from oncotui.cli import main
from tests.integration.test_cli_review import queue, run


def test_signing_an_item_twice_is_refused_with_exit_2(data_dir, capsys):
    item = queue(data_dir)
    assert run(capsys, "hitl", "approve", item, "--reviewer", "dr.lee")[0] == 0
    # exit 2 like every sign-off the rules refuse (and like the same refusal when two reviewers race)
    for argv in (("approve", item, "--reviewer", "dr.lee"), ("reject", item, "--reviewer", "dr.kim", "--note", "no")):
        rc, _out, err = run(capsys, "hitl", *argv)
        assert rc == 2 and "already decided (approved by dr.lee" in err and "Traceback" not in err


def test_an_id_in_another_case_is_the_same_item(data_dir, capsys):
    item = queue(data_dir)
    rc, out, _ = run(capsys, "hitl", "show", item.lower())
    assert rc == 0 and item in out
    rc, _out, _err = run(capsys, "hitl", "approve", item.lower(), "--reviewer", "dr.lee")
    assert rc == 0
    rc, out, _ = run(capsys, "hitl", "list", "--all")
    assert "approved" in out and "dr.lee" in out


def test_a_mistyped_id_names_the_likely_item(data_dir, capsys):
    item = queue(data_dir)
    typo = item[:-1] + ("0" if item[-1] != "0" else "1")
    for argv in (("show", typo), ("approve", typo, "--reviewer", "dr.lee")):
        rc, _out, err = run(capsys, "hitl", *argv)
        assert rc == 2 and f"no approval item {typo!r}" in err and f"did you mean {item}" in err
    rc, out, _ = run(capsys, "hitl", "list")
    assert item in out and "pending" in out  # nothing was signed


def test_an_empty_reviewer_id_names_the_option(data_dir, capsys):
    item = queue(data_dir)
    for argv in (("approve", item, "--reviewer", ""), ("reject", item, "--reviewer", "  ", "--note", "why")):
        rc, _out, err = run(capsys, "hitl", *argv)
        assert rc == 2 and "--reviewer" in err and "empty" in err
    assert main(["hitl", "list", "--json"]) == 0
    assert item in capsys.readouterr().out  # still pending


def test_an_edit_file_that_is_not_utf8_is_refused_and_nothing_is_signed(data_dir, capsys, tmp_path):
    item = queue(data_dir)
    edited = tmp_path / "edited.md"
    edited.write_bytes("Gemcitabine plus nab-paclitaxel, per Dr. Mu\xf1oz.\n".encode("latin-1"))
    rc, _out, err = run(capsys, "hitl", "approve", item, "--reviewer", "dr.lee", "--edit-file", str(edited))
    assert rc == 2 and "not UTF-8" in err and str(edited) in err and "Traceback" not in err
    rc, out, _ = run(capsys, "hitl", "list")
    assert item in out  # still pending


def test_redact_file_that_is_not_utf8_is_refused(data_dir, capsys, tmp_path):
    note = tmp_path / "note.txt"
    note.write_bytes("Seen by Dr. Jos\xe9 Mu\xf1oz on 3/4/2024.\n".encode("latin-1"))
    rc, out, err = run(capsys, "redact", "--file", str(note))
    assert rc == 2 and "not UTF-8" in err and out == ""  # no half-redacted text with mangled names


def test_no_os_user_name_does_not_break_the_command_line(data_dir, capsys, monkeypatch):
    # a container user without a passwd entry and no $USER: getpass.getuser() raises, and it ran at parser build
    import getpass

    def nobody():
        raise KeyError("getpwuid(): uid not found: 12345")

    item = queue(data_dir)
    monkeypatch.setattr(getpass, "getuser", nobody)
    assert run(capsys, "hitl", "list")[0] == 0
    rc, _out, err = run(capsys, "hitl", "approve", item)
    assert rc == 2 and "--reviewer" in err and "Traceback" not in err
    assert run(capsys, "hitl", "approve", item, "--reviewer", "dr.lee")[0] == 0
