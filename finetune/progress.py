"""Training progress: a rich bar (loss, tokens/s, ETA), metrics JSONL, loss curve PNG and a terminal sparkline."""

from __future__ import annotations

import json
import logging
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["make_progress_callback", "read_metrics", "sparkline", "plot_loss", "quiet_hf"]

SPARK = "▁▂▃▄▅▆▇█"


def make_progress_callback(metrics_file: Path, console: Any = None, show: bool = True) -> Any:
    """A transformers TrainerCallback (built here so transformers is imported only when training)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from transformers import TrainerCallback

    class RichProgressCallback(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.console = console or Console(stderr=True, highlight=False)
            self.progress: Progress | None = None
            self.task: Any = None
            self.t0 = time.monotonic()
            self.tokens0 = 0
            self.step0 = 0
            self.loss: float | None = None
            metrics_file.parent.mkdir(parents=True, exist_ok=True)

        def _tok_s(self, state: Any) -> float:
            seen = int(getattr(state, "num_input_tokens_seen", 0) or 0)
            dt = time.monotonic() - self.t0
            return (seen - self.tokens0) / dt if dt > 0 else 0.0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0 = time.monotonic()
            self.tokens0 = int(getattr(state, "num_input_tokens_seen", 0) or 0)
            self.step0 = state.global_step
            if not show:
                return
            self.progress = Progress(
                TextColumn("[bold]train[/bold]"), BarColumn(), MofNCompleteColumn(),
                TextColumn("loss {task.fields[loss]}"), TextColumn("{task.fields[tps]} tok/s"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=self.console,
                transient=False)
            self.progress.start()
            self.task = self.progress.add_task("train", total=state.max_steps, completed=state.global_step,
                                               loss="-", tps="-")

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.progress is not None:
                self.progress.update(self.task, completed=state.global_step, tps=f"{self._tok_s(state):,.0f}",
                                     loss=f"{self.loss:.4f}" if self.loss is not None else "-")

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kw: Any) -> None:
            logs = dict(logs or {})
            if "loss" in logs:
                self.loss = float(logs["loss"])
            row = {"step": state.global_step, "epoch": state.epoch, "time": round(time.time(), 3),
                   "tokens_seen": int(getattr(state, "num_input_tokens_seen", 0) or 0),
                   "tokens_per_s": round(self._tok_s(state), 1), **logs}
            with metrics_file.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row, default=float) + "\n")
            if self.progress is not None and "eval_loss" in logs:
                self.progress.console.print(f"  step {state.global_step}: eval_loss {logs['eval_loss']:.4f}")

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.progress is not None:
                self.progress.stop()
                self.progress = None

    return RichProgressCallback()


def read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def sparkline(values: list[float], width: int = 60) -> str:
    if not values:
        return ""
    if len(values) > width:  # average into `width` buckets
        size = len(values) / width
        values = [sum(b) / len(b) for b in (values[int(i * size):max(int((i + 1) * size), int(i * size) + 1)]
                                            for i in range(width))]
    lo, hi = min(values), max(values)
    span = hi - lo or 1.0
    return "".join(SPARK[min(len(SPARK) - 1, int((v - lo) / span * (len(SPARK) - 1) + 0.5))] for v in values)


def plot_loss(metrics: list[dict[str, Any]], png: Path) -> str | None:
    """Write the loss curve PNG; returns None on success or the reason it was skipped."""
    train = [(r["step"], r["loss"]) for r in metrics if "loss" in r]
    evals = [(r["step"], r["eval_loss"]) for r in metrics if "eval_loss" in r]
    if not train and not evals:
        return "no loss values were logged"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib, or the 'finetune' extra)"
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    if train:
        ax.plot(*zip(*train), label="train loss")
    if evals:
        ax.plot(*zip(*evals), marker="o", label="eval loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png)
    plt.close(fig)
    return None


def _no_mtime_warning(record: logging.LogRecord) -> bool:
    return "mtime may not be reliable" not in record.getMessage()


@contextmanager
def quiet_hf() -> Iterator[None]:
    """Hugging Face's own tqdm bars (loading weights, tokenizing the dataset) and PEFT/TRL's use of a deprecated
    transformers property would interleave with our rich bar and summary: off for our call, restored after."""
    from transformers.utils import logging as hf_logging

    restore: list[Callable[[], None]] = []
    # Checkpoints saved within a second of each other (short runs) make the Trainer warn that mtime is unreliable
    # and sort them by step instead, which is what we want anyway: not a line for the user.
    sorter = hf_logging.get_logger("transformers.trainer_utils")
    if _no_mtime_warning not in sorter.filters:  # nested calls (train -> load_model): the outer one removes it
        sorter.addFilter(_no_mtime_warning)
        restore.append(lambda: sorter.removeFilter(_no_mtime_warning))
    if hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
        restore.append(hf_logging.enable_progress_bar)
    try:
        import datasets

        if not datasets.are_progress_bars_disabled():
            datasets.disable_progress_bars()
            restore.append(datasets.enable_progress_bars)
    except ImportError:  # merge and verify do not need datasets
        pass
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*is_gradient_checkpointing. is deprecated",
                                    category=FutureWarning)
            yield
    finally:
        for undo in restore:
            undo()
