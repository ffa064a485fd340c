"""verify: do the GGUF files say what the merged HF model says? Then write the manifest.

For every exported GGUF (the unquantised one and each quantisation) and each ``verify.prompts`` entry, the prompt
is rendered with the chat template and tokenised by the HF tokenizer; the same token ids go to both runtimes (so a
tokenizer difference cannot hide or fake a weight difference; tokenisation agreement is reported separately).
  * next-token top-1 agreement: teacher-forced over the prompt and the HF greedy continuation;
  * greedy generation: the length of the common prefix of both greedy continuations.
The unquantised GGUF must reach ``verify.min_top1_agreement``, quantised ones ``min_top1_agreement_quantized``, and
llama.cpp must tokenise every rendered prompt to the same ids (the app tokenises with llama.cpp; a GGUF that splits
text differently from training fails unless ``verify.require_tokenizer_match = false``).

``manifest.json`` lists the files (size, sha256), base model, config, training metrics and these results.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from .config import FinetuneError, JobConfig

__all__ = ["GgufCheck", "VerifyResult", "verify", "write_manifest", "sha256_file"]


@dataclass
class GgufCheck:
    file: str
    quantized: bool
    top1_agreement: float
    greedy_prefix: list[int]  # per prompt: tokens on which both greedy continuations agree
    greedy_exact: int  # prompts whose whole continuation matched
    tokenization_match: int  # prompts the GGUF tokenizer splits exactly like the HF tokenizer
    threshold: float
    ok: bool
    tokenizer_diff: str = ""  # the first difference, when tokenization_match < prompts


@dataclass
class VerifyResult:
    ok: bool
    prompts: int
    checks: list[GgufCheck] = field(default_factory=list)
    manifest: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _ggufs(cfg: JobConfig) -> list[tuple[Path, bool]]:
    files = sorted(p for p in cfg.gguf_dir.glob("*.gguf") if "-lora-" not in p.name)
    unquant = {f"{cfg.job.name}-{t}.gguf" for t in ("f16", "bf16", "f32")}
    return [(p, p.name not in unquant) for p in files]


def verify(cfg: JobConfig, *, console: Any = None, write: bool = True) -> VerifyResult:
    from .jobdir import check_inputs, job_lock

    if not (cfg.merged_dir / "config.json").is_file():
        raise FinetuneError(f"no merged model at {cfg.merged_dir}: run merge first")
    ggufs = _ggufs(cfg)
    if not ggufs:
        raise FinetuneError(f"no GGUF files in {cfg.gguf_dir}: run export-gguf first")
    with job_lock(cfg, "verify"):
        # the manifest must describe one lineage: data -> adapter -> merged -> these GGUFs
        check_inputs(cfg, "verify")
        return _verify(cfg, ggufs, console, write)


def _verify(cfg: JobConfig, ggufs: list[tuple[Path, bool]], console: Any, write: bool) -> VerifyResult:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console(stderr=True, highlight=False)

    import numpy as np
    import torch
    from llama_cpp import Llama
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .gguf import captured_native_output
    from .progress import quiet_hf
    from .tokenizer import chat_eos, render

    try:
        tok = AutoTokenizer.from_pretrained(str(cfg.merged_dir), local_files_only=True)
        with quiet_hf():  # no HF "Loading weights" bar above our table
            model = AutoModelForCausalLM.from_pretrained(str(cfg.merged_dir), dtype=torch.float32,
                                                         local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - transformers raises many types
        raise FinetuneError(f"cannot load the merged model {cfg.merged_dir} ({exc}); run `oncotui finetune merge "
                            "--config ...` again") from None
    model.eval()
    eos_tok = chat_eos(tok, cfg.model.eos_token)
    eos_id = tok.convert_tokens_to_ids(eos_tok) if eos_tok else tok.eos_token_id
    n_new = cfg.verify.max_new_tokens
    cases = []
    for prompt in cfg.verify.prompts:
        msgs = ([{"role": "system", "content": cfg.data.system_prompt}] if cfg.data.system_prompt else [])
        msgs.append({"role": "user", "content": prompt})
        text = render(tok, msgs, add_generation_prompt=True, enable_thinking=cfg.model.enable_thinking)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=n_new, eos_token_id=eos_id,
                                 pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else eos_id)
            gen = out[0, len(ids):].tolist()
            seq = ids + gen
            ref_top1 = model(torch.tensor([seq])).logits[0].argmax(-1).tolist()
        cases.append({"text": text, "ids": ids, "gen": gen, "seq": seq, "top1": ref_top1})

    n_ctx = max(256, max(len(c["seq"]) for c in cases) + n_new + 8)
    threads = cfg.verify.n_threads or (os.cpu_count() or 1)
    result = VerifyResult(ok=True, prompts=len(cases))
    for path, quantized in ggufs:
        with captured_native_output() as log:
            try:
                llm = Llama(model_path=str(path), n_ctx=n_ctx, logits_all=True, verbose=False, n_threads=threads,
                            seed=0)
            except Exception as exc:  # noqa: BLE001
                llm = None
                err = exc
        if llm is None:
            tail = "\n    ".join(log.content.strip().splitlines()[-8:])
            raise FinetuneError(f"llama.cpp could not load {path}: {err}\n    {tail}")
        agree = total = exact = tok_match = 0
        prefixes: list[int] = []
        tok_diff = ""
        for i, c in enumerate(cases, 1):
            llm.reset()
            llm.eval(c["seq"])
            scores = np.asarray(llm.scores[: len(c["seq"])])
            top1 = scores.argmax(-1).tolist()
            agree += sum(int(a == b) for a, b in zip(top1, c["top1"]))
            total += len(c["seq"])
            llm.reset()
            llm.eval(c["ids"])
            gen: list[int] = []
            for _ in range(len(c["gen"]) if c["gen"] else n_new):
                nxt = int(np.asarray(llm.scores[llm.n_tokens - 1]).argmax())
                gen.append(nxt)
                if nxt == eos_id:
                    break
                llm.eval([nxt])
            common = 0
            for a, b in zip(gen, c["gen"]):
                if a != b:
                    break
                common += 1
            prefixes.append(common)
            exact += int(gen == c["gen"])
            # as the app does it: llama-cpp-python's chat path tokenises the rendered template, no BOS, specials on
            gguf_ids = llm.tokenize(c["text"].encode(), add_bos=False, special=True)
            tok_match += int(gguf_ids == c["ids"])
            if gguf_ids != c["ids"] and not tok_diff:
                tok_diff = f"prompt {i}: " + _first_difference(tok, llm, c["ids"], gguf_ids)
        llm.close()
        frac = agree / total if total else 0.0
        thr = cfg.verify.min_top1_agreement_quantized if quantized else cfg.verify.min_top1_agreement
        tok_ok = tok_match == len(cases) or not cfg.verify.require_tokenizer_match
        check = GgufCheck(file=str(path), quantized=quantized, top1_agreement=round(frac, 4), greedy_prefix=prefixes,
                          greedy_exact=exact, tokenization_match=tok_match, threshold=thr, ok=frac >= thr and tok_ok,
                          tokenizer_diff=tok_diff)
        result.checks.append(check)
        result.ok = result.ok and check.ok

    t = Table(title="verify: GGUF vs merged HF model (same token ids)")
    # the greedy prefix per prompt, comma-separated ("8/7" read as a fraction)
    for col in ("file", "top-1 agreement", "greedy prefix (tokens, per prompt)", "exact", "tokenizer", "ok"):
        t.add_column(col)
    for ch in result.checks:
        t.add_row(Path(ch.file).name, f"{ch.top1_agreement:.1%} (≥ {ch.threshold:.0%})",
                  ", ".join(map(str, ch.greedy_prefix)), f"{ch.greedy_exact}/{len(cases)}",
                  f"{ch.tokenization_match}/{len(cases)}", "[green]yes[/green]" if ch.ok else "[red]NO[/red]")
    console.print(t)
    for ch in result.checks:
        if ch.tokenizer_diff:
            fails = cfg.verify.require_tokenizer_match
            # token strings such as "[PAD]" or "<|im_start|>" must print as text, not as rich markup
            console.print(f"[{'red' if fails else 'yellow'}]{escape(Path(ch.file).name)}: llama.cpp tokenises "
                          f"{len(cases) - ch.tokenization_match}/{len(cases)} prompts differently from the HF "
                          f"tokenizer the model was trained with ({escape(ch.tokenizer_diff)}). The app tokenises "
                          "with llama.cpp, so this model would see input unlike its training data"
                          + ("; verify.require_tokenizer_match = false accepts it" if fails else "") + "[/]")
    if write:
        result.manifest = str(write_manifest(cfg, result))
        console.print(f"manifest: {result.manifest}")
    return result


def _first_difference(tok: Any, llm: Any, hf_ids: list[int], gguf_ids: list[int]) -> str:
    k = next((j for j, (a, b) in enumerate(zip(hf_ids, gguf_ids)) if a != b), min(len(hf_ids), len(gguf_ids)))

    def gguf_piece(i: int) -> str:
        return llm.detokenize([i], special=True).decode(errors="replace")

    hf = [str(tok.convert_ids_to_tokens(i)) for i in hf_ids[k:k + 3]]
    gg = [gguf_piece(i) for i in gguf_ids[k:k + 3]]
    return f"from token {k}: HF {hf!r}, llama.cpp {gg!r}"


def _files(root: Path, base: Path) -> list[dict[str, Any]]:
    if not root.is_dir():
        return []
    return [{"path": str(p.relative_to(base)), "size": p.stat().st_size, "sha256": sha256_file(p)}
            for p in sorted(root.rglob("*")) if p.is_file()]


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("torch", "transformers", "peft", "trl", "llama_cpp_python", "unsloth", "bitsandbytes"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def write_manifest(cfg: JobConfig, result: VerifyResult | None = None) -> Path:
    from .merging import base_quantization

    base = cfg.job.base_model
    prep = _read_json(cfg.data_dir / "report.json") or {}
    manifest = {
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "job": cfg.job.name,
        "config_file": str(cfg.source) if cfg.source else None,
        "config": cfg.dump(),
        "base_model": {"path": str(base), "quantization": base_quantization(base),
                       "config_sha256": sha256_file(base / "config.json")},
        "files": {"gguf": _files(cfg.gguf_dir, cfg.out), "merged": _files(cfg.merged_dir, cfg.out),
                  "adapter": _files(cfg.adapter_dir, cfg.out)},
        "data": {k: prep.get(k) for k in ("input_file", "records_read", "accepted", "train", "eval",
                                          "records_with_phi", "phi_removed", "tokens")}
        | {"duplicates": len(prep.get("duplicates", [])), "rejected": len(prep.get("rejected", []))},
        "training": _read_json(cfg.out / "train_summary.json"),
        "verify": result.to_json() if result else None,
        "versions": _versions(),
    }
    if result is not None:
        manifest["verify"].pop("manifest", None)
    cfg.manifest_file.parent.mkdir(parents=True, exist_ok=True)
    cfg.manifest_file.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return cfg.manifest_file
