"""Model files as people get them wrong: `models setup` with a data directory it cannot write is one line naming
paths.data_dir (exit 2), not a PermissionError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.models.base import ModelError
from engine.models.embedded import install_embedded
from oncotui.cli import main


def test_install_embedded_into_an_unusable_folder_names_the_setting(tmp_path: Path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ModelError) as exc:
        install_embedded(tmp_path / "afile" / "models")
    msg = str(exc.value)
    assert "paths.data_dir" in msg and str(tmp_path / "afile" / "models") in msg


def test_install_embedded_when_writing_fails(tmp_path: Path, monkeypatch):
    import engine.models.embedded as embedded

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(embedded.tempfile, "mkstemp", full)
    (tmp_path / "models").mkdir()
    with pytest.raises(ModelError, match="No space left on device") as exc:
        install_embedded(tmp_path / "models")
    assert "paths.data_dir" in str(exc.value)


def test_models_setup_with_an_unusable_data_dir_is_exit_2(tmp_path: Path, monkeypatch, capsys):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path / "afile"))
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    assert main(["models", "setup"]) == 2
    err = capsys.readouterr().err
    assert "paths.data_dir" in err and "Traceback" not in err


@pytest.mark.parametrize("problem", [
    "`rerank.model` = 'embedded:nope' is not a bundled reranker; bundled: embedded:ms-marco-minilm-l12-int8",
    "`embedding.model` = '/models/empty': could not load /models/empty on device 'cpu'",
])
def test_ask_with_an_unusable_retrieval_model_exits_2_not_0(tmp_path, monkeypatch, capsys, problem):
    # every consult ends in the safe refusal until the setting is fixed: a script must not read that as "done"
    import oncotui.cli as cli
    from engine.graph import Engine
    from kb.errors import KBError
    from tests.fakes import FakeKB

    class BrokenKB(FakeKB):
        def retrieve(self, query, params, anchor=None):
            raise KBError(problem)

    monkeypatch.setenv("ONCOTUI_PATHS__DATA_DIR", str(tmp_path))
    monkeypatch.delenv("ONCOTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.setattr(cli, "_engine", lambda settings: Engine(settings, kb=BrokenKB()))
    assert main(["ask", "--patient", "PT-0001", "Pancreatic adenocarcinoma. Options?"]) == 2
    captured = capsys.readouterr()
    assert "Safe refusal" in captured.out and problem.split(":")[0] in captured.err
    assert "2 a usage or settings error" in " ".join(cli.EPILOG.split())


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cuda"])
def test_an_unusable_embedding_device_names_embedding_device(device):
    # it named `embedding.model`, and only after the model had been loaded
    import torch

    from kb.embed import Embedder
    from kb.errors import KBError

    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    with pytest.raises(KBError) as exc:
        Embedder("embedded:all-minilm-l6-v2", device=device).load()
    msg = str(exc.value)
    assert "`embedding.device`" in msg and repr(device) in msg and "cpu" in msg


def test_a_gguf_path_that_is_not_a_regular_file_fails_at_once(tmp_path: Path):
    # a named pipe (or a device) at the configured path: opening it to read the magic bytes waited forever
    import os
    import threading

    from engine.models.llama_cpp import check_gguf

    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)
    result: list[BaseException] = []
    t = threading.Thread(target=lambda: result.append(pytest.raises(ModelError, check_gguf, fifo, "k.path").value),
                         daemon=True)
    t.start()
    t.join(5)
    if t.is_alive():  # unblock the reader so the test process can exit
        with open(fifo, "wb"):
            pass
        pytest.fail("check_gguf blocked on a named pipe")
    assert "k.path" in str(result[0]) and "not a regular file" in str(result[0])
