"""prepare: case records (JSONL) -> redacted, deduplicated, split, ChatML-rendered training data.

Input schema, one JSON object per line:

    {"input": "case text and question", "target": "the answer to learn",
     "source": "optional provenance string", "metadata": {"optional": "object"}}

Every record goes through the PHI redactor (``engine.phi.redact``) on both input and target; the counts of what
was removed are reported per type. Duplicates are found by SHA-256 of the redacted (input, target) pair. The
90/10 split is decided per record by a hash (deterministic, independent of file order). A record that cannot be
used is reported with its line number and reason, never dropped silently.

Output under ``<output_dir>/data``: ``train.jsonl``, ``eval.jsonl`` (``prompt``/``completion`` conversations,
the rendered ``text`` and the token count) and ``report.json`` (the statistics printed at the end).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .config import FinetuneError, JobConfig
from .jobdir import job_lock, writable_dir

__all__ = ["PrepareReport", "prepare", "split_bucket", "record_hash"]


@dataclass
class PrepareReport:
    input_file: str
    records_read: int = 0
    accepted: int = 0
    train: int = 0
    eval: int = 0
    duplicates: list[dict[str, Any]] = field(default_factory=list)  # {"line", "duplicate_of"}
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {"line", "reason"}
    phi_removed: dict[str, int] = field(default_factory=dict)  # placeholders issued per type, all records
    records_with_phi: int = 0
    tokens: dict[str, float] = field(default_factory=dict)  # min / mean / median / max / total per record
    thinking_switch: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def record_hash(inp: str, target: str) -> str:
    return hashlib.sha256(json.dumps([inp.strip(), target.strip()], ensure_ascii=False).encode()).hexdigest()


def split_bucket(digest: str, salt: str) -> float:
    """A number in [0, 1) fixed by the record's content: the same record lands in the same split on every run."""
    return int(hashlib.sha256((salt + digest).encode()).hexdigest()[:12], 16) / float(16**12)


def _validate(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return f"not a JSON object ({type(obj).__name__})"
    for key in ("input", "target"):
        if key not in obj:
            return f"missing required key {key!r}"
        if not isinstance(obj[key], str):
            return f"{key!r} must be a string, got {type(obj[key]).__name__}"
    if "source" in obj and obj["source"] is not None and not isinstance(obj["source"], str):
        return f"'source' must be a string, got {type(obj['source']).__name__}"
    if "metadata" in obj and obj["metadata"] is not None and not isinstance(obj["metadata"], dict):
        return f"'metadata' must be an object, got {type(obj['metadata']).__name__}"
    unknown = set(obj) - {"input", "target", "source", "metadata", "id"}
    if unknown:
        return f"unknown keys {sorted(unknown)} (allowed: input, target, source, metadata, id)"
    return None


def _json_error(exc: json.JSONDecodeError) -> str:
    end = ", the end of the line" if exc.pos >= len(exc.doc) else ""
    return f"invalid JSON: {exc.msg} (column {exc.colno}{end})"


def prepare(cfg: JobConfig, *, tokenizer: Any = None, console: Any = None, quiet: bool = False) -> PrepareReport:
    src = cfg.data.train_file
    if src.is_dir():
        raise FinetuneError(f"data.train_file {src} is a directory; give the JSONL file of case records")
    if not src.is_file():
        raise FinetuneError(f"data.train_file not found: {src}")
    problem = _file_problem(src)  # before the tokenizer loads: a wrong kind of file needs no model to tell
    if problem:
        raise FinetuneError(f"data.train_file {src} {problem}")
    with job_lock(cfg, "prepare"):
        writable_dir(cfg.data_dir, "the prepared-data folder")
        return _prepare(cfg, tokenizer, console, quiet)


def _file_problem(src: Path) -> str | None:
    """Why the whole file is not JSON Lines, judged at its first line (one message, not one per record)."""
    with src.open("rb") as fh:
        head = fh.read(4)
        fh.seek(0)
        if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
            return "is UTF-32 encoded; save it as UTF-8"
        # a BOM, or NUL bytes beside ASCII: what Windows tools write when they say "Unicode"
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or (
                len(head) >= 2 and (head[0] == 0) != (head[1] == 0)):
            return "is UTF-16 encoded; save it as UTF-8"
        first = next((line for line in fh if line.strip()), None)
    if first is None:
        return ('is empty: it needs case records, one JSON object per line ({"input": "...", "target": '
                '"..."}; finetune/README.md)')
    text = first.decode("utf-8-sig", errors="replace").strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:  # "[" alone, or "[{...}," : the first line of an array spread over lines
            value = [{}]
        if isinstance(value, list) and any(isinstance(v, dict) for v in value):
            return ("looks like a JSON array, not JSON Lines: write one case object per line, without the "
                    "surrounding [ ] (e.g. jq -c '.[]' cases.json > cases.jsonl)")
    return None


def _lone_surrogate(obj: dict[str, Any]) -> str | None:
    """A "\\ud800"-style escape parses to a lone surrogate, which no UTF-8 file can hold: rejected."""
    for key, value in obj.items():
        try:
            json.dumps([key, value], ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            code = ord(str(exc.object)[exc.start])
            return (f"{key!r} contains \\u{code:04x}, half of a UTF-16 surrogate pair (not a character); "
                    "fix the escape or remove it")
    return None


def _prepare(cfg: JobConfig, tokenizer: Any, console: Any, quiet: bool) -> PrepareReport:
    from engine.phi import redact

    from .tokenizer import count_tokens, load_tokenizer, render, supports_thinking_switch, template_kwargs

    src = cfg.data.train_file
    report = PrepareReport(input_file=str(src))
    if tokenizer is None:
        tokenizer, notes = load_tokenizer(cfg.job.base_model, cfg.model.trust_remote_code)
        report.notes.extend(notes)
    report.thinking_switch = supports_thinking_switch(tokenizer)
    tkw = template_kwargs(tokenizer, cfg.model.enable_thinking)
    phi: Counter[str] = Counter()
    seen: dict[str, int] = {}
    rows: list[tuple[float, dict[str, Any]]] = []

    with src.open("rb") as fh:
        for lineno, raw_line in enumerate(fh, 1):
            if not raw_line.strip():
                continue
            report.records_read += 1
            try:  # one line in another encoding is one rejected record, not the end of the run
                line = raw_line.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                report.rejected.append({"line": lineno, "reason": f"not UTF-8 text (byte 0x{raw_line[exc.start]:02x} "
                                        f"at column {exc.start + 1}); save the file as UTF-8"})
                continue
            try:
                obj = json.loads(line.rstrip("\r\n"))  # with the newline, an error at the end reads "column 1"
            except json.JSONDecodeError as exc:
                report.rejected.append({"line": lineno, "reason": _json_error(exc)})
                continue
            problem = _validate(obj) or _lone_surrogate(obj)
            if problem is None and len(obj["input"].strip()) < cfg.data.min_input_chars:
                problem = f"'input' is empty or shorter than data.min_input_chars={cfg.data.min_input_chars}"
            if problem is None and len(obj["target"].strip()) < cfg.data.min_target_chars:
                problem = f"'target' is empty or shorter than data.min_target_chars={cfg.data.min_target_chars}"
            if problem:
                report.rejected.append({"line": lineno, "reason": problem})
                continue
            r_in, r_out = redact(obj["input"].strip()), redact(obj["target"].strip())
            counts = Counter(r_in.counts) + Counter(r_out.counts)
            if sum(counts.values()):
                report.records_with_phi += 1
            digest = record_hash(r_in.text, r_out.text)
            if digest in seen:
                report.duplicates.append({"line": lineno, "duplicate_of": seen[digest]})
                continue
            prompt = ([{"role": "system", "content": cfg.data.system_prompt}] if cfg.data.system_prompt else [])
            prompt.append({"role": "user", "content": r_in.text})
            completion = [{"role": "assistant", "content": r_out.text}]
            text = render(tokenizer, prompt + completion, add_generation_prompt=False,
                          enable_thinking=cfg.model.enable_thinking)
            n_tokens = count_tokens(tokenizer, text)
            if n_tokens > cfg.model.max_seq_length:
                report.rejected.append({"line": lineno, "reason": f"too long: {n_tokens} tokens > "
                                        f"model.max_seq_length={cfg.model.max_seq_length}"})
                continue
            seen[digest] = lineno
            phi.update(counts)
            row: dict[str, Any] = {
                "id": digest[:16], "line": lineno, "prompt": prompt, "completion": completion, "text": text,
                "tokens": n_tokens, "source": obj.get("source") or "",
                "metadata": json.dumps(obj.get("metadata") or {}, ensure_ascii=False, sort_keys=True),
                "phi_removed": dict(counts),
            }
            if tkw:
                row["chat_template_kwargs"] = tkw
            rows.append((split_bucket(digest, cfg.data.split_salt), row))

    report.accepted = len(rows)
    report.phi_removed = dict(sorted(phi.items()))
    train = [r for b, r in rows if b >= cfg.data.eval_fraction]
    evals = [r for b, r in rows if b < cfg.data.eval_fraction]
    if cfg.data.eval_fraction > 0 and not evals and len(rows) >= 2:
        # too few records for the hash to pick one: take the lowest bucket (still deterministic)
        low = min(rows, key=lambda br: br[0])[1]
        train.remove(low)
        evals.append(low)
        report.notes.append("no record fell into the eval split by hash; the lowest-hash record was moved there")
    report.train, report.eval = len(train), len(evals)
    lengths = [r["tokens"] for _, r in rows]
    if lengths:
        report.tokens = {"min": min(lengths), "mean": round(statistics.fmean(lengths), 1),
                         "median": statistics.median(lengths), "max": max(lengths), "total": sum(lengths)}
    out = cfg.data_dir
    for name, part in (("train.jsonl", train), ("eval.jsonl", evals)):
        with (out / name).open("w", encoding="utf-8") as fh:
            for r in part:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    (out / "report.json").write_text(json.dumps(report.to_json(), indent=2), encoding="utf-8")
    if not quiet:
        print_report(report, console)
    if not rows:
        raise FinetuneError(f"no usable records in {src} ({len(report.rejected)} rejected, "
                            f"{len(report.duplicates)} duplicates); see {out / 'report.json'}")
    return report


def print_report(report: PrepareReport, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console(stderr=True, highlight=False)
    t = Table(title=f"prepare: {report.input_file}", show_header=False)
    t.add_row("records read", str(report.records_read))
    t.add_row("accepted", f"{report.accepted} (train {report.train}, eval {report.eval})")
    t.add_row("duplicates skipped", str(len(report.duplicates)))
    t.add_row("rejected", str(len(report.rejected)))
    t.add_row("records with PHI", str(report.records_with_phi))
    t.add_row("PHI removed", ", ".join(f"{k} {v}" for k, v in report.phi_removed.items()) or "none")
    if report.tokens:
        tk = report.tokens
        t.add_row("tokens/record", f"min {tk['min']}  mean {tk['mean']}  median {tk['median']}  max {tk['max']}"
                  f"  (total {tk['total']})")
    t.add_row("thinking switch", "template supports enable_thinking (off)" if report.thinking_switch else "n/a")
    console.print(t)
    for d in report.duplicates[:20]:
        console.print(f"  duplicate: line {d['line']} repeats line {d['duplicate_of']}")
    for r in report.rejected[:50]:
        console.print(f"  [yellow]rejected[/yellow]: line {r['line']}: {r['reason']}")
    if len(report.rejected) > 50:
        console.print(f"  ... and {len(report.rejected) - 50} more (see report.json)")
    for n in report.notes:
        console.print(f"  [dim]note: {n}[/dim]")
