"""train: LoRA / QLoRA supervised fine-tuning on the prepared data.

Backends:
  * ``unsloth``: Unsloth ``FastLanguageModel`` (GPU only, its own environment: see finetune/README.md);
  * ``hf``: transformers + PEFT + TRL ``SFTTrainer``; NF4 4-bit through bitsandbytes when a GPU and bitsandbytes
    are present, else 16-bit (GPU) or fp32 (CPU) LoRA.
``train.backend = "auto"`` picks Unsloth when it is importable and a GPU is present, else ``hf``.

Pitfalls handled: the inner tokenizer is passed to TRL, never a processor wrapper; the end-of-turn token of the
chat template (``<|im_end|>`` for ChatML) is the EOS the model learns; ROCm builds that report bf16 unsupported are
probed with a real bf16 matmul. Training resumes from the newest checkpoint under ``<output_dir>/checkpoints``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .config import LORA_TARGETS, FinetuneError, JobConfig

__all__ = ["TrainResult", "choose_backend", "compile_decoder_layers", "load_model", "pick_dtype",
           "resolve_attn_implementation", "train", "trainer_checkpointing_off"]


@dataclass
class TrainResult:
    backend: str
    dtype: str
    quantized_4bit: bool
    device: str
    resumed_from: str | None
    global_step: int
    train_loss: float | None
    best_eval_loss: float | None
    tokens_per_s: float | None
    runtime_s: float
    adapter_dir: str
    loss_png: str | None
    notes: list[str] = field(default_factory=list)
    already_complete: bool = False  # nothing was trained: the checkpoints already reach the configured end

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def choose_backend(cfg: JobConfig) -> tuple[str, str]:
    """(backend, reason)."""
    want = cfg.train.backend
    gpu = _has_gpu()
    has_unsloth = importlib.util.find_spec("unsloth") is not None
    if want == "unsloth":
        if not gpu:
            raise FinetuneError("train.backend = 'unsloth' needs a GPU, and none is visible; use 'hf' or 'auto'")
        if not has_unsloth:
            raise FinetuneError("train.backend = 'unsloth' but unsloth is not installed in this environment; "
                                "see finetune/README.md (Unsloth on a GPU machine), or use 'hf' / 'auto'")
        return "unsloth", "requested"
    if want == "hf":
        return "hf", "requested"
    if gpu and has_unsloth:
        return "unsloth", "auto: GPU present and unsloth importable"
    return "hf", "auto: " + ("unsloth not installed" if gpu else "no GPU")


def pick_dtype(cfg: JobConfig) -> tuple[Any, list[str]]:
    import torch

    notes: list[str] = []
    names = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    if not torch.cuda.is_available():
        if cfg.model.dtype in ("auto", "fp16"):
            if cfg.model.dtype == "fp16":
                notes.append("fp16 training is not supported on the CPU: using fp32")
            return torch.float32, notes
        return names[cfg.model.dtype], notes
    if cfg.model.dtype != "auto":
        return names[cfg.model.dtype], notes
    if torch.cuda.is_bf16_supported():
        return torch.bfloat16, notes
    if getattr(torch.version, "hip", None):
        # ROCm builds have reported bf16 unsupported on GPUs that run it fine (MI200/MI300): try it.
        try:
            a = torch.ones(8, 8, dtype=torch.bfloat16, device="cuda")
            ok = bool(torch.isfinite((a @ a).float()).all())
        except Exception:  # noqa: BLE001
            ok = False
        if ok:
            notes.append("ROCm reported bf16 unsupported but a bf16 matmul works: using bf16")
            return torch.bfloat16, notes
    notes.append("bf16 unsupported on this GPU: using fp16")
    return torch.float16, notes


def _load_split(path: Path, with_kwargs: bool) -> Any:
    from datasets import Dataset

    rows = []
    if path.is_file():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise FinetuneError(f"cannot read the prepared data {path} ({exc}); run `oncotui finetune prepare "
                                "--config ...` again") from None
        for lineno, line in enumerate(lines, 1):
            if line.strip():
                try:
                    r = json.loads(line)
                    row = {"prompt": r["prompt"], "completion": r["completion"]}
                except (ValueError, KeyError, TypeError) as exc:  # edited or cut off since prepare wrote it
                    raise FinetuneError(f"the prepared data {path} is damaged at line {lineno} "
                                        f"({type(exc).__name__}: {exc}); run `oncotui finetune prepare --config "
                                        "...` again") from None
                if with_kwargs and "chat_template_kwargs" in r:
                    row["chat_template_kwargs"] = r["chat_template_kwargs"]
                rows.append(row)
    return Dataset.from_list(rows) if rows else None


def _lora_targets(model: Any, wanted: list[str], notes: list[str]) -> list[str]:
    """The lora.target_modules this model has. A name that matches nothing is an error (a typo must not train
    fewer modules than asked), except the standard projections (LORA_TARGETS), which some architectures lack."""
    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    missing = [t for t in wanted if t not in names]
    unknown = [t for t in missing if t not in LORA_TARGETS]
    if unknown or len(missing) == len(wanted):
        linear = sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if type(m).__name__ == "Linear"})
        raise FinetuneError(f"lora.target_modules: {', '.join(map(repr, unknown or missing))} "
                            f"match{'es' if len(unknown or missing) == 1 else ''} no module in this model; its "
                            f"linear layers are: {', '.join(linear)}")
    if missing:
        notes.append(f"LoRA targets not in this model, skipped: {', '.join(missing)}")
    return [t for t in wanted if t in names]


def resolve_attn_implementation(choice: str, gpu: bool) -> str | None:
    """``model.attn_implementation``: 'auto' is FlashAttention 2 where the flash_attn package and a GPU are present
    (it also keeps packed sequences apart without a mask), else None: transformers' default (SDPA where the model
    supports it)."""
    if choice != "auto":
        return choice
    if gpu and importlib.util.find_spec("flash_attn") is not None:
        return "flash_attention_2"
    return None


def _enable_checkpointing(model: Any) -> None:
    # Non-reentrant: works with frozen inputs and nested checkpoints. transformers 5.x renamed the method.
    kwargs = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def compile_decoder_layers(model: Any) -> int:
    """Regional torch.compile (``train.torch_compile``): each decoder layer is compiled in place. The layers share
    one compiled graph (same code, parameters passed as inputs), so this takes seconds where a whole-model compile
    takes minutes, and it fuses the elementwise work between the matmuls (norms, rotary, SiLU x up, LoRA adds).
    Returns how many layers were compiled."""
    layers = [m for m in model.modules() if type(m).__name__.endswith("DecoderLayer")]
    for layer in layers:
        layer.compile()
    return len(layers)


def _load_hf(cfg: JobConfig, dtype: Any, gpu: bool, notes: list[str]) -> tuple[Any, Any, bool]:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from .tokenizer import load_tokenizer

    tok, tnotes = load_tokenizer(cfg.job.base_model, cfg.model.trust_remote_code)
    notes.extend(tnotes)
    quant = None
    if cfg.model.load_in_4bit:
        if not gpu:
            notes.append("model.load_in_4bit: no GPU, so 4-bit is off (LoRA on fp32 weights on the CPU)")
        elif importlib.util.find_spec("bitsandbytes") is None:
            notes.append("model.load_in_4bit: bitsandbytes is not installed, so 4-bit is off (16-bit LoRA)")
        else:
            from transformers import BitsAndBytesConfig

            quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=cfg.model.quant_type,
                                       bnb_4bit_use_double_quant=cfg.model.double_quant,
                                       bnb_4bit_compute_dtype=dtype)
    kwargs: dict[str, Any] = {"dtype": dtype, "local_files_only": True,
                              "trust_remote_code": cfg.model.trust_remote_code}
    attn = resolve_attn_implementation(cfg.model.attn_implementation, gpu)
    if attn:
        kwargs["attn_implementation"] = attn
    if quant is not None:
        kwargs["quantization_config"] = quant
    if gpu:
        kwargs["device_map"] = {"": 0}
    try:
        model = AutoModelForCausalLM.from_pretrained(str(cfg.job.base_model), **kwargs)
    except Exception as exc:  # noqa: BLE001
        raise FinetuneError(f"cannot load the base model from {cfg.job.base_model}: {exc}") from None
    ckpt = cfg.train.gradient_checkpointing
    if quant is not None:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=ckpt,
                                                gradient_checkpointing_kwargs={"use_reentrant": False})
    elif ckpt:
        _enable_checkpointing(model)
    if ckpt:
        model.enable_input_require_grads()  # the frozen embeddings' output must carry grad into checkpointed layers
    targets = _lora_targets(model, cfg.lora.target_modules, notes)
    model = get_peft_model(model, LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                                             target_modules=targets, bias="none", task_type="CAUSAL_LM"))
    if cfg.train.torch_compile:
        notes.append(f"train.torch_compile: {compile_decoder_layers(model)} decoder layers compiled")
    return model, tok, quant is not None


def _load_unsloth(cfg: JobConfig, dtype: Any, notes: list[str]) -> tuple[Any, Any, bool]:
    from unsloth import FastLanguageModel  # must come before transformers/trl are imported

    from .tokenizer import CHATML_TEMPLATE, inner_tokenizer

    model, tok = FastLanguageModel.from_pretrained(
        model_name=str(cfg.job.base_model), max_seq_length=cfg.model.max_seq_length, dtype=dtype,
        load_in_4bit=cfg.model.load_in_4bit, local_files_only=True, trust_remote_code=cfg.model.trust_remote_code)
    tok = inner_tokenizer(tok)  # Unsloth may hand back a processor for multimodal bases
    if not getattr(tok, "chat_template", None):
        tok.chat_template = CHATML_TEMPLATE
        notes.append("the base model has no chat template: using ChatML")
    targets = _lora_targets(model, cfg.lora.target_modules, notes)
    model = FastLanguageModel.get_peft_model(
        model, r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout, target_modules=targets,
        bias="none", use_gradient_checkpointing="unsloth" if cfg.train.gradient_checkpointing else False,
        random_state=cfg.train.seed, max_seq_length=cfg.model.max_seq_length)
    ignored = [k for k, on in (("model.attn_implementation", cfg.model.attn_implementation != "auto"),
                               ("train.torch_compile", cfg.train.torch_compile),
                               ("train.lm_head_loss", cfg.train.lm_head_loss != "trl")) if on]
    if ignored:
        notes.append(f"backend unsloth uses its own kernels: {', '.join(ignored)} ignored")
    return model, tok, cfg.model.load_in_4bit


def trainer_checkpointing_off(config_cls: Any) -> dict[str, bool]:
    """load_model sets checkpointing on the model (both backends), so the Trainer must not set it again, and TRL's
    SFTConfig defaults it ON. transformers 5.x renamed gradient_checkpointing -> activation_checkpointing (the new
    name wins when both are given); pass the one this version has."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(config_cls)}
    return {("activation" if "activation_checkpointing" in names else "gradient") + "_checkpointing": False}


def load_model(cfg: JobConfig, backend: str, dtype: Any, gpu: bool, notes: list[str]) -> tuple[Any, Any, bool]:
    """The model ready for training: loaded, checkpointing set, LoRA attached (and compiled when asked).
    One home for the trainer and bench/finetune_throughput.py. Returns (PEFT model, tokenizer, quantized_4bit)."""
    from .progress import quiet_hf

    with quiet_hf():  # the bench calls this directly: the same quiet loading as train
        if backend == "unsloth":
            return _load_unsloth(cfg, dtype, notes)
        return _load_hf(cfg, dtype, gpu, notes)


def _use_chunked_loss(model: Any) -> str:
    """``train.lm_head_loss = "chunked"``: replace the fused LM head SFTTrainer installed (trl >= 1.15) with
    finetune.chunked_loss, which computes the head's input gradient in the forward instead of recomputing."""
    from trl.trainer import utils as trl_utils

    from .chunked_loss import add_chunked_lm_head, supports_chunked

    if not hasattr(trl_utils, "add_fused_lm_head"):  # older trl: compute_loss never asks for fused_lm_head
        return "train.lm_head_loss = 'chunked': this trl has no fused LM head to replace; its default loss is used"
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    why = supports_chunked(base)
    if why:
        return f"train.lm_head_loss = 'chunked' does not apply ({why}); TRL's fused LM head is used"
    add_chunked_lm_head(base)
    return "train.lm_head_loss: chunked cross-entropy (finetune.chunked_loss)"


def _checkpoints(cfg: JobConfig) -> list[Path]:
    """checkpoint-N folders, newest (highest N) first."""
    if not cfg.checkpoints_dir.is_dir():
        return []
    found = [p for p in cfg.checkpoints_dir.glob("checkpoint-*") if p.is_dir() and p.name[11:].isdigit()]
    return sorted(found, key=lambda p: int(p.name[11:]), reverse=True)


def _last_checkpoint(cfg: JobConfig) -> tuple[str | None, dict[str, Any], list[Path]]:
    """The newest complete checkpoint, its trainer_state.json, and the newer incomplete ones. The Trainer
    writes trainer_state.json last, so a checkpoint without a readable one was cut off while being saved."""
    partial: list[Path] = []
    for ckpt in _checkpoints(cfg):
        try:
            state = json.loads((ckpt / "trainer_state.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            partial.append(ckpt)
            continue
        if isinstance(state, dict):
            return str(ckpt), state, partial
        partial.append(ckpt)
    return None, {}, partial


RUN_FILE = "run.json"  # in checkpoints/: what the checkpoints were trained with (data, settings)


def _setup(cfg: JobConfig) -> dict[str, Any]:
    """What a checkpoint depends on: resuming with any of these changed would continue another training run.
    max_steps / num_epochs may change (train longer); logging, saving and speed settings do not count. The
    batch counts as per_device_batch_size x gradient_accumulation_steps: a smaller micro-batch may resume."""
    from .jobdir import data_sha256

    t, m, lo = cfg.train, cfg.model, cfg.lora
    base_cfg = cfg.job.base_model / "config.json"
    return {
        "data": data_sha256(cfg),
        "job.base_model": hashlib.sha256(base_cfg.read_bytes()).hexdigest() if base_cfg.is_file() else "",
        "lora.r": lo.r, "lora.alpha": lo.alpha, "lora.dropout": lo.dropout,
        "lora.target_modules": sorted(lo.target_modules),
        "model.max_seq_length": m.max_seq_length, "model.eos_token": m.eos_token,
        "train.per_device_batch_size x gradient_accumulation_steps": t.per_device_batch_size
        * t.gradient_accumulation_steps,
        "train.learning_rate": t.learning_rate, "train.lr_scheduler": t.lr_scheduler,
        "train.warmup_ratio": t.warmup_ratio, "train.weight_decay": t.weight_decay,
        "train.packing": t.packing, "train.completion_only_loss": t.completion_only_loss,
    }


def _setup_changes(cfg: JobConfig, last: str) -> list[str]:
    """How this config and the prepared data differ from what the checkpoints were made with ([]: none)."""
    now = _setup(cfg)
    try:
        then = json.loads((cfg.checkpoints_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        then = None
    if not isinstance(then, dict):
        # checkpoints from before run.json: only their LoRA shape is known (file times cannot tell whether
        # prepare wrote the same records again)
        then = {}
        try:
            ac = json.loads((Path(last) / "adapter_config.json").read_text(encoding="utf-8"))
            then = {"lora.r": ac["r"], "lora.alpha": ac["lora_alpha"], "lora.dropout": ac["lora_dropout"]}
        except (OSError, ValueError, KeyError, TypeError):
            pass
    changes = []
    for key, value in now.items():
        if key not in then or then[key] == value:
            continue
        if key == "data":
            changes.append(f"the prepared data in {cfg.data_dir} (prepare ran again on other records)")
        elif key == "job.base_model":
            changes.append("job.base_model (its config.json differs)")
        else:
            changes.append(f"{key} {then[key]!r} -> {value!r}")
    return changes


def _refuse_changed_setup(cfg: JobConfig, last: str, changes: list[str]) -> FinetuneError:
    kinds = [w for w, pre in (("another LoRA config", "lora."), ("other prepared data", "the prepared data"),
                              ("another base model", "job.base_model"), ("other training settings", "train."),
                              ("other model settings", "model.")) if any(c.startswith(pre) for c in changes)]
    return FinetuneError(
        f"the checkpoints in {cfg.checkpoints_dir} (newest {Path(last).name}) were made with "
        f"{' and '.join(kinds) or 'other settings'}; changed since: {'; '.join(changes)}. Resuming would "
        "continue another training run: rerun with --restart to train from step 0 (this removes the "
        "checkpoints and the adapter, merged model and GGUFs made from them), or put the settings back")


def _complete(cfg: JobConfig, state: dict[str, Any]) -> str | None:
    """Why the newest checkpoint already finishes this job (None: there is training left). The trainer checks its
    limit only after a step, so resuming a finished run would train one step past it."""
    t = cfg.train
    step = int(state.get("global_step", 0) or 0)
    if step <= 0:
        return None
    if t.max_steps > 0 and step >= t.max_steps:
        return f"step {step} of train.max_steps = {t.max_steps}"
    if t.max_steps <= 0 and float(state.get("epoch", 0) or 0) + 1e-6 >= t.num_epochs:
        return f"all train.num_epochs = {t.num_epochs:g} done (step {step})"
    summary = _read_summary(cfg)
    # the last run ended here for another reason (early stopping) and the config asks for no more than it did
    if summary and summary.get("global_step", -1) >= step and (summary.get("max_steps"), summary.get(
            "num_epochs")) == (t.max_steps, t.num_epochs):
        return f"stopped early at step {summary['global_step']} (eval_loss stopped improving)"
    return None


def _read_summary(cfg: JobConfig) -> dict[str, Any]:
    try:
        return dict(json.loads((cfg.out / "train_summary.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _already_complete(cfg: JobConfig, reason: str, console: Any) -> TrainResult:
    from .jobdir import adapter_weights, safetensors_problem

    weights = adapter_weights(cfg)
    if not (cfg.adapter_dir / "adapter_config.json").is_file() or weights is None:
        raise FinetuneError(f"training in {cfg.out} reached its end ({reason}) but no adapter was saved to "
                            f"{cfg.adapter_dir}; rerun with --restart (or set train.resume = false) to train "
                            "again from the start")
    problem = safetensors_problem(weights) if weights.suffix == ".safetensors" else None
    if problem:
        raise FinetuneError(f"training in {cfg.out} reached its end ({reason}) but the adapter {weights} is "
                            f"damaged ({problem}); rerun with --restart to train again from the start")
    console.print(f"training is already complete in {cfg.out} ({reason}); nothing to train. The adapter is in "
                  f"{cfg.adapter_dir}. To train longer raise train.max_steps or train.num_epochs and rerun; to "
                  f"start over rerun with --restart (or set train.resume = false).")
    fields = {f for f in TrainResult.__dataclass_fields__}
    summary = {k: v for k, v in _read_summary(cfg).items() if k in fields}
    result = TrainResult(**{"backend": "", "dtype": "", "quantized_4bit": False, "device": "", "resumed_from": None,
                            "global_step": 0, "train_loss": None, "best_eval_loss": None, "tokens_per_s": None,
                            "runtime_s": 0.0, "adapter_dir": str(cfg.adapter_dir), "loss_png": None} | summary)
    result.already_complete = True
    result.notes = [*result.notes, f"already complete: {reason}"]
    return result


def _clear_previous_run(cfg: JobConfig, console: Any) -> None:
    """Training from step 0: what the previous run produced goes first, so that an interrupted run cannot
    leave an old adapter (or a model merged from it) for merge, export-gguf and verify to pick up."""
    removed = []
    for p in (cfg.adapter_dir, cfg.merged_dir, cfg.gguf_dir, cfg.manifest_file, cfg.out / "loss.png",
              cfg.out / "train_summary.json", cfg.metrics_file):
        if p.is_dir():
            shutil.rmtree(p)
            removed.append(p.name + "/")
        elif p.exists():
            p.unlink()
            removed.append(p.name)
    shown = [r for r in removed if r in ("adapter/", "merged/", "gguf/", "manifest.json")]
    if shown:
        console.print(f"training from step 0: removed the previous run's {', '.join(shown)} from {cfg.out}")


def train(cfg: JobConfig, *, console: Any = None, show_progress: bool = True,
          restart: bool = False) -> TrainResult:
    """Train (or resume). ``restart``: the --restart flag, the same as train.resume = false for this run."""
    from rich.console import Console

    from .jobdir import job_lock, writable_dir

    console = console or Console(stderr=True, highlight=False)
    train_file = cfg.data_dir / "train.jsonl"
    if not train_file.is_file():
        raise FinetuneError(f"no prepared data at {train_file}: run `oncotui finetune prepare --config ...` first")
    backend = choose_backend(cfg)
    if backend[0] == "unsloth":
        # Unsloth patches transformers, TRL and PEFT as it is imported, so it must come before any of them:
        # quiet_hf and the data loading below import transformers and datasets
        import unsloth  # noqa: F401
    with job_lock(cfg, "train"):
        writable_dir(cfg.checkpoints_dir, "the checkpoints folder")
        return _train_locked(cfg, backend, console, show_progress, restart)


def _train_locked(cfg: JobConfig, backend: tuple[str, str], console: Any, show_progress: bool,
                  restart: bool) -> TrainResult:
    from .progress import quiet_hf

    last: str | None = None
    if cfg.train.resume and not restart:
        last, state, partial = _last_checkpoint(cfg)
        for p in partial:  # a run stopped while saving it; the next save would reuse its name
            shutil.rmtree(p)
            using = f", using {Path(last).name}" if last else ""
            console.print(f"skipped the incomplete checkpoint {p.name} (no readable trainer_state.json: the "
                          f"run stopped while saving it); removed it{using}")
        if last:
            changes = _setup_changes(cfg, last)
            if changes:
                raise _refuse_changed_setup(cfg, last, changes)
            if reason := _complete(cfg, state):
                return _already_complete(cfg, reason, console)
    elif cfg.checkpoints_dir.is_dir() and any(_checkpoints(cfg)):
        # starting over: old checkpoints would otherwise be picked up by the next resume
        shutil.rmtree(cfg.checkpoints_dir)
        why = "--restart" if restart else "train.resume = false"
        console.print(f"{why}: starting over (removed {cfg.checkpoints_dir})")
    if last is None:
        _clear_previous_run(cfg, console)
        cfg.checkpoints_dir.mkdir(parents=True, exist_ok=True)
        (cfg.checkpoints_dir / RUN_FILE).write_text(json.dumps(_setup(cfg), indent=2), encoding="utf-8")
    (cfg.out / "train_summary.json").unlink(missing_ok=True)  # rewritten when this run ends
    with quiet_hf():
        return _train(cfg, backend, last, console, show_progress)


def _train(cfg: JobConfig, chosen: tuple[str, str], last: str | None, console: Any, show_progress: bool
           ) -> TrainResult:
    train_file, eval_file = cfg.data_dir / "train.jsonl", cfg.data_dir / "eval.jsonl"
    backend, why = chosen  # choose_backend, once: train imports Unsloth by it before anything else
    notes: list[str] = [f"backend {backend} ({why})"]
    dtype, dnotes = pick_dtype(cfg)
    notes.extend(dnotes)
    # the data first: a damaged or empty file must not wait for the model to load (minutes for a 7B base)
    train_ds = _load_split(train_file, with_kwargs=True)
    eval_ds = _load_split(eval_file, with_kwargs=True)
    if train_ds is None:
        raise FinetuneError(f"{train_file} is empty: nothing to train on")
    gpu = _has_gpu()
    model, tok, q4 = load_model(cfg, backend, dtype, gpu, notes)
    for n in notes[1:]:  # what loading decided (4-bit off, targets skipped) matters before the hours of training
        console.print(f"  [dim]note: {n}[/dim]")
    shown = len(notes)

    import torch
    from transformers import EarlyStoppingCallback, PrinterCallback, ProgressCallback
    from trl import SFTConfig, SFTTrainer

    from .jobdir import data_sha256
    from .progress import make_progress_callback, plot_loss, read_metrics, sparkline
    from .tokenizer import chat_eos

    t = cfg.train
    use_eval = eval_ds is not None
    early = use_eval and t.early_stopping_patience > 0
    if not use_eval:
        notes.append("no eval records: evaluation and early stopping are off")
    save_steps = t.save_steps
    if use_eval and save_steps % t.eval_steps:
        save_steps = (save_steps // t.eval_steps + 1) * t.eval_steps
        notes.append(f"train.save_steps rounded up to {save_steps} (a multiple of eval_steps)")
    eos = chat_eos(tok, cfg.model.eos_token)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    args = SFTConfig(
        output_dir=str(cfg.checkpoints_dir), per_device_train_batch_size=t.per_device_batch_size,
        per_device_eval_batch_size=t.per_device_batch_size, gradient_accumulation_steps=t.gradient_accumulation_steps,
        learning_rate=t.learning_rate, num_train_epochs=t.num_epochs, max_steps=t.max_steps,
        warmup_steps=t.warmup_ratio, lr_scheduler_type=t.lr_scheduler, weight_decay=t.weight_decay,
        logging_steps=t.logging_steps, logging_first_step=True,
        eval_strategy="steps" if use_eval else "no", eval_steps=t.eval_steps if use_eval else None,
        save_strategy="steps", save_steps=save_steps, save_total_limit=t.save_total_limit,
        load_best_model_at_end=early, metric_for_best_model="eval_loss" if early else None,
        greater_is_better=False if early else None,
        bf16=gpu and dtype == torch.bfloat16,
        fp16=gpu and dtype == torch.float16, use_cpu=not gpu,
        report_to="none", disable_tqdm=True, seed=t.seed, data_seed=t.seed,
        max_length=cfg.model.max_seq_length, packing=t.packing, completion_only_loss=t.completion_only_loss,
        eos_token=eos, include_num_input_tokens_seen=True, dataloader_num_workers=0,
        **trainer_checkpointing_off(SFTConfig),
    )
    callbacks: list[Any] = [make_progress_callback(cfg.metrics_file, console, show_progress)]
    if early:
        callbacks.append(EarlyStoppingCallback(early_stopping_patience=t.early_stopping_patience))
    trainer = SFTTrainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds,
                         processing_class=tok, callbacks=callbacks)
    if backend == "hf" and t.lm_head_loss == "chunked":
        notes.append(_use_chunked_loss(trainer.model))
    for cb in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(cb)
    if last:
        console.print(f"resuming from {last}")
    elif cfg.metrics_file.exists():
        cfg.metrics_file.unlink()  # a fresh run: do not mix curves
    t0 = time.monotonic()
    try:
        out = trainer.train(resume_from_checkpoint=last)
    except RuntimeError as exc:  # a checkpoint that run.json could not vouch for (made before it existed)
        if not last or "state_dict" not in str(exc):
            raise
        lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
        detail = next((x for x in lines if "size mismatch" in x), lines[0])[:200]
        raise FinetuneError(f"cannot resume from {last}: it was made with another LoRA config or model "
                            f"({detail}); rerun with --restart to train from step 0") from None
    runtime = time.monotonic() - t0

    cfg.adapter_dir.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(cfg.adapter_dir))  # the adapter only (PEFT)
    tok.save_pretrained(str(cfg.adapter_dir))  # with the chat template and EOS actually trained on
    metrics = read_metrics(cfg.metrics_file)
    losses = [float(r["loss"]) for r in metrics if "loss" in r]
    evals = [float(r["eval_loss"]) for r in metrics if "eval_loss" in r]
    tps = [float(r["tokens_per_s"]) for r in metrics if r.get("tokens_per_s")]
    png = cfg.out / "loss.png"
    skipped = plot_loss(metrics, png)
    if skipped:
        notes.append(f"loss.png skipped: {skipped}")
    result = TrainResult(
        backend=backend, dtype=str(dtype).removeprefix("torch."), quantized_4bit=q4,
        device="cuda" if gpu else "cpu", resumed_from=last, global_step=int(trainer.state.global_step),
        train_loss=float(out.training_loss) if out.training_loss is not None else None,
        best_eval_loss=min(evals) if evals else None, tokens_per_s=tps[-1] if tps else None,
        runtime_s=round(runtime, 2), adapter_dir=str(cfg.adapter_dir), loss_png=None if skipped else str(png),
        notes=notes)
    # the target this run trained to: a rerun with the same target is complete (see _complete)
    # and the data it trained on: merge, export-gguf and verify refuse an adapter older than the prepared data
    summary = result.to_json() | {"max_steps": t.max_steps, "num_epochs": t.num_epochs,
                                  "data_sha256": data_sha256(cfg)}
    (cfg.out / "train_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if losses:
        console.print(f"loss {losses[0]:.3f} {sparkline(losses)} {losses[-1]:.3f}")
    if evals:
        console.print(f"eval {evals[0]:.3f} {sparkline(evals)} {evals[-1]:.3f}")
    for n in notes[:1] + notes[shown:]:
        console.print(f"  [dim]note: {n}[/dim]")
    console.print(f"adapter saved to {cfg.adapter_dir}" + (f"; loss curve {png}" if not skipped else ""))
    return result
