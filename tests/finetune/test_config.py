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
    ({"data": {"eval_fraction": 1.5}}, "[data] eval_fraction = 1.5: must be less than 1.0"),
    ({"job": {"name": "bad name"}}, "[job] name = 'bad name': letters, digits"),
    # plain wording, not pydantic's ("Input should be a valid number", "Value error, ...")
    ({"train": {"learning_rate": "fast"}}, "[train] learning_rate = 'fast': must be a number"),
    ({"lora": {"r": 0}}, "[lora] r = 0: must be at least 1"),
    ({"train": {"packing": 3}}, "[train] packing = 3: must be true or false"),
    ({"lora": {"target_modules": []}}, "[lora] target_modules = []: must not be empty"),
    ({"export": {"quantize": ["Q4_K_M", 3]}}, "[export] quantize[1] = 3: must be a string"),
    ({"export": {"quantize": ["Q4_K_X"]}}, "[export] quantize = ['Q4_K_X']: unknown quantisation type 'Q4_K_X'"),
    # unknown keys: the likely intended name
    ({"lora": {"rank": 16}}, "[lora] rank: unknown key; did you mean `r`?"),
    ({"train": {"batch_size": 4}}, "[train] batch_size: unknown key; did you mean `per_device_batch_size`?"),
    ({"train": {"learning_rte": 1e-4}}, "did you mean `learning_rate`?"),
    ({"train": {"max_seq_length": 512}}, "[train] max_seq_length: unknown key; did you mean `max_seq_length` in "
                                         "[model]?"),
    ({"trainer": {"x": 1}}, "[trainer]: unknown section; did you mean [train]?"),
])
def test_errors_name_key_value_and_allowed(over, needle):
    with pytest.raises(ConfigError) as exc:
        parse_config(_raw(**over))
    assert needle in str(exc.value)


def test_no_pydantic_wording_leaks():
    with pytest.raises(ConfigError) as exc:
        parse_config(_raw(train={"learning_rate": "x", "max_steps": "y"}, export={"quantize": ["Q9"]}))
    assert "Input should" not in str(exc.value) and "Value error" not in str(exc.value)


def test_missing_section_is_named_as_a_section():
    with pytest.raises(ConfigError) as exc:
        parse_config({"data": {"train_file": "x"}})
    assert "[job] section is missing (it needs base_model, output_dir)" in str(exc.value)
    with pytest.raises(ConfigError, match=r"job = 3: must be a \[job\] section"):
        parse_config({"job": 3, "data": {"train_file": "x"}})


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
