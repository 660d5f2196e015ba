"""Which embedded engine lets several processes share the board: the figures behind the choice
in docs/deploy.md ("The embedded board: why SQLite").

Two candidates, each driven by P processes at once for a few seconds on one file, every process
doing what a board process does: claims (read the next queued job, mark it running: one write
transaction) and reads (the count a page shows), half and half:

- ``sqlite``: SQLite in WAL mode, one connection per process kept open, ``BEGIN IMMEDIATE``
  for a claim, a 30 s busy timeout (what :mod:`etclib.storage.dialects.sqlite` does);
- ``duckdb``: DuckDB with short-lived connections under a cross-process lock file (``flock``:
  exclusive to write, shared to read; DuckDB lets one process open a file read-write, or many
  read-only, never both), opened and closed around every operation.

Printed per engine and process count: claims/s and reads/s (all processes together), the
median and 95th percentile latency of a read, and the load average (the figures are only
comparable on one machine under the same load).

    python benchmarks/embedded_engines.py [--seconds 5] [--processes 1 4]
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing as mp
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

JOBS = 20_000


def _setup_sqlite(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT, claimed_by TEXT)")
    con.executemany("INSERT INTO jobs VALUES (?, 'queued', NULL)", [(i,) for i in range(JOBS)])
    con.commit()
    con.close()


def _setup_duckdb(path: Path) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE jobs (id BIGINT PRIMARY KEY, status VARCHAR, claimed_by VARCHAR)")
    con.execute(f"INSERT INTO jobs SELECT range, 'queued', NULL FROM range({JOBS})")
    con.close()


def _sqlite_worker(path: str, seconds: float, name: str, out) -> None:
    con = sqlite3.connect(path, timeout=30, isolation_level=None)
    con.execute("PRAGMA busy_timeout = 30000")
    claims, reads = 0, []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        con.execute("BEGIN IMMEDIATE")
        row = con.execute("SELECT id FROM jobs WHERE status = 'queued' LIMIT 1").fetchone()
        con.execute(
            "UPDATE jobs SET status = 'running', claimed_by = ? WHERE id = ?", [name, row[0]]
        )
        con.execute("COMMIT")
        claims += 1
        t = time.perf_counter()
        con.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()
        reads.append(time.perf_counter() - t)
    con.close()
    out.put((claims, reads))


def _duckdb_worker(path: str, seconds: float, name: str, out) -> None:
    import duckdb

    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    claims, reads = 0, []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            con = duckdb.connect(path)
            row = con.execute("SELECT id FROM jobs WHERE status = 'queued' LIMIT 1").fetchone()
            con.execute(
                "UPDATE jobs SET status = 'running', claimed_by = ? WHERE id = ?", [name, row[0]]
            )
            con.close()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        claims += 1
        t = time.perf_counter()
        fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            con = duckdb.connect(path, read_only=True)
            con.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()
            con.close()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        reads.append(time.perf_counter() - t)
    os.close(lock)
    out.put((claims, reads))


ENGINES = {
    "sqlite": (_setup_sqlite, _sqlite_worker),
    "duckdb": (_setup_duckdb, _duckdb_worker),
}


def run(engine: str, processes: int, seconds: float) -> dict:
    setup, work = ENGINES[engine]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"bench.{engine}"
        setup(path)
        out = mp.get_context("spawn").Queue()
        procs = [
            mp.get_context("spawn").Process(target=work, args=(str(path), seconds, f"p{i}", out))
            for i in range(processes)
        ]
        for p in procs:
            p.start()
        results = [out.get() for _ in procs]
        for p in procs:
            p.join()
    claims = sum(c for c, _ in results)
    reads = sorted(r for _, rs in results for r in rs)
    return {
        "claims_per_s": claims / seconds,
        "reads_per_s": len(reads) / seconds,
        "read_ms_p50": 1000 * statistics.median(reads),
        "read_ms_p95": 1000 * reads[int(0.95 * (len(reads) - 1))],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 4])
    args = ap.parse_args()
    print(f"cores {os.cpu_count()}, load before {os.getloadavg()[0]:.2f}")
    print(f"{'engine':<8} {'procs':>5} {'claims/s':>10} {'reads/s':>10} {'read p50 ms':>12} "
          f"{'read p95 ms':>12} {'load':>6}")  # fmt: skip
    for processes in args.processes:
        for engine in ENGINES:
            got = run(engine, processes, args.seconds)
            print(
                f"{engine:<8} {processes:>5} {got['claims_per_s']:>10.0f} "
                f"{got['reads_per_s']:>10.0f} {got['read_ms_p50']:>12.2f} "
                f"{got['read_ms_p95']:>12.2f} {os.getloadavg()[0]:>6.2f}"
            )


if __name__ == "__main__":
    main()
