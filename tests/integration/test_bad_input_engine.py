"""Case text with lone surrogates ("\\ud800": a bad copy, or undecodable bytes handed over by Python) is refused by
the engine itself with EngineError before anything is stored; the store used to fail with UnicodeEncodeError after
the consult row existed, leaving a consult that never ran."""

from __future__ import annotations

import pytest

from engine.graph import EngineError
from tests.fakes import collect, make_engine


@pytest.mark.parametrize(("text", "at"), [("Stage IV NSCLC \ud800 options?", 16),
                                          ("\udce9 pancreatic adenocarcinoma", 1)])
def test_case_text_with_a_lone_surrogate_is_refused_before_anything_is_stored(tmp_path, text, at):
    engine, _, _ = make_engine(tmp_path)
    with pytest.raises(EngineError) as e:
        collect(lambda: engine.stream("PT-0001", text))
    assert "not valid text" in str(e.value) and "nothing was stored" in str(e.value)
    assert f"at character {at}," in str(e.value)
    str(e.value).encode("utf-8")  # the message itself can be shown and logged
    assert engine.store.consults("PT-0001") == []
    # the same patient's next, valid note runs as usual
    events = collect(lambda: engine.stream("PT-0001", "Pancreatic adenocarcinoma, what are the first-line options?"))
    assert events and len(engine.store.consults("PT-0001")) == 1
