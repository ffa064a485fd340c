"""One TOML file per fine-tuning job, validated with pydantic.

Every section and key is documented in ``finetune/configs/tier1.toml``. Unknown keys are errors (a typo must not
silently fall back to a default), and every error names the key, the value given and what is allowed.
Relative paths are resolved against the current working directory.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = ["FinetuneError", "ConfigError", "JobConfig", "load_config", "QUANT_TYPES", "LORA_TARGETS"]

# llama.cpp quantisation types accepted by `export.quantize` (names of LLAMA_FTYPE_MOSTLY_<NAME> in llama_cpp).
QUANT_TYPES = ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q2_K_S", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S",
               "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS", "F16", "BF16")
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class FinetuneError(RuntimeError):
    """An error meant for a person (bad input, missing file, missing tool): printed without a traceback."""


class ConfigError(FinetuneError, ValueError):
    pass


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class JobSection(_Section):
    name: str = Field(default="job", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
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


def _describe(err: dict[str, Any], raw: dict[str, Any]) -> str:
    loc = [str(p) for p in err.get("loc", ())]
    section, key = (loc[0], ".".join(loc[1:])) if len(loc) > 1 else ("", ".".join(loc))
    where = f"[{section}] {key}" if section else key or "(top level)"
    etype = err.get("type", "")
    if etype == "extra_forbidden":
        return f"{where}: unknown key (check the spelling; see finetune/configs/tier1.toml)"
    if etype == "missing":
        return f"{where}: required key is missing"
    value: Any = raw
    for part in loc:
        value = value.get(part) if isinstance(value, dict) else (
            value[int(part)] if isinstance(value, list) and part.isdigit() and int(part) < len(value) else None)
    msg = err.get("msg", "invalid")
    if etype == "literal_error":
        allowed = err.get("ctx", {}).get("expected", "")
        msg = f"not allowed; allowed: {allowed}"
    return f"{where} = {value!r}: {msg}"


def parse_config(raw: dict[str, Any], source: Path | None = None) -> JobConfig:
    try:
        cfg = JobConfig.model_validate(raw)
    except ValidationError as exc:
        lines = [_describe(e, raw) for e in exc.errors()]  # type: ignore[arg-type]
        raise ConfigError(f"invalid fine-tuning config {source or ''}:\n  " + "\n  ".join(lines)) from None
    cfg.source = source
    return cfg


def load_config(path: str | Path) -> JobConfig:
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"config file not found: {p}")
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    return parse_config(raw, p.resolve())
