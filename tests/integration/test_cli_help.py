"""Command-line polish: every option documented, JSON where --json is asked for, secrets masked, plain messages."""

from __future__ import annotations

import argparse
import json

import pytest

from oncotui.cli import ConsultPrinter, build_parser, main, mask_secrets


def _undocumented(parser: argparse.ArgumentParser, path: str) -> list[str]:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            missing += [f"{path} {c.dest}" for c in action._choices_actions if not c.help]
            for name, child in action.choices.items():
                missing += _undocumented(child, f"{path} {name}")
        elif not action.help and not isinstance(action, argparse._HelpAction):
            missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_option_and_positional_has_a_description():
    assert _undocumented(build_parser(), "oncotui") == []


def test_kb_and_eval_summaries_name_every_action():
    top = build_parser().format_help()
    kb_line = top[top.index("    kb "):].split("\n    eval")[0]
    for action in ("ingest", "stats", "remove", "calibrate", "query"):
        assert action in kb_line
    eval_line = top[top.index("    eval "):].split("\n    redact")[0]
    for action in ("retrieval", "gate", "safety", "phi"):
        assert action in eval_line


def test_patients_new_json(data_dir, capsys):
    assert main(["patients", "new", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"id": "PT-0001"}
    assert main(["patients", "new"]) == 0
    assert capsys.readouterr().out.strip() == "PT-0002"


def test_config_show_masks_secrets_and_pretty_prints(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__SMOLLM2__API_KEY", "sk-very-secret")
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "sk-very-secret" not in out and '"api_key": "***"' in out
    assert '"api_key": ""' in out  # empty ones stay empty (nothing to hide, and it shows none is set)
    assert len(out.splitlines()) > 50  # pretty-printed, not one line
    body = json.loads(out)  # stdout is the JSON alone (the note on where it came from goes to stderr)
    assert body["ui"]["keymap"] == {}  # "keymap" is no secret


def test_config_show_masks_a_password_inside_a_url(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("ONCOTUI_MODELS__PROFILES__SMOLLM2__BASE_URL", "http://admin:hunter2@127.0.0.1:9/v1")
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "hunter2" not in out and "http://admin:***@127.0.0.1:9/v1" in out


def test_mask_secrets_nested():
    assert mask_secrets({"a": {"api_key": "x", "token": "", "n": 1}, "l": [{"password": "p"}]}) == {
        "a": {"api_key": "***", "token": "", "n": 1}, "l": [{"password": "***"}]}


def test_empty_knowledge_base_gate_line_says_so(capsys):
    from engine.events import EvidenceReady

    printer = ConsultPrinter()
    printer(EvidenceReady("PT-0001", "c1", "q", (), False, 0.0, None, None, 0.3))
    err = capsys.readouterr().err
    assert "knowledge base is empty" in err and "oncotui kb ingest" in err and "None" not in err


def _subparsers(parser: argparse.ArgumentParser, path: str = "oncotui"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            for name, child in action.choices.items():
                if name in helps:  # aliases share their parser
                    yield f"{path} {name}", child, helps[name]
                    yield from _subparsers(child, f"{path} {name}")


def test_every_command_help_opens_with_what_it_does():
    # `oncotui X --help` printed only usage and options: the one-line summary was in the parent's list alone
    missing = [path for path, child, summary in _subparsers(build_parser())
               if " ".join(summary.split()[:4]).lower() not in " ".join(child.format_help().split()).lower()]
    assert missing == []


@pytest.mark.parametrize("stage, reads, writes", [
    ("prepare", "data.train_file", "data/train.jsonl"),
    ("train", "data/train.jsonl", "adapter/"),
    ("merge", "adapter/", "merged/"),
    ("export-gguf", "merged/", "gguf/"),
    ("verify", "gguf/", "manifest.json"),
])
def test_finetune_stage_help_says_what_it_reads_writes_and_what_comes_next(stage, reads, writes):
    ft = build_parser()._subparsers._group_actions[0].choices["finetune"]
    text = " ".join(ft._subparsers._group_actions[0].choices[stage].format_help().split())
    assert "reads:" in text and reads in text.split("writes:")[0] and writes in text.split("writes:")[1]
    assert "finetune/README.md" in text
    if stage != "verify":
        assert "next: oncotui finetune" in text.lower()


def test_config_may_follow_the_command(data_dir, tmp_path, capsys):
    # `oncotui route "..." --config FILE` was "unrecognized arguments: --config FILE"
    bad = tmp_path / "typo.toml"
    bad.write_text("[engine]\nmax_retires = 1\n", encoding="utf-8")
    assert main(["route", "stage IV pancreatic", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "did you mean max_retries" in err
    assert main(["kb", "stats", "--config", str(bad)]) == 2
    assert main(["--config", str(bad), "patients"]) == 2  # before the command, as always
    capsys.readouterr()
    assert main(["patients", "--json"]) == 0  # not given: the default lookup, unchanged


def test_finetune_stages_keep_config_for_the_job_file():
    args = build_parser().parse_args(["finetune", "prepare", "--config", "job.toml"])
    assert args.job_config == "job.toml" and args.config is None


def test_no_command_without_a_terminal_explains_instead_of_hanging(data_dir, monkeypatch, capsys):
    # `oncotui < /dev/null > out.txt` drew the full-screen app into the file and waited forever for keys
    import oncotui.app

    def no_app(*args, **kwargs):
        raise AssertionError("the app was started without a terminal")

    monkeypatch.setattr(oncotui.app, "run_app", no_app)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "terminal" in err and "oncotui --help" in err


def test_kb_ingest_without_paths_is_a_usage_error_before_the_embedder_loads(data_dir, monkeypatch, capsys):
    import engine.kbfactory

    def no_kb(*args, **kwargs):
        raise AssertionError("the knowledge base was opened (and the embedder loaded) for nothing")

    monkeypatch.setattr(engine.kbfactory, "open_kb", no_kb)
    assert main(["kb", "ingest"]) == 2  # was 1 ("a check failed"), after loading the embedder
    assert "--demo" in capsys.readouterr().err
