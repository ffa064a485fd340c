"""One TOML file per fine-tuning job, validated with pydantic.

Every section and key is documented in ``finetune/configs/tier1.toml``. Unknown keys are errors (a typo must not
silently fall back to a default), and every error names the key, the value given and what is allowed.
Relative paths are resolved against the current working directory.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = ["FinetuneError", "ConfigError", "JobConfig", "load_config", "QUANT_TYPES", "LORA_TARGETS"]

# llama.cpp quantisation types accepted by `export.quantize` (names of LLAMA_FTYPE_MOSTLY_<NAME> in llama_cpp).
QUANT_TYPES = ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q2_K_S", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S",
               "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS", "F16", "BF16")
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"  # job.name becomes part of file names


class FinetuneError(RuntimeError):
    """An error meant for a person (bad input, missing file, missing tool): printed without a traceback."""


class ConfigError(FinetuneError, ValueError):
    pass


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class JobSection(_Section):
    name: str = Field(default="job", pattern=_NAME_PATTERN)
    base_model: Path  # a local Hugging Face folder (config.json, weights, tokenizer); never a hub id
    output_dir: Path  # everything this job writes lives under here


class DataSection(_Section):
    train_file: Path  # case records, JSONL
    eval_fraction: float = Field(default=0.1, ge=0.0, lt=1.0)
    split_salt: str = "oncotui"  # the split is sha256(salt + record hash): deterministic, independent of order
    system_prompt: str = ""  # empty: no system message
    min_input_chars: int = Field(default=1, ge=1)
    min_target_chars: int = Field(default=1, ge=1)


class ModelSection(_Section):
    max_seq_length: int = Field(default=2048, ge=16)
    load_in_4bit: bool = True  # QLoRA; falls back to 16/32-bit LoRA where bitsandbytes/GPU are missing
    quant_type: Literal["nf4", "fp4"] = "nf4"
    double_quant: bool = True
    dtype: Literal["auto", "bf16", "fp16", "fp32"] = "auto"  # auto: bf16 (GPU that supports it), fp16, fp32 on CPU
    enable_thinking: bool = False  # passed to chat templates that know it (Qwen3 style)
    eos_token: str = ""  # empty: "<|im_end|>" when the template is ChatML, else the tokenizer's own EOS
    trust_remote_code: bool = False
    # auto: FlashAttention 2 when flash_attn and a GPU are present, else transformers' default (SDPA); hf backend
    attn_implementation: Literal["auto", "sdpa", "eager", "flash_attention_2", "flash_attention_3"] = "auto"


class LoraSection(_Section):
    r: int = Field(default=16, ge=1)
    alpha: int = Field(default=32, ge=1)
    dropout: float = Field(default=0.05, ge=0.0, lt=1.0)
    target_modules: list[str] = Field(default_factory=lambda: list(LORA_TARGETS), min_length=1)


class TrainSection(_Section):
    backend: Literal["auto", "unsloth", "hf"] = "auto"  # auto: Unsloth if importable and a GPU is present
    per_device_batch_size: int = Field(default=4, ge=1)
    gradient_accumulation_steps: int = Field(default=4, ge=1)
    learning_rate: float = Field(default=2e-4, gt=0.0, le=1.0)
    num_epochs: float = Field(default=3.0, gt=0.0)
    max_steps: int = Field(default=-1, ge=-1)  # > 0 overrides num_epochs
    warmup_ratio: float = Field(default=0.03, ge=0.0, lt=1.0)
    lr_scheduler: Literal["linear", "cosine", "constant", "constant_with_warmup"] = "cosine"
    weight_decay: float = Field(default=0.0, ge=0.0)
    packing: bool = True
    completion_only_loss: bool = True  # loss on the answer only, not on the case text
    gradient_checkpointing: bool = True
    torch_compile: bool = False  # hf backend: compile each decoder layer (finetune.training.compile_decoder_layers)
    # hf backend: how the loss goes through the LM head; neither builds the full-vocabulary logits.
    # trl: TRL's fused head (recomputes each tile in the backward); chunked: finetune.chunked_loss (no recompute)
    lm_head_loss: Literal["trl", "chunked"] = "trl"
    logging_steps: int = Field(default=10, ge=1)
    eval_steps: int = Field(default=50, ge=1)
    save_steps: int = Field(default=50, ge=1)  # rounded up to a multiple of eval_steps (early stopping needs it)
    save_total_limit: int = Field(default=3, ge=1)
    early_stopping_patience: int = Field(default=3, ge=0)  # 0: off
    resume: bool = True  # continue from the newest checkpoint in output_dir/checkpoints
    seed: int = 42


class ExportSection(_Section):
    outtype: Literal["f16", "bf16", "f32", "q8_0"] = "f16"  # what the converter writes
    quantize: list[str] = Field(default_factory=lambda: ["Q4_K_M"])
    lora_gguf: bool = True  # also export the adapter alone (applied at load time with lora_path)
    merge_dtype: Literal["bf16", "fp16", "fp32"] = "fp16"
    dequantize: bool = False  # allow merging onto a pre-quantised (4-bit) base by dequantising it first
    converter_dir: Path | None = None  # default: $ONCOTUI_CONVERTER_DIR or <data dir>/tools/llama.cpp-convert
    threads: int = Field(default=0, ge=0)  # 0: all cores

    @field_validator("quantize")
    @classmethod
    def _known_types(cls, v: list[str]) -> list[str]:
        out = []
        for q in v:
            if q.upper() not in QUANT_TYPES:
                raise ValueError(f"unknown quantisation type {q!r}; allowed: {', '.join(QUANT_TYPES)}")
            out.append(q.upper())
        return out


class VerifySection(_Section):
    prompts: list[str] = Field(default_factory=lambda: [
        "Stage IV NSCLC with an EGFR exon 19 deletion, ECOG 1: first-line options?",
        "Metastatic pancreatic adenocarcinoma, germline BRCA2: what do guidelines describe?",
        "HER2-positive early breast cancer after neoadjuvant therapy with residual disease: next step?",
    ], min_length=1)
    max_new_tokens: int = Field(default=16, ge=1)
    min_top1_agreement: float = Field(default=0.9, ge=0.0, le=1.0)  # for the unquantised (f16/bf16/f32) GGUF
    min_top1_agreement_quantized: float = Field(default=0.6, ge=0.0, le=1.0)
    # the app tokenises with llama.cpp: a GGUF that splits the prompts differently from the HF tokenizer fails
    require_tokenizer_match: bool = True
    n_threads: int = Field(default=0, ge=0)


class JobConfig(_Section):
    job: JobSection
    data: DataSection
    model: ModelSection = ModelSection()
    lora: LoraSection = LoraSection()
    train: TrainSection = TrainSection()
    export: ExportSection = ExportSection()
    verify: VerifySection = VerifySection()
    source: Path | None = None  # the file this was read from (not a TOML key)

    # -- the layout under output_dir ----------------------------------------------------------------------------
    @property
    def out(self) -> Path:
        return self.job.output_dir

    @property
    def data_dir(self) -> Path:
        return self.out / "data"

    @property
    def checkpoints_dir(self) -> Path:
        return self.out / "checkpoints"

    @property
    def adapter_dir(self) -> Path:
        return self.out / "adapter"

    @property
    def merged_dir(self) -> Path:
        return self.out / "merged"

    @property
    def gguf_dir(self) -> Path:
        return self.out / "gguf"

    @property
    def metrics_file(self) -> Path:
        return self.out / "metrics.jsonl"

    @property
    def manifest_file(self) -> Path:
        return self.out / "manifest.json"

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"source"})


# Names people carry over from other trainers (PEFT, TRL, Axolotl) for keys this schema spells differently.
_ALIASES = {"rank": "r", "lora_r": "r", "lora_rank": "r", "lora_alpha": "alpha", "lora_dropout": "dropout",
            "batch_size": "per_device_batch_size", "per_device_train_batch_size": "per_device_batch_size",
            "micro_batch_size": "per_device_batch_size", "grad_accum": "gradient_accumulation_steps",
            "lr": "learning_rate", "epochs": "num_epochs", "num_train_epochs": "num_epochs",
            "lr_scheduler_type": "lr_scheduler", "max_length": "max_seq_length", "seq_len": "max_seq_length",
            "model": "base_model", "model_name": "base_model", "output": "output_dir"}


def _section_model(name: str) -> type[BaseModel] | None:
    field = JobConfig.model_fields.get(name)
    ann = field.annotation if field else None
    return ann if isinstance(ann, type) and issubclass(ann, _Section) else None


def _sections() -> list[str]:
    return [n for n in JobConfig.model_fields if _section_model(n)]


def _suggest(word: str, section: str) -> str:
    """' (did you mean `x`?)' for a misspelt or foreign key, or where the key belongs when it is in another
    section; '' when nothing is close."""
    if not section:  # a misspelt section
        close = difflib.get_close_matches(word, _sections(), n=1, cutoff=0.6)
        return f"; did you mean [{close[0]}]?" if close else f"; the sections are: {', '.join(_sections())}"
    def keys(sec: str) -> dict[str, Any]:
        return dict((_section_model(sec) or _Section).model_fields)

    others = [x for x in _sections() if x != section]
    alias = _ALIASES.get(word, "")
    if alias in keys(section):
        return f"; did you mean `{alias}`?"
    for other in others:  # the right name, or its alias, in the wrong section
        if word in keys(other) or alias in keys(other):
            return f"; did you mean `{alias or word}` in [{other}]?"
    close = difflib.get_close_matches(word, list(keys(section)), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _plain(err: dict[str, Any]) -> str:
    """pydantic's message for a bad value, said plainly (no 'Value error, ', no 'Input should be')."""
    etype, ctx, msg = err.get("type", ""), err.get("ctx") or {}, str(err.get("msg", "invalid"))
    if etype == "literal_error":
        return f"not allowed; allowed: {ctx.get('expected', '')}"
    if etype == "value_error":
        return msg.removeprefix("Value error, ")
    bounds = {"greater_than_equal": ("at least", "ge"), "greater_than": ("greater than", "gt"),
              "less_than_equal": ("at most", "le"), "less_than": ("less than", "lt")}
    if etype in bounds:
        words, key = bounds[etype]
        return f"must be {words} {ctx.get(key)}"
    plain = {"float_parsing": "must be a number", "float_type": "must be a number",
             "int_parsing": "must be a whole number", "int_type": "must be a whole number",
             "int_from_float": "must be a whole number", "bool_parsing": "must be true or false",
             "bool_type": "must be true or false", "string_type": "must be a string (in quotes)",
             "list_type": "must be a list, e.g. [\"a\", \"b\"]", "path_type": "must be a path (a string)",
             "too_short": "must not be empty", "dict_type": "must be a table", "model_type": "must be a table"}
    if etype in plain:
        return plain[etype]
    if etype == "string_pattern_mismatch" and ctx.get("pattern") == _NAME_PATTERN:
        return "letters, digits, '.', '_' and '-' only, starting with a letter or digit"
    return msg.replace("Input should be", "should be")


def _describe(err: dict[str, Any], raw: dict[str, Any]) -> str:
    loc = [str(p) for p in err.get("loc", ())]
    section = loc[0] if loc else ""
    key = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:]).lstrip(".")
    etype = err.get("type", "")
    if len(loc) == 1 and section in JobConfig.model_fields:  # the section itself
        if etype == "missing":
            model = _section_model(section)
            required = [n for n, f in model.model_fields.items() if f.is_required()] if model else []
            return f"[{section}] section is missing" + (f" (it needs {', '.join(required)})" if required else "")
        if etype in ("model_type", "dict_type"):
            return f"{section} = {raw.get(section)!r}: must be a [{section}] section (a table), not a value"
    where = f"[{section}] {key}" if key else (f"[{section}]" if section else "(top level)")
    if etype == "extra_forbidden":
        what = "unknown key" if key else "unknown section"
        return f"{where}: {what}{_suggest(loc[-1], section if key else '')}"
    if etype == "missing":
        return f"{where}: required key is missing"
    value: Any = raw
    for part in loc:
        value = value.get(part) if isinstance(value, dict) else (
            value[int(part)] if isinstance(value, list) and part.isdigit() and int(part) < len(value) else None)
    return f"{where} = {value!r}: {_plain(err)}"


def parse_config(raw: dict[str, Any], source: Path | None = None) -> JobConfig:
    try:
        cfg = JobConfig.model_validate(raw)
    except ValidationError as exc:
        lines = [_describe(e, raw) for e in exc.errors()]  # type: ignore[arg-type]
        where = f" {source}" if source else ""
        raise ConfigError(f"invalid fine-tuning config{where}:\n  " + "\n  ".join(lines)) from None
    cfg.source = source
    return cfg


def load_config(path: str | Path) -> JobConfig:
    p = Path(path).expanduser()
    if p.is_dir():
        raise ConfigError(f"config {p} is a directory; give the job's TOML file (e.g. finetune/configs/tier1.toml)")
    if not p.is_file():
        raise ConfigError(f"config file not found: {p}")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the config {p}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{p}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); TOML files are "
                          "UTF-8: save it as UTF-8") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    return parse_config(raw, p.resolve())
