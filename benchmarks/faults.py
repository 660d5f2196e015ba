"""How fast the leaderboard's commands refuse a damaged board, and how long a worker takes from
its start to a job's fault point: the timings that tests/integration/test_storage_faults.py and
tests/integration/test_leaderboard.py no longer bound (they assert counts: no sleep, no retry, no scoring
thread, kills == kills wanted).

1. Each ``python -m leaderboard`` command on a truncated DuckDB board (a process each, as an
   operator runs it): wall time to its exit status 7 (issue #12's target: within 10 s; issue
   #23's hostile round saw 0.5-0.7 s).
2. ``worker --once`` with ``ETC_FAULTPOINTS=after_compute:1``: wall time from the start of the
   process to its SIGKILL at the fault point (start-up, opening, warming, one job's compute).

Run: .venv/bin/python benchmarks/faults.py   (the tiny corpus of tests/data; no real corpus)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

BUDGET_S = 10.0
COMMANDS = {
    "show": ["show"],
    "status": ["status", "abcdef123456"],
    "export": ["export", "--format", "json"],
    "worker": ["worker", "--once", "--timeout", "5"],
}


def main() -> int:
    from tests.data.make_tiny_corpus import write_tiny_corpus

    work = Path(tempfile.mkdtemp(prefix="etc-bench-faults-"))
    corpus = write_tiny_corpus(work / "tiny")
    board = work / "leaderboard.duckdb"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HOME": str(work),
        "ETC_DATA_DIR": str(corpus),
        "ETC_LEADERBOARD_DB": str(board),
        "ETC_CACHE_DIR": str(work / "cache"),
        "ETC_LB_RETRY_BACKOFF": "0",
        "ETC_PROGRESS": "0",
        "HF_HUB_OFFLINE": "1",
    }
    os.environ.update({k: env[k] for k in ("ETC_DATA_DIR", "ETC_LEADERBOARD_DB", "HOME")})
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    test = items(load_corpus(corpus), "test")
    data = dumps_jsonl((it.key, it.reference) for it in test).encode()
    lb.submit(data, {"name": "m", "team": "t", "setting": "few-shot", "contact": "a@x.org"})
    lb.close_all()
    Path(str(board) + ".lock").unlink(missing_ok=True)

    cmd = [sys.executable, "-m", "leaderboard"]
    started = time.perf_counter()
    proc = subprocess.run(
        [*cmd, "worker", "--once", "--timeout", "120"],
        env={**env, "ETC_FAULTPOINTS": "after_compute:1"},
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    to_fault = time.perf_counter() - started
    assert proc.returncode == -signal.SIGKILL, proc.stderr

    good = board.read_bytes()
    board.write_bytes(good[: len(good) // 2])  # truncated
    Path(str(board) + ".lock").unlink(missing_ok=True)
    print(f"CPUs: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    print(f"worker start to its fault point after_compute:1: {to_fault:.2f} s")
    worst = 0.0
    for name, argv in COMMANDS.items():
        started = time.perf_counter()
        proc = subprocess.run([*cmd, *argv], env=env, cwd=REPO, capture_output=True, text=True)
        took = time.perf_counter() - started
        worst = max(worst, took)
        print(f"{name:>7} on a truncated board: exit {proc.returncode} in {took:.2f} s")
    print(f"slowest refusal: {worst:.2f} s (budget {BUDGET_S:g} s)")
    return 0 if worst < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
