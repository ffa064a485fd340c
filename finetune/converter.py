"""llama.cpp's HF -> GGUF converter, kept outside the repository.

The converter (``convert_hf_to_gguf.py``, ``convert_lora_to_gguf.py``, their ``conversion`` package and the
vendored ``gguf-py``) ships only in the llama-cpp-python *source* distribution. ``setup_converter`` fetches that
sdist once, for the installed llama-cpp-python version, with pip (or takes a local file), and extracts only those
files into ``<data dir>/tools/llama.cpp-convert/<version>/``. Export then runs offline.

Location: ``export.converter_dir`` in the job config > ``$ONCOTUI_CONVERTER_DIR`` > ``$XDG_DATA_HOME/oncotui/
tools/llama.cpp-convert`` (``~/.local/share/oncotui/...``).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .config import FinetuneError
from .offline import OFFLINE_ENV

__all__ = ["Converter", "converter_root", "find_converter", "setup_converter", "llama_cpp_version"]

_KEEP_FILES = ("convert_hf_to_gguf.py", "convert_lora_to_gguf.py", "LICENSE")
_KEEP_DIRS = ("conversion/", "gguf-py/")


@dataclass(frozen=True)
class Converter:
    root: Path
    version: str

    @property
    def hf_script(self) -> Path:
        return self.root / "convert_hf_to_gguf.py"

    @property
    def lora_script(self) -> Path:
        return self.root / "convert_lora_to_gguf.py"

    @property
    def gguf_py(self) -> Path:
        return self.root / "gguf-py"

    def env(self) -> dict[str, str]:
        """Environment for the converter subprocess: its own gguf-py first, nothing reaches the network."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(self.gguf_py), str(self.root)]
                                            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.pop("NO_LOCAL_GGUF", None)
        env.update(OFFLINE_ENV, TOKENIZERS_PARALLELISM="false")
        return env


def llama_cpp_version() -> str:
    try:
        return metadata.version("llama_cpp_python")
    except metadata.PackageNotFoundError:
        raise FinetuneError("llama-cpp-python is not installed; it is a dependency of oncotui") from None


def converter_root(configured: Path | None = None) -> Path:
    if configured:
        return Path(configured).expanduser()
    if os.environ.get("ONCOTUI_CONVERTER_DIR"):
        return Path(os.environ["ONCOTUI_CONVERTER_DIR"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "oncotui" / "tools" / "llama.cpp-convert"


def find_converter(configured: Path | None = None, version: str | None = None) -> Converter | None:
    version = version or llama_cpp_version()
    root = converter_root(configured) / version
    ok = all((root / f).is_file() for f in ("convert_hf_to_gguf.py", "convert_lora_to_gguf.py",
                                             "gguf-py/gguf/__init__.py", "conversion/__init__.py"))
    return Converter(root, version) if ok else None


def require_converter(configured: Path | None = None) -> Converter:
    conv = find_converter(configured)
    if conv is None:
        raise FinetuneError(
            f"llama.cpp's converter is not set up at {converter_root(configured) / llama_cpp_version()}. Run once, "
            "on a machine with access to the package index: `oncotui finetune setup-converter` (or `make "
            "finetune-setup`), or pass a local sdist: `oncotui finetune setup-converter --sdist "
            f"llama_cpp_python-{llama_cpp_version()}.tar.gz`.")
    return conv


def _download_sdist(version: str, dest: Path, timeout_s: int) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           f"llama-cpp-python=={version}", "-d", str(dest), "--timeout", "30", "--retries", "1", "-q"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise FinetuneError(f"pip download of the llama-cpp-python {version} sdist took over {timeout_s}s") from None
    found = sorted(dest.glob("llama_cpp_python-*.tar.gz"))
    if proc.returncode != 0 or not found:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise FinetuneError(f"could not download the llama-cpp-python {version} sdist with pip "
                            f"({' | '.join(tail) or 'no file'}); on an air-gapped machine copy the file "
                            f"llama_cpp_python-{version}.tar.gz here and pass --sdist PATH")
    return found[0]


class _BadSdist(Exception):
    """The sdist is not a readable .tar.gz (truncated download, wrong file)."""


def _extract(sdist: Path, root: Path) -> int:
    """Extract the converter files only. Returns the number of files written."""
    tmp = Path(tempfile.mkdtemp(prefix="convert-", dir=root.parent))
    try:
        n = _extract_into(sdist, tmp)
        if not (tmp / "convert_hf_to_gguf.py").is_file():
            raise FinetuneError(f"{sdist} has no vendor/llama.cpp/convert_hf_to_gguf.py")
        if root.exists():
            shutil.rmtree(root)
        tmp.rename(root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return n


def _extract_into(sdist: Path, tmp: Path) -> int:
    n = 0
    try:
        with tarfile.open(sdist, "r:gz") as tar:
            for m in tar.getmembers():
                parts = m.name.split("/", 1)
                if len(parts) < 2 or not parts[1].startswith("vendor/llama.cpp/") or not m.isfile():
                    continue
                rel = parts[1].removeprefix("vendor/llama.cpp/")
                if rel in _KEEP_FILES or rel.startswith(_KEEP_DIRS):
                    if ".." in Path(rel).parts:
                        continue
                    target = tmp / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    src = tar.extractfile(m)
                    if src is None:
                        continue
                    target.write_bytes(src.read())
                    n += 1
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:  # junk, truncated, not gzip
        raise _BadSdist(str(exc) or type(exc).__name__) from None
    return n


def setup_converter(configured: Path | None = None, *, sdist: Path | None = None, force: bool = False,
                    timeout_s: int = 900) -> Converter:
    """Obtain the converter once (idempotent). ``sdist``: a local llama_cpp_python-<version>.tar.gz."""
    version = llama_cpp_version()
    if sdist is not None:
        # an explicitly named file must exist and match, even when a converter is already set up
        sdist = Path(sdist).expanduser()
        if not sdist.is_file():
            raise FinetuneError(f"--sdist {sdist}: no such file; give the path of llama_cpp_python-{version}.tar.gz "
                                "(or leave --sdist out to download it with pip)")
        _check_version(sdist, version)
        _check_readable(sdist, version)
    if not force and (conv := find_converter(configured, version)) is not None:
        return conv
    for mod in ("sentencepiece",):
        try:
            __import__(mod)
        except ImportError:
            raise FinetuneError(f"the converter needs {mod}: pip install '.[finetune]'") from None
    root = converter_root(configured) / version
    root.parent.mkdir(parents=True, exist_ok=True)
    cached = root.parent / f"llama_cpp_python-{version}.tar.gz"
    if sdist is None:
        if not cached.is_file():
            with tempfile.TemporaryDirectory() as d:
                got = _download_sdist(version, Path(d), timeout_s)
                shutil.copy2(got, cached)  # keep the sdist beside the tools (not in the repo) for a re-extract
        sdist = cached
        _check_version(sdist, version)
    try:
        n = _extract(sdist, root)
    except _BadSdist as exc:
        if sdist == cached:
            # a broken download kept here would fail the same way on every run: drop it so the next run refetches
            cached.unlink(missing_ok=True)
            raise FinetuneError(f"the cached sdist {sdist} is not a readable .tar.gz ({exc}); it has been deleted, "
                                "run `oncotui finetune setup-converter` again to download it afresh (or pass "
                                "--sdist FILE)") from None
        raise _unreadable(sdist, version, exc) from None
    (root / "SOURCE.json").write_text(json.dumps({"sdist": sdist.name, "version": version, "files": n}, indent=2))
    conv = find_converter(configured, version)
    if conv is None:
        raise FinetuneError(f"extracted {n} files from {sdist} but the converter is incomplete at {root}")
    return conv


def _check_version(sdist: Path, version: str) -> None:
    if f"-{version}." not in sdist.name:
        raise FinetuneError(f"{sdist.name} does not match the installed llama-cpp-python {version}; the converter "
                            "must come from the same release as the runtime that loads its output")


def _unreadable(sdist: Path, version: str, why: object) -> FinetuneError:
    return FinetuneError(f"--sdist {sdist} is not a readable .tar.gz ({why}); copy llama_cpp_python-{version}.tar.gz "
                         "again (the file may be truncated or not the sdist) and retry")


def _check_readable(sdist: Path, version: str) -> None:
    """Cheap: the gzip and the first tar header (a junk file fails here; a truncated one only when extracted)."""
    try:
        with tarfile.open(sdist, "r:gz") as tar:
            tar.next()
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise _unreadable(sdist, version, exc) from None
