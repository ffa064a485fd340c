"""A tiny Llama-shaped chat model with random weights and a tokenizer trained on the fly: no download.

hidden 256 (so Q4_K blocks of 256 fit), 2 layers, a byte-fallback SentencePiece BPE vocabulary in the Llama style
(tokenizer.model beside tokenizer.json), ChatML special tokens and a ChatML chat template.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>'"
    " + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
CANCERS = ["NSCLC", "pancreatic adenocarcinoma", "colorectal cancer", "melanoma", "breast cancer", "glioblastoma"]
GENES = ["EGFR", "KRAS G12C", "BRAF V600E", "HER2", "ALK", "BRCA2", "MSI-high", "PD-L1 50%"]
ANSWERS = ["Guidelines describe a targeted agent first.", "Consider platinum doublet chemotherapy.",
           "Refer to the tumour board for a multimodal plan.", "Immunotherapy is a described option.",
           "Offer enrolment in a clinical trial where available."]


def case_text(rng: random.Random) -> tuple[str, str]:
    age = rng.randint(30, 85)
    cancer, gene = rng.choice(CANCERS), rng.choice(GENES)
    stage = rng.choice(["I", "II", "III", "IV"])
    return (f"{age}-year-old with stage {stage} {cancer}, {gene}, ECOG {rng.randint(0, 2)}. What next?",
            rng.choice(ANSWERS))


def corpus(n: int = 400, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        q, a = case_text(rng)
        out.append(q)
        out.append(a)
    out.append("Dr. John Smith saw the patient on 03/04/2021 at Mercy Hospital; call 555-123-4567.")
    return out


def _train_tokenizer(dest: Path) -> Any:
    """A SentencePiece BPE model (byte fallback, no dummy prefix) saved as tokenizer.model, as Llama-family
    checkpoints ship it. llama.cpp's converter reads its merge scores from that file, so the GGUF tokenises exactly
    like HF; a tokenizer.json-only BPE gets placeholder scores there and splits words differently."""
    import io

    import sentencepiece as spm
    from transformers import LlamaTokenizer

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus()), model_writer=buf, model_type="bpe", vocab_size=900, hard_vocab_limit=False,
        byte_fallback=True, add_dummy_prefix=False, remove_extra_whitespaces=False, normalization_rule_name="identity",
        character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
        user_defined_symbols=["<|im_start|>", "<|im_end|>"], minloglevel=2)
    (dest / "tokenizer.model").write_bytes(buf.getvalue())
    return LlamaTokenizer.from_pretrained(
        str(dest), legacy=False, add_prefix_space=False, add_bos_token=False, bos_token="<s>",
        eos_token="<|im_end|>", unk_token="<unk>", pad_token="</s>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"])


def build_tiny_model(dest: Path, *, hidden: int = 256, layers: int = 2, seed: int = 0) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    dest.mkdir(parents=True, exist_ok=True)
    hf_tok = _train_tokenizer(dest)
    hf_tok.chat_template = CHATML
    hf_tok.save_pretrained(str(dest))
    vocab = len(hf_tok)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=1024, tie_word_embeddings=False,
                         bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id,
                         pad_token_id=hf_tok.pad_token_id, rms_norm_eps=1e-5)
    model = LlamaForCausalLM(config).to(torch.float32)
    model.generation_config.eos_token_id = hf_tok.eos_token_id
    model.save_pretrained(str(dest))
    return dest


def write_cases(path: Path, n: int = 120, seed: int = 1) -> Path:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            q, a = case_text(rng)
            rec: dict[str, object] = {"input": q, "target": a, "source": f"synthetic-{i}"}
            if i % 10 == 0:
                rec["input"] = f"Patient John Smith, MRN 12345678, seen 03/04/2021. {q}"
            fh.write(json.dumps(rec) + "\n")
    return path
