from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from engine.config import REPO_CONFIG, ConfigError, Settings, load_settings


def test_config_toml_equals_the_built_in_defaults():
    from_file = Settings.model_validate(tomllib.loads(REPO_CONFIG.read_text()))
    assert from_file.model_dump(exclude={"source"}) == Settings().model_dump(exclude={"source"})


def test_every_key_in_config_toml_has_a_comment():
    lines = REPO_CONFIG.read_text().splitlines()
    comments = " ".join(line for line in lines if line.lstrip().startswith("#"))
    for i, line in enumerate(lines):
        if "=" in line and not line.lstrip().startswith("#") and not line.startswith("["):
            key = line.split("=")[0].strip()
            commented_above = any(w.lstrip().startswith("#") for w in lines[max(0, i - 3):i])
            assert commented_above or key in comments, f"undocumented key: {key}"


def test_invalid_value_names_key_value_and_allowed(tmp_path: Path):
    bad = tmp_path / "c.toml"
    bad.write_text('[rag]\ngrader = "vibes"\n[engine]\nmax_retries = 7\n')
    with pytest.raises(ConfigError) as exc:
        load_settings(bad, environ={})
    msg = str(exc.value)
    assert "rag.grader = 'vibes'" in msg and "cross_encoder" in msg
    assert "engine.max_retries = 7" in msg and "less than or equal to 2" in msg


def test_unknown_key_and_missing_profile_are_rejected(tmp_path: Path):
    bad = tmp_path / "c.toml"
    bad.write_text('[kb]\nrecal_k = 3\n')
    with pytest.raises(ConfigError, match="kb.recal_k"):
        load_settings(bad, environ={})
    with pytest.raises(ConfigError, match="models.tier2 = 'nope' names no profile"):
        load_settings(None, environ={"ONCOTUI_MODELS__TIER2": "nope"})


def test_environment_overrides_and_data_dir(tmp_path: Path):
    s = load_settings(None, environ={"ONCOTUI_ENGINE__HITL_CONFIDENCE_FLOOR": "0.45",
                                     "ONCOTUI_PATHS__DATA_DIR": str(tmp_path), "ONCOTUI_KB__COLLECTION": "demo_kb"})
    assert s.engine.hitl_confidence_floor == 0.45 and s.kb.collection == "demo_kb"
    assert s.db_path == tmp_path / "oncotui.db" and s.chroma_dir == tmp_path / "chroma"
    assert "ONCOTUI_ENGINE__HITL_CONFIDENCE_FLOOR" in s.source


def test_missing_config_file_is_a_clear_error():
    with pytest.raises(ConfigError, match="not found"):
        load_settings("/nonexistent/oncotui.toml", environ={})


def test_retrieval_defaults_match_the_settings_so_callers_without_settings_retrieve_as_a_consult_does():
    from engine.kbfactory import retrieval_params
    from kb.store import RetrievalParams

    assert retrieval_params(Settings()) == RetrievalParams()


@pytest.mark.parametrize("value", ["nan", "-5.0", "inf", "11"])
def test_a_router_weight_that_would_switch_the_reviewer_gate_off_is_refused(value: str):
    # a NaN or negative weight scored a Tier 2 case below the threshold, released without a reviewer
    with pytest.raises(ConfigError) as exc:
        load_settings(None, environ={"ONCOTUI_ROUTER__WEIGHTS__STAGE_IV": value})
    assert "router.weights" in str(exc.value) and "0 to 10" in str(exc.value)


@pytest.mark.parametrize("value", ["nan", "-inf", "inf"])
def test_the_relevance_floor_must_be_a_finite_logit(value: str):
    # NaN made every passage irrelevant (every consult refused), -inf every passage relevant (grading off)
    with pytest.raises(ConfigError) as exc:
        load_settings(None, environ={"ONCOTUI_RAG__RELEVANCE_MIN_SCORE": value})
    assert "rag.relevance_min_score" in str(exc.value)


def test_an_empty_data_dir_variable_is_refused_not_read_as_the_default():
    # a script's unset $DIR put a patient's consult into the default data folder
    with pytest.raises(ConfigError, match="ONCOTUI_PATHS__DATA_DIR is set but empty"):
        load_settings(None, environ={"ONCOTUI_PATHS__DATA_DIR": ""})
