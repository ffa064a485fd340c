"""Benchmark: generation tokens/s of the same small model through llama.cpp (GGUF Q4_1) and transformers (the
same weights dequantised into an HF folder, fp32 on CPU / bf16 on GPU). Prints both and their ratio.

The HF copy is made once with engine.models.transformers_bf16.gguf_to_hf into the model cache.
Run: .venv/bin/python bench/tokens_per_s.py [--tokens 128] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# Passive OpenMP waiting before torch / llama_cpp load: spinning threads crawl on a busy 2-core machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.config import ModelProfile, load_settings  # noqa: E402
from engine.models.base import GenerationParams  # noqa: E402
from engine.models.embedded import resolve_model_path  # noqa: E402

PROMPT = [{"role": "user", "content": "Write a short paragraph about how clinical guidelines are developed."}]


def measure(model, tokens: int, runs: int) -> tuple[float, float]:
    """(median tokens/s, first-token latency s): counts streamed pieces (one per token for both backends)."""
    params = GenerationParams(max_tokens=tokens, temperature=0.0)
    model.generate(PROMPT, GenerationParams(max_tokens=8, temperature=0.0))  # warm-up
    rates, firsts = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        first = None
        n = 0
        for piece in model.stream(PROMPT, params):
            if first is None:
                first = time.perf_counter() - t0
            n += 1 if piece else 0
        elapsed = time.perf_counter() - t0 - (first or 0.0)
        rates.append((n - 1) / elapsed if n > 1 and elapsed > 0 else 0.0)
        firsts.append(first or 0.0)
    return statistics.median(rates), statistics.median(firsts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    settings = load_settings(None)
    gguf = resolve_model_path("embedded:smollm2", settings.model_dir)
    hf_dir = settings.model_dir / "smollm2-hf"

    from engine.models.llama_cpp import LlamaCppModel
    from engine.models.transformers_bf16 import TransformersModel, gguf_to_hf

    prof = ModelProfile(backend="llama_cpp", path=str(gguf), max_tokens=args.tokens, n_ctx=2048)
    llama = LlamaCppModel("smollm2", prof, gguf).load()
    l_rate, l_first = measure(llama, args.tokens, args.runs)
    print(f"llama.cpp     SmolLM2-135M Q4_1 : {l_rate:7.1f} tok/s  first token {l_first * 1000:6.0f} ms")
    llama.close()

    if not (hf_dir / "config.json").exists():
        t = time.perf_counter()
        gguf_to_hf(gguf, hf_dir)
        print(f"(made the HF copy in {time.perf_counter() - t:.1f} s: {hf_dir})")
    tprof = ModelProfile(backend="transformers", path=str(hf_dir), max_tokens=args.tokens)
    hf = TransformersModel("smollm2-hf", tprof, hf_dir).load()
    t_rate, t_first = measure(hf, args.tokens, args.runs)
    import torch

    print(f"transformers  SmolLM2-135M {'bf16 GPU' if torch.cuda.is_available() else 'fp32 CPU'}: {t_rate:7.1f} "
          f"tok/s  first token {t_first * 1000:6.0f} ms  (torch threads {torch.get_num_threads()})")
    if t_rate > 0:
        print(f"ratio llama.cpp / transformers: {l_rate / t_rate:.1f}x")


if __name__ == "__main__":
    main()
