"""A real consult on the embedded defaults: real redactor, Chroma, embeddings, cross-encoder and GGUF model.

SmolLM2 serves both tiers here to keep the run short; whatever the tiny model writes, the consult must end in a
released/reviewed answer that passed the critic, a HITL halt, or a safe refusal: never an unchecked answer.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from engine.config import Settings
from engine.graph import Engine

CASE = ("62-year-old man, Mr. Peter Novak, MRN 99812345, with metastatic pancreatic adenocarcinoma, KRAS G12D, "
        "germline BRCA2 mutation, ECOG 1, untreated. What first-line systemic options do the guidelines describe?")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from kb.store import DEMO_DIR

    data = tmp_path_factory.mktemp("consult")
    settings = Settings().with_overrides({"paths.data_dir": str(data), "models.tier2": "smollm2"})
    eng = Engine(settings)
    report = eng.kb().ingest([DEMO_DIR], chunk_chars=settings.kb.chunk_chars)
    assert report.chunks_added > 0 and not report.errors
    return eng


def run(engine: Engine, pid: str, text: str) -> list:
    async def go() -> list:
        return [e async for e in engine.stream(pid, text)]

    return asyncio.run(go())


def test_real_consult_on_embedded_defaults(engine):
    events = run(engine, "PT-0001", CASE)
    kinds = [e.kind for e in events]
    assert kinds[0] == "NodeStarted"
    evidence = [e for e in events if e.kind == "EvidenceReady"][0]
    assert evidence.gate_passed and evidence.passages
    assert "Pancreatic" in evidence.passages[0].title
    assert "Token" in kinds  # the real model streamed
    verdicts = [e for e in events if e.kind == "CriticChecked"]
    assert 1 <= len(verdicts) <= 3
    state = engine.store.latest("PT-0001").state
    # a draft that still failed the critic after the retries reaches the governor, which blocks the failing claims
    unchecked = [c for c in (state.ledger.claims if state.ledger else ()) if c.state != "blocked" and c.rule_issues]
    assert not unchecked
    if "HitlRequired" in kinds:  # Tier 2 case: halts for review, nothing final shown
        assert "Final" not in kinds and state.ledger is not None
    else:
        final = [e for e in events if e.kind == "Final"][0]
        assert final.status == "refused" or verdicts[-1].passed or state.ledger is not None
    assert state.evidence_locked  # the embedded tiers only select retrieved sentences (grammar-constrained ids)
    if state.draft is not None and state.ledger is not None:
        quotes = {c.text for c in state.ledger.claims}
        assert all(any(q in p.text for p in state.retrieval.passages) for q in quotes)  # verbatim
    # the identifiers never reached the model's context or the database
    dumped = json.dumps([e.to_json() for e in events], default=str)
    assert "Novak" not in dumped and "99812345" not in dumped
    state = engine.store.latest("PT-0001").state
    assert "Novak" not in json.dumps(state.to_dict())


def test_out_of_domain_question_is_refused_at_the_gate(engine):
    events = run(engine, "PT-0002", "How is a torn anterior cruciate ligament of the knee repaired in athletes?")
    evidence = [e for e in events if e.kind == "EvidenceReady"][0]
    assert not evidence.gate_passed and evidence.closest_distance is not None
    final = [e for e in events if e.kind == "Final"][0]
    assert final.status == "refused" and "Token" not in [e.kind for e in events]
