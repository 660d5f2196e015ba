"""The first lexical job of a fresh worker process, with and without the stages' warm-up.

A throw-away board on the real corpus gets ``--runs`` x 2 submissions (1,010 test items each:
a different train transcription per item). Then fresh processes, alternating, each open the
board as ``python -m leaderboard worker`` does and run one job: *cold* claims at once (what a
worker did before the lexical stage had a warm-up: MeCab, sacrebleu, rouge-score with nltk, the
corpus and the category classifier load during its first job); *warm* first calls
``leaderboard.stages.warm()`` (what the worker command does before it claims). Printed: each
process's warm-up and first-job times, and the load average. The classifier is trained once
into the throw-away cache before the runs (a running site has it cached).

Run:  ETC_DATA_DIR=... .venv/bin/python benchmarks/worker_warm.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
mode, n = sys.argv[1], sys.argv[2:]
import leaderboard as lb
from leaderboard import stages, worker
if mode == "submit":
    from etclib.data.corpus import load_corpus
    from etclib.tracks.predictions import dumps_jsonl
    from etclib.data.task import items
    c = load_corpus()
    its, train = items(c, "test"), [it.reference for it in items(c, "train")]
    for k in map(int, n):
        data = dumps_jsonl((it.key, train[(i * 7919 + k) % len(train)]) for i, it in enumerate(its))
        lb.submit(data.encode(), {"name": f"m{k}", "team": "t", "setting": "few-shot",
                                  "contact": f"c{k}@x.org"})
    from etclib.tracks.categories import classifier
    classifier.cached(c, "transcription")  # trained once, as a running site has it
    sys.exit()
db = lb.open_db()
t0 = time.perf_counter()
if mode == "warm":
    stages.warm()
t1 = time.perf_counter()
assert worker.run_one(db)
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f}")
"""


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "ETC_CACHE_DIR": f"{tmp}/cache",
            "ETC_LEADERBOARD_DB": f"{tmp}/lb.duckdb",
            "ETC_STUDIES_DB": f"{tmp}/studies.sqlite",
            "ETC_LB_WORKERS": "0",
            "ETC_JUDGE_PROVIDER": "",
        }

        def child(*argv: str) -> str:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, *argv], env=env, capture_output=True, text=True
            )
            if out.returncode:
                sys.exit(out.stderr)
            return out.stdout.strip()

        child("submit", *map(str, range(2 * args.runs)))
        got: dict[str, list[tuple[float, float, str]]] = {"cold": [], "warm": []}
        for _ in range(args.runs):
            for mode in ("cold", "warm"):
                warm, job = map(float, child(mode).split())
                got[mode].append((warm, job, load()))
                print(
                    f"{mode}: warm-up {warm:.2f} s, first lexical job {job:.2f} s (load {load()})"
                )
        for mode, rows in got.items():
            jobs = [j for _, j, _ in rows]
            print(
                f"{mode}: first lexical job median {statistics.median(jobs):.2f} s "
                f"(min {min(jobs):.2f}, max {max(jobs):.2f}); warm-up median "
                f"{statistics.median(w for w, _, _ in rows):.2f} s"
            )


if __name__ == "__main__":
    main()
