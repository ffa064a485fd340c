"""setup-converter with local sdists: a good one, a junk or truncated one, a missing one, a corrupt cached one."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from finetune.config import FinetuneError
from finetune.converter import find_converter, llama_cpp_version, setup_converter

REPO = Path(__file__).resolve().parents[2]
VERSION = llama_cpp_version()


def fake_sdist(path: Path) -> Path:
    """A tar.gz shaped like the llama-cpp-python sdist, with only the files the converter needs."""
    top = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/"
    with tarfile.open(path, "w:gz") as tar:
        for name in ("convert_hf_to_gguf.py", "convert_lora_to_gguf.py", "gguf-py/gguf/__init__.py",
                     "conversion/__init__.py", "LICENSE", "src/llama.cpp"):
            data = f"# {name}\n".encode() * 2000  # big enough that a cut-off copy fails mid-stream
            info = tarfile.TarInfo(top + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def sdist_dir(tmp_path: Path) -> Path:
    d = tmp_path / "from-usb"
    d.mkdir()
    return d


def test_a_good_sdist_sets_up_the_converter(tmp_path, sdist_dir):
    conv = setup_converter(tmp_path / "tools", sdist=fake_sdist(sdist_dir / f"llama_cpp_python-{VERSION}.tar.gz"))
    assert conv.hf_script.is_file() and find_converter(tmp_path / "tools") == conv
    assert not (conv.root / "src").exists()  # only the converter's files


@pytest.mark.parametrize("damage", ["junk", "truncated"])
def test_a_damaged_sdist_is_a_clear_error(tmp_path, sdist_dir, damage):
    bad = sdist_dir / f"llama_cpp_python-{VERSION}.tar.gz"
    if damage == "junk":
        bad.write_bytes(b"not a tarball")
    else:
        good = fake_sdist(tmp_path / "good.tar.gz").read_bytes()
        bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(FinetuneError) as exc:
        setup_converter(tmp_path / "tools", sdist=bad)
    msg = str(exc.value)
    assert f"--sdist {bad} is not a readable .tar.gz" in msg and "copy llama_cpp_python" in msg
    assert find_converter(tmp_path / "tools") is None  # nothing half-extracted left behind


def test_a_missing_sdist_is_an_error_even_when_a_converter_is_installed(tmp_path, sdist_dir):
    setup_converter(tmp_path / "tools", sdist=fake_sdist(sdist_dir / f"llama_cpp_python-{VERSION}.tar.gz"))
    with pytest.raises(FinetuneError, match="no such file"):
        setup_converter(tmp_path / "tools", sdist=sdist_dir / "nonexistent.tar.gz")
    junk = sdist_dir / f"llama_cpp_python-{VERSION}.tar.gz"
    junk.write_bytes(b"junk")
    with pytest.raises(FinetuneError, match="not a readable"):
        setup_converter(tmp_path / "tools", sdist=junk)


def test_a_corrupt_cached_sdist_is_discarded_so_the_next_run_refetches(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    cached = tools / f"llama_cpp_python-{VERSION}.tar.gz"
    cached.write_bytes(b"half a download")
    with pytest.raises(FinetuneError, match="has been deleted, run `oncotui finetune setup-converter` again"):
        setup_converter(tools)
    assert not cached.exists()


def test_cli_prints_one_line_and_fails(tmp_path, sdist_dir):
    junk = sdist_dir / "bad.tar.gz"
    junk.write_bytes(b"junk")
    env = {**os.environ, "ONCOTUI_CONVERTER_DIR": str(tmp_path / "tools"), "PYTHONPATH": str(REPO)}
    for arg, needle in ((junk, "does not match the installed llama-cpp-python"),
                        (junk.with_name(f"llama_cpp_python-{VERSION}.tar.gz"), "no such file")):
        proc = subprocess.run([sys.executable, "-m", "oncotui", "finetune", "setup-converter", "--sdist", str(arg)],
                              capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
        assert proc.returncode == 2 and needle in proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    named = junk.with_name(f"llama_cpp_python-{VERSION}.tar.gz")
    named.write_bytes(b"junk")
    proc = subprocess.run([sys.executable, "-m", "oncotui", "finetune", "setup-converter", "--sdist", str(named)],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 2 and f"{named} is not a readable .tar.gz" in proc.stderr
    assert "Traceback" not in proc.stderr
