"""bench/finetune_throughput.py on the tiny shape (CPU, in-process), and the chunked LM-head loss it measures."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_MISSING = [m for m in ("peft", "trl") if importlib.util.find_spec(m) is None]
needs_extra = pytest.mark.skipif(bool(_MISSING), reason=f"pip install -e '.[finetune]' (missing {_MISSING})")


def _bench():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import finetune_throughput
    finally:
        sys.path.remove(str(REPO / "bench"))
    return finetune_throughput


@needs_extra
def test_tiny_run_reports_tokens_per_s_per_path_and_why_unsloth_was_skipped(tmp_path):
    bench = _bench()
    out = tmp_path / "result.json"
    bench.main(["--shapes", "tiny", "--paths", "hf,hf-fast,unsloth", "--seq", "64", "--no-isolate",
                "--warmup", "1", "--min-steps", "2", "--window-s", "0.2", "--budget-s", "120",
                "--work-dir", str(tmp_path / "work"), "--out", str(out)])
    report = json.loads(out.read_text())
    by_path = {r["path"]: r for r in report["results"]}
    assert set(by_path) == {"hf", "hf-fast", "unsloth"}
    for path in ("hf", "hf-fast"):
        r = by_path[path]
        assert r["status"] == "ok", r
        assert r["tokens_per_s"] > 0 and r["steps"] >= 2 and r["peak_mem_gib"] > 0
        assert r["ratio"] is None  # no baseline for the tiny shape
    hf, fast = by_path["hf"], by_path["hf-fast"]
    assert (hf["grad_ckpt"], hf["micro_batch"], hf["loss_head"]) == (True, 2, "trl")  # what SFTTrainer does
    assert (fast["grad_ckpt"], fast["micro_batch"], fast["loss_head"]) == (False, 4, "chunked")
    assert hf["trainable_params"] == fast["trainable_params"] > 0
    if importlib.util.find_spec("unsloth") is None:
        assert by_path["unsloth"]["status"] == "skipped"
        assert by_path["unsloth"]["reason"] == "unsloth does not import: ModuleNotFoundError: No module named 'unsloth'"


@needs_extra
def test_chunked_head_gives_the_full_logits_loss_and_gradients(tmp_path):
    import torch

    from finetune.chunked_loss import add_chunked_lm_head
    from finetune.training import load_model

    bench = _bench()
    spec = bench.Spec(shape="tiny", path="hf", seq=32, work_dir=str(tmp_path), micro_batches=[2], grad_ckpt=[False])
    cfg = bench.job_config(spec, bench.make_model_dir("tiny", tmp_path), grad_ckpt=False)
    model, _tok, _q4 = load_model(cfg, "hf", torch.float32, False, [])
    model.train()
    torch.manual_seed(0)
    x = torch.randint(0, 4096, (2, 32))
    labels = x.clone()
    labels[:, :10] = -100  # the prompt: no loss there
    lora = [p for p in model.parameters() if p.requires_grad]
    for p in lora:  # LoRA B starts at zero, which would make most gradients vanish
        torch.nn.init.normal_(p, std=0.05)

    def loss_and_grads(**kw):
        loss = model(input_ids=x, labels=labels, use_cache=False, **kw).loss
        grads = torch.autograd.grad(loss, lora)
        return loss.detach(), grads

    full, g_full = loss_and_grads()
    add_chunked_lm_head(model.get_base_model(), chunk=7)  # several chunks, the last one partial
    chunked, g_chunked = loss_and_grads(fused_lm_head=True)
    assert torch.allclose(full, chunked, atol=1e-5), (full, chunked)
    for a, b in zip(g_full, g_chunked, strict=True):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)
    out = model(input_ids=x, labels=labels, use_cache=False, fused_lm_head=True)
    assert out.label_mask.sum() == 2 * (32 - 10) and not out.log_probs[:, :9].any()
    assert model(input_ids=x).logits.shape == (2, 32, 4096)  # without fused_lm_head: the model as it was


@needs_extra
def test_trainer_uses_the_chunked_head_when_configured(make_job):
    import math

    from finetune import prepare, train

    cfg = make_job(n_cases=24, train={"lm_head_loss": "chunked", "max_steps": 2, "eval_steps": 2, "save_steps": 2,
                                      "gradient_checkpointing": True})
    prepare(cfg, quiet=True)
    res = train(cfg, show_progress=False)
    assert "train.lm_head_loss: chunked cross-entropy (finetune.chunked_loss)" in res.notes
    assert res.global_step == 2 and res.train_loss is not None and math.isfinite(res.train_loss)
    assert res.best_eval_loss is not None and math.isfinite(res.best_eval_loss)
