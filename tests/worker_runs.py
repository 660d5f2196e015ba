"""Runs of ``python -m leaderboard worker ...`` for the fault tests, each its own process,
forked from a server that imported the worker's code once.

A fault test runs the worker many times (tests/integration/test_queue.py: 14 runs, 12 of them
SIGKILLed at a fault point). A fresh interpreter per run imports the leaderboard, pandas,
``rouge_score`` (with nltk and SciPy), sacrebleu and MeCab again, about 1.8 s of CPU each time,
which is most of a run on the tiny corpus. Here each run is a child of multiprocessing's
*forkserver*, whose server process imported those modules once (``set_forkserver_preload``):
the child is a process of its own (its own PID; a SIGKILL kills it alone and nothing it held
survives in the test), with the run's environment, working directory and arguments, and runs
the same ``leaderboard.__main__.main`` as ``python -m leaderboard``. The modules read their
settings from the environment when called, not when imported, so the preloaded copies behave as
freshly imported ones. A worker process started by ``subprocess`` stays the way the tests check
the command line itself (tests/integration/test_leases.py, tests/browser/test_shared_board.py).
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: What the forkserver's server imports once: the CLI and what the worker's stages warm up.
PRELOAD = [
    "leaderboard.__main__",
    "etclib.metrics.rouge",
    "etclib.metrics.bleu",
    "rouge_score.rouge_scorer",
    "sacrebleu",
    "MeCab",
]

_context: multiprocessing.context.ForkServerContext | None = None


def _forkserver() -> multiprocessing.context.ForkServerContext:
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        _context = context
    return _context


@dataclass(frozen=True)
class Finished:
    """A run's exit code (``-9``: SIGKILLed, as ``subprocess`` reports it) and its output
    (stdout and stderr together, in order)."""

    returncode: int
    output: str


def _child(args: list[str], env: dict[str, str], cwd: str, log: str) -> None:
    """In the forked process: the run's environment, folder and output file, then the CLI."""
    import sys

    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    from leaderboard.__main__ import main

    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


def run_worker(args: list[str], env: dict[str, str], cwd: Path, timeout: float) -> Finished:
    """``python -m leaderboard worker *args`` in a forked process with environment ``env`` in
    folder ``cwd``; waits for its end (``TimeoutError`` after ``timeout`` seconds, the process
    killed)."""
    with tempfile.TemporaryDirectory(prefix="etc-worker-run-") as folder:
        log = str(Path(folder) / "output.txt")
        process = _forkserver().Process(
            target=_child, args=(["worker", *args], dict(env), str(cwd), log)
        )
        process.start()
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()
            raise TimeoutError(f"leaderboard worker {' '.join(args)} ran past {timeout:.0f} s")
        return Finished(process.exitcode, Path(log).read_text(errors="replace"))
