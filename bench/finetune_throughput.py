"""Benchmark: LoRA training tokens/s of our fine-tuning paths on Qwen2.5-shaped models with random weights (issue #6).

Steady state: warm-up steps first, then real optimizer steps on the LoRA parameters (AdamW, gradient clipping as
the Trainer does), on micro-batches of random token ids, seq 2048 by default. No download: each shape's model folder
is written here (config, one tensor, a tiny tokenizer) and finetune.training.load_model loads it as the trainer
would; transformers initialises the missing weights randomly (speed does not depend on their values).

Paths:
  hf          our trainer's path as it is: load_model (transformers + PEFT, LoRA r16 on q/k/v/o/gate/up/down,
              gradient checkpointing), bf16 autocast (the Trainer's bf16=True), TRL's fused LM head (what SFTTrainer
              installs), fused AdamW (the Trainer's default optimiser), the baseline's micro-batch (8 / 4).
  hf-fast     the same load_model with the levers on, each one a flag: no gradient checkpointing (--fast-ckpt puts
              it back; it also comes back by itself when nothing fits), the largest micro-batch that fits
              (--fast-micro-batch), the attention kernel (--fast-attn), chunked cross-entropy with the gradient
              computed in the forward (--fast-loss), expandable CUDA segments (--no-fast-expandable-segments).
  hf-compile  hf-fast plus regional torch.compile (train.torch_compile), at hf-fast's micro-batch.
  unsloth     load_model with backend unsloth (FastLanguageModel, its checkpointing, its own loss); recorded as
              skipped, with the import error, when unsloth does not import.
The levers are keys of the training config too (train.gradient_checkpointing, train.per_device_batch_size,
model.attn_implementation, train.lm_head_loss, train.torch_compile), except expandable segments: an environment
variable, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.

Each (shape, path) runs in a process of its own: Unsloth patches transformers when imported, and an out-of-memory
or a crash must not take the other measurements with it. A failure is recorded and the run goes on. --budget-s
bounds the whole run: each measurement gets a share of what is left and picks its number of timed steps from the
time of its last warm-up step.

Run (GPU): python3 bench/finetune_throughput.py --shapes 0.5b,7b --paths hf,hf-fast,hf-compile,unsloth
Run (CPU smoke): .venv/bin/python bench/finetune_throughput.py --shapes tiny --paths hf,hf-fast --seq 512
Writes JSON to --out (default $OUT/finetune_throughput.json when $OUT is set) and prints a table.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Passive OpenMP waiting before torch loads: spinning threads crawl on a busy CPU (the smoke runs); no effect on GPU.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # `finetune` from this checkout, also where the project is not installed (GPU box)

# Issue #6: the H200, plain transformers + PEFT, bf16 LoRA r16 on all projections, gradient checkpointing, seq 2048.
BASELINE_TOKENS_PER_S = {"0.5b": 35204, "7b": 7076}
TARGET_RATIO = 1.5
BASELINE_MICRO_BATCH = {"0.5b": 8, "7b": 4, "tiny": 2}
# hf-fast tries these in order without checkpointing and keeps the first that fits (estimates, H200 141 GB)
FAST_MICRO_BATCHES = {"0.5b": (32, 16, 8), "7b": (8, 6, 4), "tiny": (4, 2)}
SHAPES: dict[str, dict[str, Any]] = {  # as ../shared/gpu/hf_baseline_probe.py
    "0.5b": {"vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
             "num_attention_heads": 14, "num_key_value_heads": 2, "tie_word_embeddings": True},
    "7b": {"vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
           "num_attention_heads": 28, "num_key_value_heads": 4, "tie_word_embeddings": False},
    "tiny": {"vocab_size": 4096, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": True},
}
PATHS = ("hf", "hf-fast", "hf-compile", "unsloth")
# Run order: what the target is about first, so that a short budget drops the optional compile variant.
RUN_ORDER = ("hf-fast", "unsloth", "hf", "hf-compile")
LOSSES = ("chunked", "trl", "full")
ATTNS = ("auto", "sdpa", "eager", "flash_attention_2", "flash_attention_3")
SFT_HEAD_OUTPUTS = ("log_probs", "entropy", "is_top1")  # what SFTTrainer asks TRL's fused head for
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "HF_HUB_DISABLE_TELEMETRY": "1", "UNSLOTH_DISABLE_STATISTICS": "1", "TOKENIZERS_PARALLELISM": "false",
               "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


@dataclass
class Spec:
    """One measurement, as handed to a worker process (JSON)."""

    shape: str
    path: str
    seq: int
    work_dir: str
    micro_batches: list[int]
    grad_ckpt: list[bool]  # tried in order; each setting tries every micro-batch
    attn: str = "auto"
    loss: str = "trl"  # trl | chunked | full | model (Unsloth's own forward)
    compile: bool = False
    expandable_segments: bool = False
    lora_dropout: float = 0.0
    warmup: int = 3
    window_s: float = 15.0
    min_steps: int = 3
    max_steps: int = 50
    deadline: float = 0.0  # time.time() by which the timed steps should be done
    notes: list[str] = field(default_factory=list)


# -- the model folder ---------------------------------------------------------------------------------------------

def make_model_dir(shape: str, root: Path) -> Path:
    """A Qwen2 folder that from_pretrained accepts: config, a tokenizer and ONE weight. Every other weight is
    missing, so transformers initialises it randomly on the device: seconds, where writing and reading the 15 GB
    of a 7B model would take minutes of the GPU budget."""
    import torch
    from safetensors.torch import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config

    from finetune.tokenizer import CHATML_TEMPLATE

    dest = root / f"qwen2-{shape}"
    if (dest / "model.safetensors").is_file():
        return dest
    tmp = root / f".qwen2-{shape}-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    specials = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tk = Tokenizer(models.BPE(unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.train_from_iterator([f"patient {i} stage IV carcinoma KRAS BRCA2 cycle {i % 7}" for i in range(200)],
                           trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False))
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  unk_token="<unk>")
    tok.chat_template = CHATML_TEMPLATE
    tok.save_pretrained(str(tmp))
    cfg = Qwen2Config(**SHAPES[shape], max_position_embeddings=32768, eos_token_id=tok.eos_token_id,
                      pad_token_id=tok.pad_token_id, dtype="bfloat16")
    cfg.save_pretrained(str(tmp))
    hidden = SHAPES[shape]["hidden_size"]
    save_file({"model.norm.weight": torch.ones(hidden, dtype=torch.bfloat16)}, str(tmp / "model.safetensors"),
              metadata={"format": "pt"})
    if dest.exists():  # another process finished first
        return dest
    tmp.rename(dest)
    return dest


def job_config(spec: Spec, model_dir: Path, grad_ckpt: bool) -> Any:
    """The training config this measurement stands for: the keys a user sets to get the same run."""
    from finetune.config import LORA_TARGETS, parse_config

    work = Path(spec.work_dir)
    return parse_config({
        "job": {"name": "bench", "base_model": str(model_dir), "output_dir": str(work / "job")},
        "data": {"train_file": str(work / "unused.jsonl")},
        "model": {"max_seq_length": spec.seq, "load_in_4bit": False, "dtype": "auto",
                  "attn_implementation": spec.attn},
        # LoRA as the baseline: r 16, alpha 16, no dropout (dropout keeps a masked copy of each projection's input)
        "lora": {"r": 16, "alpha": 16, "dropout": spec.lora_dropout, "target_modules": list(LORA_TARGETS)},
        "train": {"backend": "unsloth" if spec.path == "unsloth" else "hf", "gradient_checkpointing": grad_ckpt,
                  "torch_compile": spec.compile, "lm_head_loss": "chunked" if spec.loss == "chunked" else "trl"},
    })


# -- the worker: one measurement ----------------------------------------------------------------------------------

def _env_info(gpu: bool) -> dict[str, Any]:
    import importlib.metadata as md

    import torch

    info: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda,
                            "gpu": torch.cuda.get_device_name(0) if gpu else None}
    for pkg in ("transformers", "peft", "trl", "unsloth", "flash-attn"):
        try:
            info[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            info[pkg] = None
    return info


def _install_loss_head(model: Any, loss: str, notes: list[str]) -> str:
    """Puts the LM-head loss of `loss` on the PEFT model; returns the loss actually used."""
    if loss in ("full", "model"):
        return loss
    base = model.get_base_model()
    if loss == "chunked":
        from finetune.chunked_loss import add_chunked_lm_head, supports_chunked

        why = supports_chunked(base)
        if why is None:
            add_chunked_lm_head(base)
            return "chunked"
        notes.append(f"chunked loss does not apply ({why}): TRL's fused head instead")
    try:
        from trl.trainer.utils import add_fused_lm_head
    except Exception as exc:  # noqa: BLE001 - any import failure means: no TRL head here
        notes.append(f"TRL's fused LM head is not importable ({type(exc).__name__}: {exc}): full logits")
        return "full"
    add_fused_lm_head(base, outputs=SFT_HEAD_OUTPUTS)  # as SFTTrainer.__init__ does
    return "trl"


class _Stepper:
    """One training step as the Trainer takes it: autocast forward, backward, clip, AdamW step."""

    def __init__(self, model: Any, loss: str, gpu: bool, bf16: bool) -> None:
        import torch

        self.torch, self.model, self.gpu, self.bf16 = torch, model, gpu, bf16
        self.params = [p for p in model.parameters() if p.requires_grad]
        # the Trainer's default optimiser is adamw_torch_fused
        self.opt = torch.optim.AdamW(self.params, lr=2e-4, weight_decay=0.0, fused=gpu)
        self.kwargs: dict[str, Any] = {"use_cache": False}  # what TRL's compute_loss passes
        if loss in ("trl", "chunked"):
            self.kwargs["fused_lm_head"] = True

    def __call__(self, x: Any) -> Any:
        torch = self.torch
        amp = torch.autocast("cuda", dtype=torch.bfloat16) if self.gpu and self.bf16 else contextlib.nullcontext()
        with amp:
            out = self.model(input_ids=x, labels=x, **self.kwargs)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)  # the Trainer's max_grad_norm
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return out.loss.detach()

    def sync(self) -> None:
        if self.gpu:
            self.torch.cuda.synchronize()

    def reset(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        gc.collect()
        if self.gpu:
            self.torch.cuda.empty_cache()


def _peak_memory(gpu: bool) -> dict[str, Any]:
    import torch

    if gpu:
        return {"peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
                "peak_reserved_gib": round(torch.cuda.max_memory_reserved() / 2**30, 2),
                "mem_kind": "cuda max allocated"}
    import resource

    return {"peak_mem_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
            "mem_kind": "host peak RSS (process)"}


def measure(spec: Spec) -> dict[str, Any]:
    """Runs one measurement; never raises (a failure is a result)."""
    res: dict[str, Any] = {"shape": spec.shape, "path": spec.path, "seq": spec.seq}
    t_start = time.time()
    if spec.path == "unsloth":
        try:
            import unsloth  # noqa: F401 - must come before transformers, as Unsloth patches it
        except Exception as exc:  # noqa: BLE001 - ImportError, or Unsloth refusing a machine without a GPU
            return {**res, "status": "skipped", "reason": f"unsloth does not import: {type(exc).__name__}: {exc}"}
    try:
        return {**res, **_measure(spec), "wall_s": round(time.time() - t_start, 1)}
    except Exception as exc:  # noqa: BLE001 - recorded, and the run goes on
        return {**res, "status": "error", "error": f"{type(exc).__name__}: {exc}"[:600],
                "traceback": traceback.format_exc()[-2000:], "wall_s": round(time.time() - t_start, 1)}


def _measure(spec: Spec) -> dict[str, Any]:
    import torch
    from transformers.utils import logging as hf_logging

    from finetune.training import load_model, pick_dtype

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    gpu = torch.cuda.is_available()
    out: dict[str, Any] = {"env": _env_info(gpu)}
    model_dir = make_model_dir(spec.shape, Path(spec.work_dir))
    vocab = SHAPES[spec.shape]["vocab_size"]
    attempts: list[dict[str, Any]] = []
    for ckpt in spec.grad_ckpt:
        cfg = job_config(spec, model_dir, ckpt)
        notes = list(spec.notes)
        dtype, dnotes = pick_dtype(cfg)
        notes.extend(dnotes)
        t = time.time()
        model, _tok, _q4 = load_model(cfg, cfg.train.backend, dtype, gpu, notes)
        model.train()  # from_pretrained returns eval mode; checkpointing only acts in training mode
        load_s = round(time.time() - t, 1)
        loss = _install_loss_head(model, spec.loss, notes)
        step = _Stepper(model, loss, gpu, dtype == torch.bfloat16)
        device = "cuda" if gpu else "cpu"
        for mb in spec.micro_batches:
            x = torch.randint(0, vocab, (mb, spec.seq), device=device)
            try:
                t = time.time()
                step(x)
                step.sync()
                first_step_s = time.time() - t
                dt = first_step_s
                for _ in range(spec.warmup - 1):
                    t = time.time()
                    step(x)
                    step.sync()
                    dt = time.time() - t
            except torch.OutOfMemoryError:
                attempts.append({"grad_ckpt": ckpt, "micro_batch": mb, "error": "out of memory"})
                step.reset()
                continue
            # timed steps: as many as fit the window and the deadline, from the last warm-up step's time
            room = min(spec.window_s, spec.deadline - time.time())
            steps = max(spec.min_steps, min(spec.max_steps, int(room / max(dt, 1e-6))))
            if gpu:
                torch.cuda.reset_peak_memory_stats()
            step.sync()
            t = time.perf_counter()
            for _ in range(steps):
                last = step(x)
            step.sync()
            elapsed = time.perf_counter() - t
            tps = steps * mb * spec.seq / elapsed
            base = model.get_base_model()
            base_tps = BASELINE_TOKENS_PER_S.get(spec.shape)
            out.update({
                "status": "ok", "tokens_per_s": round(tps, 1), "s_per_step": round(elapsed / steps, 4),
                "steps": steps, "warmup": spec.warmup, "first_step_s": round(first_step_s, 2),
                "micro_batch": mb, "grad_ckpt": ckpt, "loss_head": loss, "loss": round(float(last), 4),
                "attn": getattr(base.config, "_attn_implementation", None), "compile": spec.compile,
                "dtype": str(dtype).removeprefix("torch."), "load_s": load_s,
                "params": sum(p.numel() for p in model.parameters()), "trainable_params": sum(
                    p.numel() for p in step.params),
                "baseline_tokens_per_s": base_tps, "ratio": round(tps / base_tps, 3) if base_tps else None,
                "meets_target": (tps / base_tps >= TARGET_RATIO) if base_tps else None,
                "attempts": attempts, "notes": notes, **_peak_memory(gpu),
            })
            return out
        del model, step, x
        gc.collect()
        if gpu:
            torch.cuda.empty_cache()
    return {**out, "status": "error", "error": "out of memory at every micro-batch tried", "attempts": attempts}


# -- the parent: plan, isolate, report ----------------------------------------------------------------------------

def _spec(path: str, shape: str, args: argparse.Namespace, work: Path, fast_pick: dict[str, dict[str, Any]]) -> Spec:
    common: dict[str, Any] = {"shape": shape, "path": path, "seq": args.seq, "work_dir": str(work),
                              "warmup": args.warmup, "window_s": args.window_s, "min_steps": args.min_steps,
                              "max_steps": args.max_steps, "lora_dropout": args.lora_dropout}
    baseline_mb = [args.micro_batch or BASELINE_MICRO_BATCH[shape]]
    if path == "hf":
        return Spec(**common, micro_batches=baseline_mb, grad_ckpt=[True], loss="trl")
    if path == "unsloth":
        return Spec(**common, micro_batches=baseline_mb, grad_ckpt=[True], loss="model")
    fast = {"attn": args.fast_attn, "loss": args.fast_loss, "expandable_segments": args.fast_expandable_segments}
    mbs = args.fast_micro_batch or list(FAST_MICRO_BATCHES[shape])
    ckpts = [True] if args.fast_ckpt else [False, True]
    if path == "hf-fast":
        return Spec(**common, **fast, micro_batches=mbs, grad_ckpt=ckpts)
    pick = fast_pick.get(shape)  # hf-compile: compile once, at the micro-batch hf-fast found
    if pick:
        return Spec(**common, **fast, compile=True, micro_batches=[pick["micro_batch"]],
                    grad_ckpt=[pick["grad_ckpt"]], notes=["micro-batch and checkpointing as hf-fast found"])
    return Spec(**common, **fast, compile=True, micro_batches=mbs, grad_ckpt=ckpts)


def _run_isolated(spec: Spec, work: Path, timeout_s: float) -> dict[str, Any]:
    tag = f"{spec.shape}-{spec.path}"
    spec_file, result_file, log_file = work / f"{tag}.spec.json", work / f"{tag}.result.json", work / f"{tag}.log"
    spec_file.write_text(json.dumps(asdict(spec)), encoding="utf-8")
    result_file.unlink(missing_ok=True)
    env = {**os.environ, **OFFLINE_ENV, "PYTHONUNBUFFERED": "1"}
    if spec.expandable_segments:
        env.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_file), "--result", str(result_file)]
    with log_file.open("w", encoding="utf-8") as log:
        # its own session, so that a timeout ends the worker and whatever it started (compile workers), nothing else
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=work, env=env,
                                start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if result_file.is_file():
        return json.loads(result_file.read_text(encoding="utf-8"))
    tail = log_file.read_text(encoding="utf-8", errors="replace")[-2000:]
    why = f"timed out after {timeout_s:.0f} s" if timed_out else f"worker exited with status {proc.returncode}"
    return {"shape": spec.shape, "path": spec.path, "seq": spec.seq, "status": "error", "error": why,
            "log_tail": tail}


def _fmt(r: dict[str, Any]) -> str:
    if r.get("status") != "ok":
        return f"{r['shape']:<5} {r['path']:<11} {r.get('status', '?'):<7} {r.get('reason') or r.get('error', '')}"
    ratio = f"{r['ratio']:.2f}x" if r.get("ratio") is not None else "-"
    ckpt, compiled = "on" if r["grad_ckpt"] else "off", "yes" if r["compile"] else "no"
    return (f"{r['shape']:<5} {r['path']:<11} {'ok':<7} {r['micro_batch']:>3} {ckpt:<4} "
            f"{r['loss_head']:<7} {r['attn']!s:<8} {compiled:<7} "
            f"{r['tokens_per_s']:>10,.0f} {ratio:>7} {r['peak_mem_gib']:>8.1f} {r['s_per_step']:>7.3f} "
            f"{r['steps']:>5}")


HEADER = (f"{'shape':<5} {'path':<11} {'status':<7} {'mb':>3} {'ckpt':<4} {'loss':<7} {'attn':<8} {'compile':<7} "
          f"{'tok/s':>10} {'x base':>7} {'peak GiB':>8} {'s/step':>7} {'steps':>5}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="finetune-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.no_isolate:
        os.environ.update({k: v for k, v in OFFLINE_ENV.items() if k not in os.environ})
    t0 = time.time()
    end = t0 + args.budget_s
    plan = [(shape, path) for path in RUN_ORDER if path in args.paths for shape in args.shapes]
    report: dict[str, Any] = {
        "issue": 6, "what": "LoRA training tokens/s, steady state, random-init Qwen2.5 shapes",
        "baseline_tokens_per_s": BASELINE_TOKENS_PER_S, "target_ratio": TARGET_RATIO, "seq": args.seq,
        "budget_s": args.budget_s, "wall_s": 0.0, "env": {}, "results": []}
    fast_pick: dict[str, dict[str, Any]] = {}
    if args.log:
        Path(args.log).unlink(missing_ok=True)
    print(HEADER, flush=True)
    for i, (shape, path) in enumerate(plan):
        left = end - time.time()
        if left < 20:
            r: dict[str, Any] = {"shape": shape, "path": path, "seq": args.seq, "status": "skipped",
                                 "reason": f"--budget-s {args.budget_s:.0f} spent"}
        else:
            share = left / (len(plan) - i)
            spec = _spec(path, shape, args, work, fast_pick)
            spec.deadline = time.time() + share
            if args.no_isolate:
                r = measure(spec)
            else:
                # the share is what the timed steps aim for; the hard limit leaves room for imports, loading and
                # compiling (Unsloth, torch.compile), and never runs more than a minute past the budget
                r = _run_isolated(spec, work, timeout_s=min(max(share, 60.0) + 150.0, left + 60.0))
                _append_log(args, work / f"{shape}-{path}.log")
        if path == "hf-fast" and r.get("status") == "ok":
            fast_pick[shape] = {"micro_batch": r["micro_batch"], "grad_ckpt": r["grad_ckpt"]}
        env = r.pop("env", None)
        if env and not report["env"]:
            report["env"] = env
        report["results"].append(r)
        report["wall_s"] = round(time.time() - t0, 1)
        print(_fmt(r), flush=True)
        _write_json(report, args)  # after every measurement: a run cut short still leaves what it measured
    _summary(report, args)
    return report


def _write_json(report: dict[str, Any], args: argparse.Namespace) -> None:
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")


def _summary(report: dict[str, Any], args: argparse.Namespace) -> None:
    print()
    print(HEADER)
    for r in sorted(report["results"], key=lambda r: (list(SHAPES).index(r["shape"]), PATHS.index(r["path"]))):
        print(_fmt(r))
    base = ", ".join(f"{k} {v:,} tok/s" for k, v in BASELINE_TOKENS_PER_S.items())
    print(f"x base: tokens/s over the baseline ({base}); target {TARGET_RATIO}x. {report['env']}")
    if args.out:
        print(f"wrote {args.out}")
    if args.log and not args.no_isolate:
        print(f"workers' output: {args.log}")


def _append_log(args: argparse.Namespace, log: Path) -> None:
    """The worker's output (its last 500 kB) onto --log, for the failures; as it goes, like the JSON."""
    if args.log and log.is_file():
        Path(args.log).parent.mkdir(parents=True, exist_ok=True)
        with Path(args.log).open("a", encoding="utf-8") as f:
            f.write(f"==== {log.name}\n{log.read_text(encoding='utf-8', errors='replace')[-500_000:]}\n")


def _csv(kind: type, allowed: tuple[str, ...] | None = None) -> Any:
    def parse(text: str) -> list[Any]:
        items = [kind(x.strip()) for x in text.split(",") if x.strip()]
        bad = [x for x in items if allowed is not None and x not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"{text!r}: allowed: {', '.join(allowed or ())}")
        return items
    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    out_dir = os.environ.get("OUT")
    ap.add_argument("--shapes", type=_csv(str, tuple(SHAPES)), default=["0.5b", "7b"])
    ap.add_argument("--paths", type=_csv(str, PATHS), default=["hf", "hf-fast", "unsloth"])
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--budget-s", type=float, default=420.0, help="the whole run (default 420: 7 minutes)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps before the timed ones (at least 1)")
    ap.add_argument("--window-s", type=float, default=15.0, help="aim of each measurement's timed steps")
    ap.add_argument("--min-steps", type=int, default=3)
    ap.add_argument("--max-steps", type=int, default=50)
    ap.add_argument("--micro-batch", type=int, default=0, help="hf and unsloth (default: the baseline's, 8 / 4)")
    ap.add_argument("--lora-dropout", type=float, default=0.0, help="all paths (the baseline used 0)")
    ap.add_argument("--fast-ckpt", action="store_true", help="hf-fast: keep gradient checkpointing on")
    ap.add_argument("--fast-micro-batch", type=_csv(int), default=None,
                    help="hf-fast: micro-batches to try, largest first (default 0.5b 32,16,8; 7b 8,6,4)")
    ap.add_argument("--fast-attn", choices=ATTNS, default="auto", help="hf-fast: model.attn_implementation")
    ap.add_argument("--fast-loss", choices=LOSSES, default="chunked",
                    help="hf-fast: chunked (finetune.chunked_loss), trl (TRL's fused head) or full logits")
    ap.add_argument("--fast-expandable-segments", action=argparse.BooleanOptionalAction, default=True,
                    help="hf-fast: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (less fragmentation)")
    ap.add_argument("--out", default=str(Path(out_dir) / "finetune_throughput.json") if out_dir else None)
    ap.add_argument("--log", default=str(Path(out_dir) / "finetune_throughput.log") if out_dir else None,
                    help="the workers' output, concatenated (default $OUT/finetune_throughput.log)")
    ap.add_argument("--work-dir", default=None, help="model folders and worker logs (default: a new temp dir)")
    ap.add_argument("--no-isolate", action="store_true",
                    help="measure in this process (CPU smoke tests; never with unsloth on a GPU: it patches)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.warmup < 1:
        ap.error("--warmup must be at least 1")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    args = parse_args(argv)
    if args.worker:
        os.environ.update({k: v for k, v in OFFLINE_ENV.items() if k not in os.environ})
        spec = Spec(**json.loads(Path(args.worker).read_text(encoding="utf-8")))
        Path(args.result).write_text(json.dumps(measure(spec)), encoding="utf-8")
        return None
    return run(args)


if __name__ == "__main__":
    main()
