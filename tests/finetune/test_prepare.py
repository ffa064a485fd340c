from __future__ import annotations

import json

import pytest

from finetune.config import FinetuneError
from finetune.dataprep import prepare, split_bucket


def _write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_redaction_counts_dedup_and_rejections(tmp_path, make_job):
    cases = _write(tmp_path / "c.jsonl", [
        {"input": "Patient John Smith, MRN 12345678, seen 03/04/2021: stage IV NSCLC, EGFR. Next?",
         "target": "Osimertinib is described.", "source": "a", "metadata": {"site": "x"}},
        {"input": "Stage II colorectal cancer after resection, MSI-high. Adjuvant?", "target": "Observation."},
        {"input": "Stage II colorectal cancer after resection, MSI-high. Adjuvant?", "target": "Observation."},
        "{not json",
        {"input": "Stage III melanoma, BRAF V600E, resected. Adjuvant options?"},
        {"input": "", "target": "x"},
        {"input": "ok enough text here for a case", "target": 5},
        ["a", "list"],
        {"input": "Glioblastoma, MGMT methylated. Standard?", "target": "Temozolomide with RT.", "extra": 1},
        {"input": "word " * 400, "target": "too long"},
    ])
    cfg = make_job(cases=cases, data={"min_input_chars": 5})
    rep = prepare(cfg, quiet=True)
    assert rep.records_read == 10
    assert rep.accepted == 2 and rep.train + rep.eval == 2 and rep.eval == 1
    assert rep.duplicates == [{"line": 3, "duplicate_of": 2}]
    reasons = {r["line"]: r["reason"] for r in rep.rejected}
    assert "invalid JSON" in reasons[4]
    assert reasons[4].endswith("(column 2)")  # '{not json': the key's quote is missing at column 2
    assert "missing required key 'target'" in reasons[5]
    assert "'input' is empty" in reasons[6]
    assert "'target' must be a string" in reasons[7]
    assert "not a JSON object" in reasons[8]
    assert "unknown keys ['extra']" in reasons[9]
    assert reasons[10].startswith("too long:")
    assert len(rep.rejected) == 7  # nothing dropped silently: 2 accepted + 1 duplicate + 7 rejected = 10
    assert rep.phi_removed.get("PERSON") == 1 and rep.phi_removed.get("DATE") == 1 and rep.records_with_phi == 1
    rows = [json.loads(x) for f in ("train.jsonl", "eval.jsonl")
            for x in (cfg.data_dir / f).read_text().splitlines()]
    text = json.dumps(rows)
    assert "John Smith" not in text and "03/04/2021" not in text and "[PERSON_1]" in text
    first = next(r for r in rows if r["source"] == "a")
    assert first["prompt"][0] == {"role": "system", "content": "You are an oncology assistant."}
    assert first["completion"] == [{"role": "assistant", "content": "Osimertinib is described."}]
    assert first["text"].startswith("<|im_start|>system\n") and first["text"].endswith("<|im_end|>\n")
    assert json.loads(first["metadata"]) == {"site": "x"}
    report = json.loads((cfg.data_dir / "report.json").read_text())
    assert report["tokens"]["max"] >= report["tokens"]["min"] > 0


def test_split_is_deterministic_and_order_independent(tmp_path, make_job):
    cfg = make_job(n_cases=200)
    prepare(cfg, quiet=True)
    first = {f: (cfg.data_dir / f).read_text() for f in ("train.jsonl", "eval.jsonl")}
    ids = {f: {json.loads(x)["id"] for x in t.splitlines()} for f, t in first.items()}
    # reversed input order: same records in the same splits
    lines = cfg.data.train_file.read_text().splitlines()
    cfg.data.train_file.write_text("\n".join(reversed(lines)) + "\n")
    prepare(cfg, quiet=True)
    again = {f: {json.loads(x)["id"] for x in (cfg.data_dir / f).read_text().splitlines()} for f in ids}
    assert again == ids
    n_eval, n = len(ids["eval.jsonl"]), len(ids["eval.jsonl"]) + len(ids["train.jsonl"])
    assert 0.03 < n_eval / n < 0.2
    assert split_bucket("abc", "s") == split_bucket("abc", "s") != split_bucket("abc", "t")


def test_thinking_switch_for_qwen_style_templates(tmp_path, make_job, tiny_model):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    tok.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                         "{% endfor %}{% if enable_thinking is defined and not enable_thinking %}NOTHINK{% endif %}")
    cfg = make_job(n_cases=20)
    rep = prepare(cfg, tokenizer=tok, quiet=True)
    row = json.loads((cfg.data_dir / "train.jsonl").read_text().splitlines()[0])
    assert rep.thinking_switch and row["chat_template_kwargs"] == {"enable_thinking": False}
    assert row["text"].endswith("NOTHINK")


def test_no_usable_records_is_an_error(tmp_path, make_job):
    cases = _write(tmp_path / "c.jsonl", ["{}", "[]"])
    with pytest.raises(FinetuneError, match="no usable records"):
        prepare(make_job(cases=cases), quiet=True)


def test_bad_json_at_the_end_of_a_line_names_that_column(tmp_path, make_job):
    # the newline used to be part of the parsed text, so a missing '}' was reported at "column 1"
    cases = _write(tmp_path / "c.jsonl", [{"input": "Stage IV NSCLC, EGFR. Next?", "target": "Osimertinib."},
                                          '{"input": "broken json"'])
    rep = prepare(make_job(cases=cases), quiet=True)
    assert rep.rejected == [{"line": 2, "reason": "invalid JSON: Expecting ',' delimiter (column 24, the end of "
                                                  "the line)"}]
