"""Run the scoring worker (a pool of threads) in this process.

With --once it exits when the queue is empty, or with status 8 after --timeout seconds
(default 3600) or when it stops after repeated errors. Before it claims a job it pays the
one-time costs of the stages that run (with the judge: its SDK, client and answer cache).

Example:
  python -m leaderboard worker --threads 2
  python -m leaderboard worker --once --timeout 600
"""

from __future__ import annotations

import argparse
import logging
import os
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--concurrency",
        "--threads",
        dest="threads",
        type=int,
        help="jobs scored at once, each in a thread (default $ETC_LB_WORKERS, else 2)",
    )
    p.add_argument("--once", action="store_true", help="exit when the queue is empty")
    p.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        help="with --once: give up (exit status 8) after this many seconds (default 3600)",
    )


def run(args: argparse.Namespace) -> int:
    import time

    import leaderboard as lb
    from leaderboard import settings, stages
    from leaderboard.errors import WorkerStoppedError
    from leaderboard.worker import pending_jobs

    db = lb.open_db()
    # the first job of each stage would otherwise pay its imports, clients and connections
    warmed = stages.warm()
    if warmed:
        print(f"warmed: {', '.join(warmed)}", flush=True)
    # ETC_LB_WORKERS=0 means "the site scores nothing"; a worker process always scores
    threads = args.threads or settings.workers() or settings.DEFAULT_WORKERS
    # the pool logs why it stopped for the site's log; this command prints it itself, once
    said = lambda record: not getattr(record, "worker_failure", False)  # noqa: E731
    logging.getLogger("leaderboard.worker").addFilter(said)
    pool = lb.start_workers(threads, db=db, warm_board=False)  # no visitor here
    print(f"worker: {len(pool.threads)} thread(s), PID {os.getpid()}; Ctrl-C to stop", flush=True)
    finished = True
    try:
        if args.once:
            finished = pool.wait_idle(args.timeout)
        else:
            while pool.running:
                time.sleep(1)
            if pool.failure:
                raise WorkerStoppedError(pool.failure)
    except KeyboardInterrupt:
        print("stopping after the current jobs ...", file=sys.stderr)
    finally:
        pool.stop(timeout=60.0 if finished else 2.0)
        logging.getLogger("leaderboard.worker").removeFilter(said)
    left = pending_jobs(db)
    if not finished:
        raise WorkerStoppedError(
            f"the queue did not finish within {args.timeout:g} s ({left} job(s) left; a job "
            "still running was put back in the queue). Run the worker again, or give a longer "
            "--timeout."
        )
    print(f"worker stopped; {left} job(s) still queued")
    return 0
