from __future__ import annotations

from pathlib import Path

import pytest

from finetune.config import ConfigError, load_config, parse_config

REPO = Path(__file__).resolve().parents[2]


def _raw(**over):
    raw = {"job": {"base_model": "/m", "output_dir": "/o"}, "data": {"train_file": "/d.jsonl"}}
    for k, v in over.items():
        raw.setdefault(k, {}).update(v)
    return raw


def test_shipped_tier_configs_match_the_paper():
    t1 = load_config(REPO / "finetune/configs/tier1.toml")
    t2 = load_config(REPO / "finetune/configs/tier2.toml")
    assert (t1.train.per_device_batch_size, t1.train.gradient_accumulation_steps, t1.train.learning_rate,
            t1.lora.r) == (4, 4, 2e-4, 16)
    assert (t2.train.per_device_batch_size, t2.train.gradient_accumulation_steps, t2.train.learning_rate,
            t2.lora.r) == (2, 8, 1e-4, 32)
    for t in (t1, t2):
        assert t.model.load_in_4bit and t.model.quant_type == "nf4" and t.model.max_seq_length == 2048
        assert t.train.packing and t.train.early_stopping_patience == 3
        assert t.lora.target_modules == ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                         "down_proj"]


def test_defaults_and_layout():
    cfg = parse_config(_raw())
    assert cfg.adapter_dir == Path("/o/adapter") and cfg.gguf_dir == Path("/o/gguf")
    assert cfg.export.quantize == ["Q4_K_M"]


@pytest.mark.parametrize("over, needle", [
    ({"train": {"backend": "deepspeed"}}, "[train] backend = 'deepspeed': not allowed; allowed: 'auto', 'unsloth'"),
    ({"train": {"learning_rate": -1}}, "[train] learning_rate = -1"),
    ({"train": {"batch": 4}}, "[train] batch: unknown key"),
    ({"export": {"quantize": ["Q4_K_M", "Q9"]}}, "unknown quantisation type 'Q9'; allowed: Q4_0"),
    ({"data": {"eval_fraction": 1.5}}, "[data] eval_fraction = 1.5"),
    ({"job": {"name": "bad name"}}, "[job] name = 'bad name'"),
])
def test_errors_name_key_value_and_allowed(over, needle):
    with pytest.raises(ConfigError) as exc:
        parse_config(_raw(**over))
    assert needle in str(exc.value)


def test_missing_required_key():
    with pytest.raises(ConfigError, match=r"\[job\] base_model: required key is missing"):
        parse_config({"job": {"output_dir": "/o"}, "data": {"train_file": "x"}})


def test_bad_toml_and_missing_file(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text("[job\nname=", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(p)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")
