"""transformers backend for a local Hugging Face model folder (bf16 on GPU, float32 on CPU unless asked).

No constrained decoding here: with ``params.json_schema`` the model is told to answer with JSON only, and the
engine's critic validates what comes back. ``torch``/``transformers`` are imported only when a model loads.

:func:`gguf_to_hf` turns a GGUF file into such a folder (needs the ``gguf`` and ``accelerate`` packages), so a
benchmark can compare llama.cpp and transformers on the very same weights.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.config import ModelProfile
from engine.models.base import GenerationParams, Message, ModelError

_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                 "pytorch_model.bin.index.json")


def _key(name: str, field: str) -> str:
    return f"models.profiles.{name}.{field}"


def _offline() -> None:
    # Air-gapped: never let transformers / huggingface_hub try the network.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def check_hf_folder(path: Path, key: str) -> None:
    if not str(path).strip() or str(path) == ".":
        raise ModelError(f"{key}: is empty; set it to a Hugging Face model folder")
    if not path.exists():
        raise ModelError(f"{key}: folder not found: {path}")
    if path.is_file():
        with open(path, "rb") as fh:
            is_gguf = fh.read(4) == b"GGUF"
        extra = (" (a GGUF file: use backend = 'llama_cpp', or convert it with "
                 "engine.models.transformers_bf16.gguf_to_hf)") if is_gguf else ""
        raise ModelError(f"{key}: {path} is a file, not a Hugging Face model folder{extra}")
    if not (path / "config.json").is_file():
        raise ModelError(f"{key}: {path} is not a Hugging Face model folder (no config.json)")
    if not any((path / f).is_file() for f in _WEIGHT_FILES):
        raise ModelError(f"{key}: {path} has no weights ({' / '.join(_WEIGHT_FILES[::2])})")
    if not any((path / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")):
        raise ModelError(f"{key}: {path} has no tokenizer (tokenizer.json / tokenizer_config.json)")


def json_instruction(schema: dict[str, Any]) -> str:
    return ("Respond with a single JSON object only: no prose, no code fences. It must match this JSON schema:\n"
            + json.dumps(schema, separators=(",", ":")))


def with_json_instruction(messages: list[Message], schema: dict[str, Any] | None) -> list[Message]:
    if schema is None:
        return list(messages)
    text = json_instruction(schema)
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content', '')}\n\n{text}".strip()
    else:
        out.insert(0, {"role": "system", "content": text})
    return out


class TransformersModel:
    """A ChatModel over a local HF folder. ``device``: "cuda", "cpu" or None (CUDA when available).

    ``cpu_dtype``: "float32" (default; bf16 matmuls are slow on most CPUs) or "bfloat16".
    """

    def __init__(self, name: str, profile: ModelProfile, model_path: Path | str, *, label: str = "",
                 device: str | None = None, cpu_dtype: str = "float32") -> None:
        self.name = name
        self.label = label or profile.label or name
        self.profile = profile
        self.model_path = Path(model_path)
        self.device_pref = device
        self.cpu_dtype = cpu_dtype
        self.device = "cpu"
        self._model: Any = None
        self._tok: Any = None
        self._lock = threading.Lock()

    def load(self) -> TransformersModel:
        with self._lock:
            self._ensure_loaded()
        return self

    def _ensure_loaded(self) -> tuple[Any, Any]:
        if self._model is not None:
            return self._model, self._tok
        key = _key(self.name, "path")
        check_hf_folder(self.model_path, key)
        _offline()
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise ModelError(f"{_key(self.name, 'backend')} = 'transformers' but torch/transformers are not "
                             f"installed ({exc})") from None
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bars on the TUI's terminal
        hf_logging.set_verbosity_error()
        device = self.device_pref or ("cuda" if torch.cuda.is_available() else "cpu")
        if device.startswith("cuda"):
            dtype = torch.bfloat16
        else:
            dtype = torch.bfloat16 if self.cpu_dtype in ("bfloat16", "bf16") else torch.float32
            if self.profile.n_threads:
                torch.set_num_threads(self.profile.n_threads)
        try:
            tok = AutoTokenizer.from_pretrained(str(self.model_path), local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(self.model_path), local_files_only=True, dtype=dtype)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ModelError(f"{key}: transformers could not load {self.model_path}: {exc}") from None
        if self.profile.lora_path.strip():
            model = self._apply_lora(model)
        model.to(device)
        model.eval()
        if tok.pad_token_id is None and tok.eos_token_id is not None:
            tok.pad_token = tok.eos_token
        self._model, self._tok, self.device = model, tok, device
        return model, tok

    def _apply_lora(self, model: Any) -> Any:
        key = _key(self.name, "lora_path")
        lp = Path(self.profile.lora_path).expanduser()
        if not lp.exists():
            raise ModelError(f"{key}: not found: {lp}")
        try:
            from peft import PeftModel
        except ImportError:
            raise ModelError(f"{key} is set but the 'peft' package is not installed (pip install oncotui[finetune])") from None
        try:
            return PeftModel.from_pretrained(model, str(lp), local_files_only=True)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ModelError(f"{key}: could not load the adapter {lp}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self._model = self._tok = None

    # -- generation --------------------------------------------------------------------------------------------
    def _inputs(self, tok: Any, messages: list[Message], params: GenerationParams) -> Any:
        msgs = with_json_instruction(messages, params.json_schema)
        if getattr(tok, "chat_template", None):
            enc = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
        else:  # a base model without a template: a plain transcript
            text = "".join(f"{m['role']}: {m['content']}\n" for m in msgs) + "assistant:"
            enc = tok(text, return_tensors="pt")
        n = enc["input_ids"].shape[-1]
        if n >= self.profile.n_ctx:
            raise ModelError(f"Model '{self.name}': the prompt ({n} tokens) is too long for "
                             f"{_key(self.name, 'n_ctx')} = {self.profile.n_ctx}")
        return enc.to(self.device)

    def _gen_kwargs(self, tok: Any, enc: Any, params: GenerationParams) -> dict[str, Any]:
        room = self.profile.n_ctx - enc["input_ids"].shape[-1]
        kw: dict[str, Any] = {
            **enc,
            "max_new_tokens": max(1, min(params.max_tokens, self.profile.max_tokens, room)),
            "pad_token_id": tok.pad_token_id,
        }
        if params.temperature > 0:
            kw.update(do_sample=True, temperature=params.temperature, top_p=0.95)
            if params.seed is not None:  # as llama.cpp's per-request seed: the same prompt, the same answer
                import torch

                torch.manual_seed(params.seed)
        else:
            kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if params.stop:
            kw.update(stop_strings=list(params.stop), tokenizer=tok)
        return kw

    @staticmethod
    def _cut_stop(text: str, stop: tuple[str, ...]) -> str:
        for s in stop:
            i = text.find(s)
            if i >= 0:
                text = text[:i]
        return text

    def generate(self, messages: list[Message], params: GenerationParams) -> str:
        import torch

        with self._lock:
            model, tok = self._ensure_loaded()
            enc = self._inputs(tok, messages, params)
            try:
                with torch.inference_mode():
                    out = model.generate(**self._gen_kwargs(tok, enc, params))
            except (RuntimeError, ValueError) as exc:
                raise ModelError(f"Model '{self.name}' failed: {exc}") from None
            text = tok.decode(out[0, enc["input_ids"].shape[-1]:], skip_special_tokens=True)
        return self._cut_stop(text, params.stop)

    def stream(self, messages: list[Message], params: GenerationParams) -> Iterator[str]:
        import torch
        from transformers import TextIteratorStreamer

        with self._lock:
            model, tok = self._ensure_loaded()
            enc = self._inputs(tok, messages, params)
            streamer = TextIteratorStreamer(tok, skip_prompt=True, skip_special_tokens=True,
                                            timeout=self.profile.timeout_s)
            failure: list[BaseException] = []
            stop_flag = threading.Event()

            from transformers import StoppingCriteria, StoppingCriteriaList

            class _Cancel(StoppingCriteria):
                def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> bool:  # noqa: ARG002
                    return stop_flag.is_set()

            kwargs = self._gen_kwargs(tok, enc, params)
            kwargs.update(streamer=streamer, stopping_criteria=StoppingCriteriaList([_Cancel()]))

            def work() -> None:
                try:
                    with torch.inference_mode():
                        model.generate(**kwargs)
                except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer thread
                    failure.append(exc)
                    streamer.end()

            worker = threading.Thread(target=work, name=f"generate-{self.name}", daemon=True)
            worker.start()
            emitted = ""
            try:
                for piece in streamer:
                    if not piece:
                        continue
                    if params.stop:
                        candidate = emitted + piece
                        cut = self._cut_stop(candidate, params.stop)
                        if cut != candidate:
                            if len(cut) > len(emitted):
                                yield cut[len(emitted):]
                            break
                    emitted += piece
                    yield piece
            except queue.Empty:  # the streamer waited timeout_s for a token
                if failure:
                    raise ModelError(f"Model '{self.name}' failed: {failure[0]}") from None
                raise ModelError(f"Model '{self.name}': no token within {self.profile.timeout_s:g} s "
                                 f"({_key(self.name, 'timeout_s')})") from None
            finally:
                stop_flag.set()
                worker.join()
            if failure:
                raise ModelError(f"Model '{self.name}' failed: {failure[0]}")


def gguf_to_hf(gguf_path: Path | str, out_dir: Path | str, *, dtype: str = "bfloat16") -> Path:
    """Dequantise a GGUF file into a Hugging Face folder that :class:`TransformersModel` can load.

    ``from_pretrained(..., gguf_file=...)`` dequantises but leaves a model that ``save_pretrained`` refuses
    (it is marked as gguf-quantized), so a fresh model is built from the loaded config, the state dict is copied
    into it, and that model is saved with the tokenizer (chat template included). Needs ``gguf`` and
    ``accelerate`` (pip install gguf accelerate). Returns ``out_dir``.
    """
    gguf_path = Path(gguf_path).expanduser().resolve()
    out = Path(out_dir).expanduser()
    if not gguf_path.is_file():
        raise ModelError(f"gguf_to_hf: file not found: {gguf_path}")
    with open(gguf_path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ModelError(f"gguf_to_hf: {gguf_path} is not a GGUF file")
    _offline()
    missing = [m for m in ("gguf", "accelerate") if importlib.util.find_spec(m) is None]
    if missing:
        raise ModelError(f"gguf_to_hf needs the package(s) {', '.join(missing)}: pip install {' '.join(missing)}")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    target_dtype = {"bfloat16": torch.bfloat16, "bf16": torch.bfloat16, "float16": torch.float16,
                    "float32": torch.float32}[dtype]
    folder, name = str(gguf_path.parent), gguf_path.name
    try:
        tok = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
        loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, local_files_only=True,
                                                      dtype=torch.float32)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise ModelError(f"gguf_to_hf: transformers could not read {gguf_path}: {exc}") from None

    cfg_dict = loaded.config.to_dict()
    cfg_dict.pop("quantization_config", None)
    cfg_dict.pop("_name_or_path", None)
    model_type = cfg_dict.pop("model_type")
    config = AutoConfig.for_model(model_type, **cfg_dict)
    config.dtype = target_dtype
    fresh = AutoModelForCausalLM.from_config(config, dtype=target_dtype)
    state = {k: v.to(target_dtype) for k, v in loaded.state_dict().items()}
    result = fresh.load_state_dict(state, strict=False)
    real_missing = [k for k in result.missing_keys if not (config.tie_word_embeddings and k == "lm_head.weight")]
    if real_missing or result.unexpected_keys:
        raise ModelError(f"gguf_to_hf: weights do not fit the config: missing {real_missing[:5]}, "
                         f"unexpected {result.unexpected_keys[:5]}")
    if config.tie_word_embeddings:
        fresh.tie_weights()
    if loaded.generation_config is not None:
        fresh.generation_config = loaded.generation_config
    out.mkdir(parents=True, exist_ok=True)
    fresh.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return out
