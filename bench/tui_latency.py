"""TUI latency, measured end to end through a pseudo-terminal (what a person at a terminal would see).

    .venv/bin/python bench/tui_latency.py [--runs 5] [--keys 40]

1. cold start: `python -m oncotui` spawned in a pty until the first frame is on the terminal (target <= 1.0 s),
   and until the patient list is filled (the engine is up; models are never loaded at start);
2. submit-to-first-step: Enter on a case until the first engine step is drawn, fake engine (target <= 200 ms);
3. keystroke-to-render while a (fake) answer streams: a key typed in the prompt until the terminal shows it,
   p50 / p95 / max (target p95 <= 50 ms).

The fake engine is the real engine with tests/fakes.py's scripted model and in-memory knowledge base, run in a
child process (`--child`), so only the UI and the engine's control flow are measured, not a model.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASE = "Pancreatic adenocarcinoma, ECOG 1. Options?"
FIRST_STEP = b"Redacting identifiers"
MARK = "\u00a7"  # "§": never in the fake draft, so a run of them on screen can only be what we typed
COLS, ROWS = 120, 40


class Term:
    """A child process on a pseudo-terminal, with its output collected as bytes."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # child: exec the app on the pty's slave side
            os.chdir(ROOT)
            os.execvpe(argv[0], argv, env)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.out = bytearray()

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return b""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            return b""
        self.out += chunk
        return chunk

    def wait_for(self, needle: bytes, timeout: float = 30.0, since: int = 0) -> float:
        """Seconds (perf_counter) at which ``needle`` first appeared after byte offset ``since``."""
        deadline = time.perf_counter() + timeout
        while needle not in self.out[since:]:
            if time.perf_counter() > deadline:
                tail = self.out[-2000:].decode(errors="replace")
                raise TimeoutError(f"{needle!r} never appeared; output tail: {tail!r}")
            self.read(0.05)
        return time.perf_counter()

    def quiet(self, seconds: float = 0.4, timeout: float = 30.0) -> None:
        """Wait until the screen has stopped changing for ``seconds`` (e.g. a consult finished drawing)."""
        deadline = time.perf_counter() + timeout
        last = time.perf_counter()
        while time.perf_counter() - last < seconds and time.perf_counter() < deadline:
            if self.read(0.05):
                last = time.perf_counter()

    def send(self, data: str | bytes) -> None:
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def close(self) -> None:
        try:
            self.send("\x11")  # ctrl+q
            deadline = time.perf_counter() + 5
            while time.perf_counter() < deadline:
                self.read(0.05)
                done, _ = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    return
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        finally:
            os.close(self.fd)


def env_for(data_dir: str) -> dict[str, str]:
    env = {**os.environ, "TERM": "xterm-256color", "ONCOTUI_PATHS__DATA_DIR": data_dir,
           "XDG_CONFIG_HOME": os.path.join(data_dir, "config"), "COLUMNS": str(COLS), "LINES": str(ROWS)}
    env.pop("TMUX", None)
    return env


def cold_start(runs: int) -> tuple[list[float], list[float]]:
    frames, ready = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as data:
            term = Term([sys.executable, "-m", "oncotui"], env_for(data))
            try:
                frames.append(term.wait_for(b"Patients") - term.started)
                ready.append(term.wait_for(b"0 patients") - term.started)
            finally:
                term.close()
    return frames, ready


def child_app(delay_s: float, repeat: int) -> Term:
    data = tempfile.mkdtemp(prefix="oncotui-bench-")
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", data, "--delay", str(delay_s),
            "--repeat", str(repeat)]
    term = Term(argv, env_for(data))
    term.wait_for(b"0 patients")
    term.send("n")
    term.wait_for(b"PT-0001")
    term.quiet(0.3)
    return term


def submit_to_first_step(runs: int) -> list[float]:
    term = child_app(delay_s=0.0, repeat=1)
    times = []
    try:
        for _ in range(runs):
            term.send(CASE)
            term.quiet(0.3)
            mark = len(term.out)
            t0 = time.perf_counter()
            term.send("\r")
            times.append(term.wait_for(FIRST_STEP, since=mark) - t0)
            term.quiet(0.5)  # let the consult finish before the next one
    finally:
        term.close()
    return times


def keystrokes_while_streaming(keys: int) -> list[float]:
    term = child_app(delay_s=0.05, repeat=160)  # ~12 s of streaming draft: longer than the typing
    latencies = []
    try:
        term.send(CASE)
        term.quiet(0.3)
        term.send("\r")
        term.wait_for(b"drafting", timeout=30)
        time.sleep(0.3)
        for k in range(1, keys + 1):
            mark = len(term.out)
            t0 = time.perf_counter()
            term.send(MARK)
            run = re.compile((MARK * k).encode())
            deadline = t0 + 5
            while not run.search(term.out, mark):  # the prompt line redrawn with all k marks
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"keystroke {k} never rendered")
                term.read(0.01)
            latencies.append(time.perf_counter() - t0)
            time.sleep(0.04)  # a fast typist: ~25 keys/s
        if b"Checking the draft" in term.out:
            print("warning: the stream ended before the last keystroke", file=sys.stderr)
    finally:
        term.close()
    return latencies


def run_child(data_dir: str, delay_s: float, repeat: int) -> None:
    """The app with the real engine around the fake model and KB (tests/fakes.py)."""
    sys.path.insert(0, str(ROOT))
    from oncotui.app import create_app
    from tests.fakes import GOOD_DRAFT, FakeModel, make_engine

    # a long draft (the good one, padded inside its JSON) so the stream lasts while we type
    draft = GOOD_DRAFT.replace('"caveats": [', '"caveats": [' + ", ".join(['"Check renal function."'] * repeat) + ", ")
    engine, _, _ = make_engine(Path(data_dir), model=FakeModel(outputs=[draft], delay_s=delay_s))
    create_app(lambda: engine).run()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--verbose", action="store_true", help="print every sample")
    parser.add_argument("--skip-cold", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", metavar="DATA_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--delay", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.delay, args.repeat)
        return
    print(f"terminal {COLS}x{ROWS}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    frames, ready = cold_start(args.runs) if not args.skip_cold else ([0.0], [0.0])
    print(f"cold start to first frame      median {statistics.median(frames) * 1000:6.0f} ms  "
          f"min {min(frames) * 1000:5.0f}  max {max(frames) * 1000:5.0f}   (target <= 1000 ms)")
    print(f"cold start to engine ready     median {statistics.median(ready) * 1000:6.0f} ms  "
          f"min {min(ready) * 1000:5.0f}  max {max(ready) * 1000:5.0f}   (patients listed; no model loaded)")
    steps = submit_to_first_step(args.runs)
    if args.verbose:
        print("submit-to-first-step (ms, consult 1..n in one chat):", " ".join(f"{x * 1000:.0f}" for x in steps))
    print(f"submit to first step           median {statistics.median(steps) * 1000:6.0f} ms  "
          f"min {min(steps) * 1000:5.0f}  max {max(steps) * 1000:5.0f}   (target <= 200 ms)")
    keys = keystrokes_while_streaming(args.keys)
    if args.verbose:
        print("keystroke latencies (ms, in order):", " ".join(f"{k * 1000:.0f}" for k in keys))
    print(f"keystroke to render, streaming p50 {pct(keys, 0.5) * 1000:5.0f} ms  p95 {pct(keys, 0.95) * 1000:5.0f} ms  "
          f"max {max(keys) * 1000:5.0f} ms  ({len(keys)} keys; target p95 <= 50 ms)")


if __name__ == "__main__":
    main()
