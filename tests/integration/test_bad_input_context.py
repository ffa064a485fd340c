"""A case note too long for the model's context window ends in a refusal that says so, names the setting
(`models.profiles.NAME.n_ctx` in config.toml) and asks for a shorter case; it said "An internal step failed
(specialist: ModelError: ... prompt is too long ...)"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.models.base import ModelError
from engine.nodes.fallback import too_long
from tests.fakes import FakeModel, collect, make_engine

CASE = "Pancreatic adenocarcinoma, ECOG 1, what are the first-line options? " + "Prior history unremarkable. " * 400
# what engine/models/llama_cpp.py raises when llama.cpp refuses the prompt
LLAMA = ("Model 'smollm2': the prompt is too long for its context window (models.profiles.smollm2.n_ctx = 4096): "
         "Requested tokens (5321) exceed context window of 4096")


class TooLong(FakeModel):
    def stream(self, messages, params) -> Iterator[str]:
        raise ModelError(LLAMA)
        yield ""  # pragma: no cover - a generator, as the real streams are


def test_a_case_too_long_for_the_context_window_says_so_and_names_the_setting(tmp_path):
    engine, _, _ = make_engine(tmp_path, model=TooLong())
    events = collect(lambda: engine.stream("PT-0001", CASE))
    final = next(e for e in events if e.kind == "Final")
    assert final.status == "refused"
    assert "Reason: The case text is too long for the model's context window (`models.profiles.smollm2.n_ctx` = " \
           "4096 tokens in config.toml): shorten it" in final.report
    assert "internal step failed" not in final.report


@pytest.mark.parametrize(("error", "setting"), [
    ("specialist: ModelError: " + LLAMA, "`models.profiles.smollm2.n_ctx` = 4096 tokens"),
    ("specialist: ModelError: Model 'big': the prompt (9000 tokens) is too long for models.profiles.big.n_ctx = 8192",
     "`models.profiles.big.n_ctx` = 8192 tokens"),  # engine/models/transformers_bf16.py
    ("specialist: ModelError: Model 'srv': http://h/v1 answered HTTP 400: This model's maximum context length is "
     "4096 tokens", "the tier's `n_ctx` in config.toml"),  # an OpenAI-compatible server
])
def test_each_backends_words_are_recognised(error, setting):
    reason = too_long(error)
    assert reason is not None and setting in reason and "shorten it" in reason


def test_other_errors_are_left_as_they_are():
    assert too_long("specialist: RuntimeError: kaboom") is None
    assert too_long("specialist: ModelError: Model 'smollm2' did not finish within 120 s") is None
