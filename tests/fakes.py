"""Fakes for unit tests only: a scripted chat model and an in-memory knowledge base.

The product path always uses the real backends and the real Chroma KB; these let the engine's control flow be
tested fast and deterministically.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from engine.models.base import GenerationParams, Message
from engine.models.manager import LoadedModel
from kb.store import Hit, RetrievalResult

PANCREAS_PASSAGE = ("For metastatic pancreatic adenocarcinoma with good performance status, FOLFIRINOX or "
                    "gemcitabine plus nab-paclitaxel are first-line options. Olaparib maintenance is an option "
                    "for germline BRCA mutations after platinum-based chemotherapy without progression.")
BREAST_PASSAGE = ("Early hormone receptor-positive breast cancer is treated with surgery followed by adjuvant "
                  "endocrine therapy such as tamoxifen or an aromatase inhibitor.")

GOOD_DRAFT = json.dumps({
    "assessment": "Metastatic pancreatic adenocarcinoma with a germline BRCA2 mutation and good performance status.",
    "recommendations": [{"text": "FOLFIRINOX or gemcitabine plus nab-paclitaxel are first-line options for "
                                 "metastatic pancreatic adenocarcinoma with good performance status.",
                         "evidence": ["E1"]}],
    "caveats": ["Confirm performance status before choosing a regimen."],
    "missing_information": ["Liver function"],
})
BAD_DRAFT = "Sure! The patient should always receive 500 mg of wonderdrugumab."


@dataclass
class FakeModel:
    """Replays scripted outputs; records every prompt it sees."""

    outputs: list[str] = field(default_factory=lambda: [GOOD_DRAFT])
    name: str = "fake"
    label: str = "fake model (tests)"
    delay_s: float = 0.0
    block: threading.Event | None = None  # when set, stream waits here (for crash tests)
    prompts: list[list[Message]] = field(default_factory=list)
    calls: int = 0

    def generate(self, messages: list[Message], params: GenerationParams) -> str:
        return "".join(self.stream(messages, params))

    def stream(self, messages: list[Message], params: GenerationParams) -> Iterator[str]:
        self.prompts.append(messages)
        text = self.outputs[min(self.calls, len(self.outputs) - 1)]
        self.calls += 1
        if self.block is not None:
            self.block.wait()
        for i in range(0, len(text), 16):
            if self.delay_s:
                time.sleep(self.delay_s)
            yield text[i:i + 16]


class FakeModels:
    def __init__(self, model: FakeModel, profile: str = "smollm2") -> None:
        self.model = model
        self.profile = profile

    def get(self, tier: int) -> LoadedModel:
        return LoadedModel(self.model, self.profile, tier)


class FakeKB:
    """Keyword 'retrieval' over two passages; anything else is out of domain."""

    def __init__(self, rerank_score: float = 4.0) -> None:
        self.rerank_score = rerank_score
        self.queries: list[str] = []
        self.docs = [Hit("c1", PANCREAS_PASSAGE, "Pancreatic Cancer (Demo)", "pancreatic.md",
                             "## Treatment > ### Metastatic", None, 0.31, rerank_score),
                     Hit("c2", BREAST_PASSAGE, "Breast Cancer (Demo)", "breast.md", "## Treatment", None,
                             0.35, rerank_score)]

    def retrieve(self, query: str, params: object, anchor: str | None = None) -> RetrievalResult:
        self.queries.append(query)
        q = query.lower()
        hits = tuple(h for h in self.docs if h.title.split()[0].lower()[:6] in q)
        closest = hits[0] if hits else Hit("c9", "Unrelated.", "Melanoma (Demo)", "melanoma.md", "## X",
                                                None, 0.93, None)
        return RetrievalResult(query, hits, bool(hits), closest, len(self.docs), len(hits), {})

    def rerank_scores(self, query: str, texts: list[str]) -> list[float]:
        return [self.rerank_score for _ in texts]


def make_engine(tmp_path, model: FakeModel | None = None, kb: FakeKB | None = None,
                overrides: dict | None = None, nodes: dict | None = None) -> tuple[object, FakeModel, FakeKB]:
    from engine.config import Settings
    from engine.graph import Engine

    # The scripted drafts are free text: evidence-locked mode (the default for the embedded tiers) is opted into
    # by the tests that exercise it (tests/unit/test_ledger.py).
    settings = Settings().with_overrides({"paths.data_dir": str(tmp_path), "engine.evidence_locked": "off",
                                          **(overrides or {})})
    model = model or FakeModel()
    kb = kb or FakeKB()
    return Engine(settings, models=FakeModels(model), kb=kb, nodes=nodes), model, kb


def collect(agen_factory: Callable[[], object]) -> list:
    import asyncio

    async def run() -> list:
        return [e async for e in agen_factory()]  # type: ignore[attr-defined]

    return asyncio.run(run())


def crash_child(data_dir: str, text: str) -> None:
    """Subprocess body for the crash test: the Specialist blocks forever, so the parent can kill us mid-consult."""
    import asyncio
    from pathlib import Path

    engine, _, _ = make_engine(Path(data_dir), model=FakeModel(block=threading.Event()))

    async def run() -> None:
        async for _ in engine.stream("PT-0001", text):
            pass

    asyncio.run(run())


if __name__ == "__main__":
    import sys

    crash_child(sys.argv[1], sys.argv[2])
