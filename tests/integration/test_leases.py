"""Several processes on one board, on every engine (the embedded SQLite file and PostgreSQL):
worker processes, leases, a SIGKILLed worker's job claimed again, results stored once, the site
without scoring threads.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from leaderboard import queue, worker
from leaderboard.db import open_db
from tests.conftest import REPO
from tests.fixtures.board import age_leases, process_env, variant

META = {"name": "My model", "team": "Lab", "setting": "few-shot"}


@pytest.fixture
def board(tiny_corpus, monkeypatch, board_engine):
    """A board of this test's own on each engine, on the tiny corpus; its test items."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_RETRY_BACKOFF", "0")
    yield split_items(load_corpus(tiny_corpus), "test")
    lb.close_all()  # before the database is dropped


def q(sql: str, params=()) -> list[tuple]:
    return open_db().query(sql, list(params))


def _worker(tiny_corpus: Path, *args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "leaderboard", "worker", *args],
        env=process_env(tiny_corpus, **env),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_two_worker_processes_score_each_stage_once(board, tiny_corpus):
    ids = [lb.submit(variant(board, n), {**META, "contact": f"{n}@x.org"}).id for n in range(6)]
    workers = [_worker(tiny_corpus, "--concurrency", "2", "--once", "--timeout", "300")]
    workers.append(_worker(tiny_corpus, "--concurrency", "2", "--once", "--timeout", "300"))
    outputs = [w.communicate(timeout=400)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    # each (submission, stage) has one job, done, and each metric group one score row
    jobs = q("SELECT submission_id, stage, status, count(*) FROM jobs GROUP BY 1, 2, 3")
    assert sorted((sid, stage, st, n) for sid, stage, st, n in jobs) == sorted(
        (sid, "lexical", "done", 1) for sid in ids
    )
    groups = q("SELECT submission_id, metric_group, count(*) FROM scores GROUP BY 1, 2")
    assert {(sid, g) for sid, g, _ in groups} == {
        (sid, g) for sid in ids for g in ("bleu", "rouge", "category")
    }
    assert {n for _, _, n in groups} == {1}
    assert [lb.status(sid)["status"] for sid in ids] == ["scored"] * 6
    # the per-item rows were stored once per score row
    (dupes,) = q(
        "SELECT count(*) FROM (SELECT score_id, item_index FROM item_scores "
        "GROUP BY 1, 2 HAVING count(*) > 1) d"
    )[0]
    assert dupes == 0


def test_a_sigkilled_workers_job_is_claimed_again_after_its_lease(board, tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_LB_LEASE_SECONDS", "600")
    sid = lb.submit(variant(board, 0), {**META, "contact": "a@x.org"}).id
    # the worker SIGKILLs itself once it holds the job (a fault point)
    proc = _worker(tiny_corpus, "--concurrency", "1", ETC_FAULTPOINTS="after_claim:1")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL and "faultpoint after_claim:1" in out, out
    assert q("SELECT claimed_by LIKE ? FROM jobs WHERE status = 'running'", [
        f"pid {proc.pid} %"
    ]) == [(True,)]  # fmt: skip
    assert lb.status(sid)["status"] == "scoring"  # nobody is scoring it any more
    assert lb.process_jobs() == 0  # its lease has not expired yet: not claimed
    assert age_leases(300) == 1
    assert lb.process_jobs() == 0  # half of it is left
    assert age_leases(301) == 1
    assert lb.process_jobs() == 1  # expired: claimed again and scored here
    st = lb.status(sid)
    assert st["status"] == "scored"
    assert any("lease of 600 s expired" in h["message"] for h in st["history"])
    assert q("SELECT status, attempts, crashes, solo_crashes FROM jobs") == [("done", 2, 1, 1)]
    assert q("SELECT count(*) FROM scores")[0][0] == 3  # bleu, rouge, category: once each


def test_a_running_workers_heartbeat_keeps_its_lease(board, monkeypatch):
    """The heartbeat thread renews a lease that had run out (aged past its end) before another
    worker's claim finds it expired."""
    monkeypatch.setenv("ETC_LB_LEASE_SECONDS", "1")
    lb.submit(variant(board, 0), {**META, "contact": "a@x.org"})
    db = open_db()
    engine = type(db)
    beat, renewed = engine.beat, threading.Event()
    aged = threading.Event()
    beats_after = []

    def observed_beat(self) -> int:
        started_after = aged.is_set()
        count = beat(self)
        if started_after and count:
            beats_after.append(count)
            renewed.set()
        return count

    monkeypatch.setattr(engine, "beat", observed_beat)
    job = queue.claim(db, worker.worker_name())  # starts the heartbeat thread
    assert job is not None
    assert age_leases(3600) == 1  # an hour without a heartbeat: expired
    aged.set()
    assert renewed.wait(timeout=60)  # the next beat (every 1/3 s) renews it
    assert beats_after == [1]
    assert queue.reclaim_expired(db) == 0
    assert q("SELECT status FROM jobs") == [("running",)]
    assert worker.run_job(db, job)
    assert q("SELECT status FROM jobs") == [("done",)]


def test_closing_the_board_waits_for_a_lease_renewal_in_progress(board, monkeypatch):
    """A board closed while its heartbeat thread renews the leases waits for that renewal
    before its connections are closed (closing a SQLite connection that another thread was
    using crashed a test worker: a segmentation fault in the sqlite3 module): the renewal in
    progress completes, and only then are the process's jobs put back and the connections
    closed."""
    monkeypatch.setenv("ETC_LB_LEASE_SECONDS", "1")
    lb.submit(variant(board, 0), {**META, "contact": "a@x.org"})
    db = open_db()
    engine = type(db)
    beat, requeue = engine.beat, engine._requeue_own_jobs
    inside, release, requeued = threading.Event(), threading.Event(), threading.Event()
    outcome: list[object] = []

    def held_beat(self) -> int:
        if inside.is_set():
            return beat(self)
        inside.set()  # the renewal has begun; it goes on when the test says
        release.wait(timeout=60)
        try:
            outcome.append(beat(self))
        except Exception as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)
            raise
        return outcome[-1]

    order: list[str] = []  # what close() did first: wait for the heartbeat, or go on
    progressed = threading.Event()

    def observed_requeue(self) -> None:
        order.append("requeued")
        progressed.set()
        requeued.set()
        requeue(self)

    monkeypatch.setattr(engine, "beat", held_beat)
    monkeypatch.setattr(engine, "_requeue_own_jobs", observed_requeue)
    job = queue.claim(db, worker.worker_name())  # starts the heartbeat thread
    assert job is not None
    assert inside.wait(timeout=60)
    heartbeat = db._heartbeat
    join = heartbeat.join

    def observed_join(timeout=None):
        order.append("joined")
        progressed.set()
        return join(timeout)

    heartbeat.join = observed_join
    closer = threading.Thread(target=db.close, name="closer")
    closer.start()
    try:
        assert progressed.wait(timeout=60)
        assert order[0] == "joined", (
            "close() went on to put the jobs back and close the connections while the "
            "heartbeat was inside a renewal"
        )
    finally:
        release.set()
        closer.join(timeout=60)
    assert not closer.is_alive()
    assert outcome == [1]  # the renewal completed on an open connection
    assert requeued.is_set() and db.closed
    assert q("SELECT status FROM jobs") == [("queued",)]  # put back by the clean close


def test_a_late_result_of_a_reclaimed_job_is_stored_once(board, monkeypatch):
    """A worker that was slow, not dead: its job was claimed again, both finish; the result
    is stored once and the second is dropped."""
    monkeypatch.setenv("ETC_LB_LEASE_SECONDS", "1")
    sid = lb.submit(variant(board, 3), {**META, "contact": "a@x.org"}).id
    db = open_db()
    slow = queue.claim(db, "pid 1 elsewhere abc lb-worker-1", process="pid 1 elsewhere abc")
    assert age_leases(2) == 1  # no heartbeat from that process: its lease expires
    again = queue.claim(db, worker.worker_name())
    assert again is not None and again.id == slow.id
    assert worker.run_job(db, again)
    assert worker.run_job(db, slow)  # the late one: nothing more is stored
    assert q("SELECT count(*) FROM scores")[0][0] == 3
    assert q("SELECT count(*) FROM item_scores")[0][0] == 3 * len(board)
    assert lb.status(sid)["status"] == "scored"
    # and the unique constraint holds under the application's check too
    from leaderboard.scoring import compute, store_result

    result = compute(db, again)
    with db.write() as cur:
        assert store_result(cur, again, result) == []
    assert q("SELECT count(*) FROM scores")[0][0] == 3


def test_stages_of_one_submission_finishing_together_leave_the_right_status(board, monkeypatch):
    """Two workers finishing two stages of one submission at the same moment: the submission's
    row lock makes the second see the first, so the status ends "scored", not "partially"."""
    monkeypatch.setenv("ETC_ADMIN_TOKEN", "t" * 30)
    sid = lb.submit(variant(board, 0), {**META, "contact": "a@x.org"}).id
    assert lb.process_jobs() == 1
    lb.rescore(sid, "t" * 30, ["lexical"])
    lb.rescore(sid, "t" * 30, ["lexical"])  # already queued: not twice
    db = open_db()
    with db.write() as cur:
        queue.enqueue(cur, sid, "lexical", {"follow": False})
    jobs = [queue.claim(db, f"{worker.worker_name()}-{i}") for i in range(2)]
    assert all(jobs)
    barrier = threading.Barrier(2)

    def finish(job):
        barrier.wait()
        worker.run_job(db, job)

    threads = [threading.Thread(target=finish, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert lb.status(sid)["status"] == "scored"
    assert q("SELECT count(*) FROM jobs WHERE status <> 'done'")[0][0] == 0


def test_the_site_runs_no_scoring_threads_with_workers_zero(board, monkeypatch):
    monkeypatch.setenv("ETC_LB_WORKERS", "0")
    pool = lb.start_workers()
    assert pool.threads == []
    assert not [t for t in threading.enumerate() if t.name.startswith("lb-worker")]
    sid = lb.submit(variant(board, 0), {**META, "contact": "a@x.org"}).id
    assert not [t for t in threading.enumerate() if t.name.startswith("lb-worker")]
    assert lb.status(sid)["status"] == "queued"  # left for the worker processes
