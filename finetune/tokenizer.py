"""Tokenizer helpers shared by prepare, train and verify: the inner tokenizer, ChatML, thinking off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .config import FinetuneError

# A plain ChatML template (what Qwen2.5 and SmolLM2 use), for base models that ship none.
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>'"
    " + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


# A Hugging Face folder has at least one of these (fast tokenizer, SentencePiece model, BPE vocabulary).
TOKENIZER_FILES = frozenset({"tokenizer.json", "tokenizer.model", "vocab.json", "tokenizer_config.json"})


def inner_tokenizer(obj: Any) -> Any:
    """A processor (VLM/Unsloth wrapper) holds the real tokenizer in ``.tokenizer``; TRL and the collator need
    the inner one (a wrapper makes SFTTrainer treat text as images or drop the chat template)."""
    inner = getattr(obj, "tokenizer", None)
    if inner is not None and hasattr(inner, "convert_tokens_to_ids"):
        if getattr(inner, "chat_template", None) is None and getattr(obj, "chat_template", None):
            inner.chat_template = obj.chat_template
        return inner
    return obj


def load_tokenizer(path: Path, trust_remote_code: bool = False) -> tuple[Any, list[str]]:
    """The model's tokenizer (inner one), with ChatML set if it has no chat template. Returns (tokenizer, notes)."""
    from transformers import AutoTokenizer

    notes: list[str] = []
    if not Path(path).is_dir():
        raise FinetuneError(f"base model folder not found: {path} (job.base_model must be a local HF folder)")
    found = {p.name for p in Path(path).iterdir()}
    if "config.json" not in found or not found & TOKENIZER_FILES:
        missing = ", ".join(["config.json"] * ("config.json" not in found)
                            + ["a tokenizer (" + " or ".join(sorted(TOKENIZER_FILES)) + ")"]
                            * (not found & TOKENIZER_FILES))
        raise FinetuneError(f"job.base_model = {path} is not a Hugging Face model folder: it has no {missing}; "
                            "point it at the folder holding the model's config.json, weights and tokenizer")
    try:
        tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=trust_remote_code)
    except Exception as exc:  # noqa: BLE001 - transformers raises many types here
        raise FinetuneError(f"cannot load the tokenizer from {path}: {exc}") from None
    tok = inner_tokenizer(tok)
    if not getattr(tok, "chat_template", None):
        tok.chat_template = CHATML_TEMPLATE
        notes.append("the base model has no chat template: using ChatML")
    if "<|im_start|>" in tok.chat_template and tok.convert_tokens_to_ids("<|im_start|>") in (None, tok.unk_token_id):
        notes.append("the ChatML markers are not single tokens in this vocabulary (they are learnt as text)")
    return tok, notes


def supports_thinking_switch(tok: Any) -> bool:
    return "enable_thinking" in (getattr(tok, "chat_template", None) or "")


def template_kwargs(tok: Any, enable_thinking: bool) -> dict[str, Any]:
    return {"enable_thinking": enable_thinking} if supports_thinking_switch(tok) else {}


def chat_eos(tok: Any, configured: str = "") -> str | None:
    """The token that ends an assistant turn. For ChatML that is <|im_end|>, not the tokenizer's EOS (often
    <|endoftext|>): training on the wrong one gives a model that never stops."""
    if configured:
        return configured
    template = getattr(tok, "chat_template", None) or ""
    if "<|im_end|>" in template and "<|im_end|>" in tok.get_vocab():
        return "<|im_end|>"
    return tok.eos_token


def render(tok: Any, messages: list[dict[str, str]], *, add_generation_prompt: bool, enable_thinking: bool) -> str:
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt,
                                   **template_kwargs(tok, enable_thinking))


def count_tokens(tok: Any, text: str) -> int:
    return len(tok(text, add_special_tokens=False)["input_ids"])


def keep_sentencepiece_files(base: Path, out: Path) -> list[str]:
    """Make a saved tokenizer folder readable by llama.cpp's converter as the SentencePiece vocabulary it is.

    transformers 5 saves only tokenizer.json: no tokenizer.model, no ``added_tokens_decoder`` in
    tokenizer_config.json. For a Llama-style (SentencePiece) base the converter then falls back to placeholder
    merge scores, so the GGUF splits words differently from training, and, given tokenizer.model, it needs
    ``added_tokens_decoder`` to keep the chat markers (<|im_start|>) single tokens. The vocabulary never changes in
    fine-tuning, so the base's tokenizer.model is the right one. Returns what was restored (for a note)."""
    import json
    import shutil

    done: list[str] = []
    spm = Path(base) / "tokenizer.model"
    if not spm.is_file():
        return done  # a byte-level BPE (Qwen, SmolLM2): tokenizer.json is all the converter reads
    if not (out / "tokenizer.model").is_file():
        shutil.copy2(spm, out / "tokenizer.model")
        done.append("tokenizer.model")
    cfg_file, tok_file = out / "tokenizer_config.json", out / "tokenizer.json"
    if cfg_file.is_file() and tok_file.is_file():
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        if "added_tokens_decoder" not in cfg:
            added = json.loads(tok_file.read_text(encoding="utf-8")).get("added_tokens", [])
            keys = ("content", "lstrip", "normalized", "rstrip", "single_word", "special")
            cfg["added_tokens_decoder"] = {str(t["id"]): {k: t[k] for k in keys if k in t} for t in added}
            cfg_file.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            done.append("added_tokens_decoder")
    return done
