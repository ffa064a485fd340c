"""Chunked cross-entropy through the LM head, for ``train.lm_head_loss = "chunked"`` and the throughput bench.

A causal LM's loss normally builds the logits of every position at once: with a 152k vocabulary and 16k tokens per
micro-batch that is 5 GB in bf16 and 10 GB more in fp32, read and written several times. TRL's fused LM head
(what SFTTrainer always uses) avoids that by scoring tiles and recomputing each tile in the backward. This module
scores chunks of tokens too, but computes each chunk's gradient with respect to the hidden states in the forward,
while its logits are at hand: d log p(label) / d hidden is one vector per token, so the backward only scales the
stored vectors by the incoming per-token gradient. No recompute, and no logits kept: the LM head costs two matmuls
(forward, input gradient), as with full logits. The LM head's weight is frozen (LoRA), so it gets no gradient.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from typing import Any

__all__ = ["CHUNK_TOKENS", "ChunkedLMOutput", "add_chunked_lm_head", "chunked_token_log_probs", "supports_chunked"]

# Tokens per chunk: 2048 x 152k vocabulary x 4 bytes = 1.2 GB of fp32 logits live at a time (two such buffers).
CHUNK_TOKENS = 2048


@dataclass
class ChunkedLMOutput:
    """What TRL's SFTTrainer.compute_loss reads from ``model(..., fused_lm_head=True)`` (trl >= 1.15)."""

    loss: Any
    log_probs: Any  # (batch, seq - 1): log p(next label); zero where the label is -100
    entropy: Any  # same shape, no gradient
    is_top1: Any  # same shape, bool
    label_mask: Any  # same shape: label != -100
    aux_loss: Any = None


def _chunked_function() -> Any:
    import torch

    class _ChunkedLogProb(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, hidden: Any, weight: Any, targets: Any, chunk: int) -> tuple[Any, Any, Any]:
            n = hidden.shape[0]
            logp = hidden.new_empty(n, dtype=torch.float32)
            entropy = hidden.new_empty(n, dtype=torch.float32)
            top1 = hidden.new_empty(n, dtype=torch.bool)
            jac = torch.empty_like(hidden) if ctx.needs_input_grad[0] else None
            for s in range(0, n, chunk):
                e = min(s + chunk, n)
                t = targets[s:e]
                logits = (hidden[s:e].to(weight.dtype) @ weight.t()).float()  # the only vocab-wide tensor
                lse = torch.logsumexp(logits, dim=-1)
                picked = logits.gather(1, t[:, None]).squeeze(1)
                logp[s:e] = picked - lse
                top1[s:e] = logits.argmax(dim=-1) == t
                probs = torch.softmax(logits, dim=-1)
                entropy[s:e] = lse - (probs * logits).sum(dim=-1)
                del logits
                if jac is not None:
                    # d log p(t) / d logits = onehot(t) - softmax, so d / d hidden = (onehot - softmax) @ W
                    probs[torch.arange(e - s, device=probs.device), t] -= 1.0
                    jac[s:e] = (probs.to(weight.dtype) @ weight).neg_().to(jac.dtype)
                del probs
            ctx.save_for_backward(jac)
            ctx.mark_non_differentiable(entropy, top1)
            return logp, entropy, top1

        @staticmethod
        def backward(ctx: Any, grad_logp: Any, _grad_entropy: Any, _grad_top1: Any) -> tuple[Any, None, None, None]:
            (jac,) = ctx.saved_tensors
            return jac * grad_logp[:, None].to(jac.dtype), None, None, None

    return _ChunkedLogProb


@functools.cache
def _function() -> Any:
    return _chunked_function()


def chunked_token_log_probs(hidden: Any, weight: Any, targets: Any, chunk: int = CHUNK_TOKENS) -> tuple[Any, Any, Any]:
    """(log p(target), entropy, is_top1) per row of ``hidden`` (N, H) through the LM head ``weight`` (V, H)."""
    result: tuple[Any, Any, Any] = _function().apply(hidden, weight, targets, chunk)
    return result


def supports_chunked(model: Any) -> str | None:
    """None when the chunked head applies to this model, else why not (it knows no logit scaling/soft-capping
    and no LM-head bias)."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    for key in ("final_logit_softcapping", "logit_scale", "output_multiplier", "lm_head_multiplier",
                "logits_scaling"):
        if getattr(cfg, key, None) not in (None, 1, 1.0):
            return f"the model's config sets {key}"
    head = model.get_output_embeddings()
    if head is None or getattr(head, "bias", None) is not None:
        return "the model has no plain linear LM head"
    return None


def add_chunked_lm_head(model: Any, chunk: int = CHUNK_TOKENS) -> None:
    """Serve ``model(..., labels=..., fused_lm_head=True)`` with the chunked head: the call TRL's SFTTrainer makes,
    so patching the (PEFT-unwrapped) model after the trainer is built replaces TRL's head. Without
    ``fused_lm_head`` (generation, MoE router losses) the previous forward runs unchanged."""
    import torch

    previous = model.forward

    @functools.wraps(type(model).forward)
    def forward(self: Any, *args: Any, fused_lm_head: bool = False, labels: Any = None, shift_labels: Any = None,
                num_items_in_batch: Any = None, **kwargs: Any) -> Any:
        if not fused_lm_head or kwargs.get("output_router_logits") or (labels is None and shift_labels is None):
            extra = {"fused_lm_head": True} if fused_lm_head else {}
            for k, v in (("labels", labels), ("shift_labels", shift_labels),
                         ("num_items_in_batch", num_items_in_batch)):
                if v is not None:
                    extra[k] = v
            return previous(*args, **kwargs, **extra)
        kwargs["use_cache"] = False
        hidden = self.base_model(*args, **kwargs).last_hidden_state
        if shift_labels is None:
            hidden, labels = hidden[:, :-1], labels[:, 1:]
        else:
            labels = shift_labels
        weight = self.get_output_embeddings().weight
        labels = labels.to(weight.device)
        mask = labels != -100
        logp, entropy, top1 = chunked_token_log_probs(hidden.to(weight.device)[mask], weight, labels[mask], chunk)
        # scattered back so that ignored positions read 0 and an all-ignored batch still backpropagates a zero
        logp = torch.zeros(mask.shape, dtype=logp.dtype, device=logp.device).masked_scatter(mask, logp)
        entropy = torch.zeros(mask.shape, dtype=entropy.dtype, device=entropy.device).masked_scatter(mask, entropy)
        top1 = torch.zeros(mask.shape, dtype=torch.bool, device=top1.device).masked_scatter(mask, top1)
        denom = mask.sum().clamp(min=1) if num_items_in_batch is None else num_items_in_batch
        return ChunkedLMOutput(loss=-logp.sum() / denom, log_probs=logp, entropy=entropy, is_top1=top1,
                               label_mask=mask)

    model.forward = types.MethodType(forward, model)
