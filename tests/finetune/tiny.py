"""A tiny Llama-shaped chat model with random weights and a tokenizer trained on the fly: no download.

hidden 256 (so Q4_K blocks of 256 fit), 2 layers, a byte-fallback BPE vocabulary in the Llama style (which
llama.cpp's converter reads as an SPM vocabulary), ChatML special tokens and a ChatML chat template.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

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


def build_tiny_model(dest: Path, *, hidden: int = 256, layers: int = 2, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    dest.mkdir(parents=True, exist_ok=True)
    specials = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    byte_tokens = [f"<0x{i:02X}>" for i in range(256)]
    tk = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tk.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                    decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=900, special_tokens=specials + byte_tokens, show_progress=False,
                                  initial_alphabet=list("abcdefghijklmnopqrstuvwxyz"))
    tk.train_from_iterator(corpus(), trainer=trainer)
    # byte tokens belong to the vocabulary, not to the added (special) tokens
    data = json.loads(tk.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] in specials]
    tk = Tokenizer.from_str(json.dumps(data))
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="<|im_end|>",
                                     unk_token="<unk>", pad_token="</s>",
                                     additional_special_tokens=["<|im_start|>", "<|im_end|>"])
    hf_tok.chat_template = CHATML
    hf_tok.add_bos_token = False
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
