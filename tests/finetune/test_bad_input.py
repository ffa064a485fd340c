"""finetune stages given broken input: a config or case file that is not UTF-8 or is a folder, a base model folder
without a model in it. One line naming the key or the line, exit 2, never a traceback; a bad record is a rejected
record, and the rest of the file is prepared."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from finetune.cli import run
from finetune.config import ConfigError, FinetuneError, load_config
from finetune.dataprep import prepare


def _args(stage: str, config: Path) -> argparse.Namespace:
    return argparse.Namespace(finetune_command=stage, job_config=str(config), json=False, no_progress=True,
                              restart=False)


def test_config_that_is_not_utf8(tmp_path, capsys):
    bad = tmp_path / "job.toml"
    bad.write_bytes('[job]\nname = "tier1"\n# r\xe9sum\xe9\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"not UTF-8.*line 3"):
        load_config(bad)
    for stage in ("prepare", "train", "merge", "export-gguf", "verify"):
        assert run(_args(stage, bad)) == 2
        err = capsys.readouterr().err
        assert "not UTF-8" in err and "Traceback" not in err


def test_config_that_is_a_folder(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)


def test_a_case_line_that_is_not_utf8_is_rejected_and_the_rest_prepared(tmp_path, make_job):
    good = {"input": "Stage IV NSCLC, EGFR exon 19 deletion, ECOG 1. Next?", "target": "Osimertinib is described."}
    other = {"input": "Stage II colorectal cancer after resection, MSI-high. Adjuvant?", "target": "Observation."}
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(json.dumps(good).encode() + b"\n"
                      + '{"input": "Melanome de stade III, r\xe9s\xe9qu\xe9. Options?", "target": "x"}\n'.encode("latin-1")
                      + json.dumps(other).encode() + b"\n")
    cfg = make_job(cases=cases, data={"min_input_chars": 5})
    rep = prepare(cfg, quiet=True)
    assert rep.records_read == 3 and rep.accepted == 2
    assert [r["line"] for r in rep.rejected] == [2]
    assert "not UTF-8" in rep.rejected[0]["reason"] and "0xe9" in rep.rejected[0]["reason"]


def test_a_case_file_that_is_a_folder(tmp_path, make_job):
    folder = tmp_path / "cases.jsonl"
    folder.mkdir()
    cfg = make_job(cases=folder)
    with pytest.raises(FinetuneError, match="data.train_file .* is a directory"):
        prepare(cfg, quiet=True)


def test_a_base_model_folder_without_a_model_names_the_key(tmp_path, make_job):
    cfg = make_job()
    empty = tmp_path / "empty-model"
    empty.mkdir()
    cfg = cfg.model_copy(update={"job": cfg.job.model_copy(update={"base_model": empty})})
    with pytest.raises(FinetuneError) as exc:
        prepare(cfg, quiet=True)
    msg = str(exc.value)
    assert "job.base_model" in msg and str(empty) in msg and "config.json" in msg
    assert "slow tokenizer" not in msg  # not transformers' wall of text


def test_damaged_prepared_data_is_named_before_the_model_loads(tmp_path, make_job, monkeypatch):
    import finetune.training as training

    cfg = make_job()
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    row = {"prompt": [{"role": "user", "content": "Stage IV NSCLC?"}],
           "completion": [{"role": "assistant", "content": "Osimertinib."}]}
    (cfg.data_dir / "train.jsonl").write_text(json.dumps(row) + "\n" + '{"prompt": [{"role"\n', encoding="utf-8")

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the data was read")

    monkeypatch.setattr(training, "load_model", no_model)
    with pytest.raises(FinetuneError) as exc:
        training.train(cfg, show_progress=False)
    msg = str(exc.value)
    assert "train.jsonl" in msg and "line 2" in msg and "finetune prepare" in msg


def _with_base(cfg, base: Path):
    return cfg.model_copy(update={"job": cfg.job.model_copy(update={"base_model": base})})


def test_merge_onto_a_base_folder_with_a_damaged_config_or_no_weights(tmp_path, make_job):
    from finetune.merging import merge

    cfg = make_job()
    cfg.adapter_dir.mkdir(parents=True, exist_ok=True)
    (cfg.adapter_dir / "adapter_config.json").write_text("{}", encoding="utf-8")
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "config.json").write_text('{"model_type": "llama", ', encoding="utf-8")  # cut off
    with pytest.raises(FinetuneError, match=r"job.base_model .*config.json .*not valid JSON"):
        merge(_with_base(cfg, damaged))
    no_weights = tmp_path / "no-weights"
    no_weights.mkdir()
    (no_weights / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    with pytest.raises(FinetuneError) as exc:
        merge(_with_base(cfg, no_weights))
    assert "job.base_model" in str(exc.value) and str(no_weights) in str(exc.value)


def test_verify_with_a_damaged_merged_folder_says_to_merge_again(make_job):
    from finetune.verification import verify

    cfg = make_job()
    cfg.merged_dir.mkdir(parents=True, exist_ok=True)
    (cfg.merged_dir / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")  # no weights
    cfg.gguf_dir.mkdir(parents=True, exist_ok=True)
    (cfg.gguf_dir / f"{cfg.job.name}-f16.gguf").write_bytes(b"GGUF")
    with pytest.raises(FinetuneError, match=r"(?s)cannot load the merged model .*finetune merge"):
        verify(cfg, write=False)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_an_empty_case_file_says_so_before_the_tokenizer_loads(tmp_path, make_job, monkeypatch, content):
    import finetune.tokenizer as tokenizer

    cases = tmp_path / "empty.jsonl"
    cases.write_bytes(content)
    cfg = make_job(cases=cases)

    def no_tokenizer(*args, **kwargs):
        raise AssertionError("the tokenizer was loaded for an empty file")

    monkeypatch.setattr(tokenizer, "load_tokenizer", no_tokenizer)
    with pytest.raises(FinetuneError, match=r"data.train_file .* is empty"):
        prepare(cfg, quiet=True)
