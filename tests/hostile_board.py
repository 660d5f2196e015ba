"""What the hostile-storage tests (integration/test_queue.py, integration/test_storage_faults.py) share: the
admin token and metadata, the database-closing and tiny-corpus fixtures (imported by name: the
``tiny`` fixture is ``tiny_fixture``), files and job helpers."""

from __future__ import annotations

import pytest

import leaderboard as lb
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items
from leaderboard import worker
from leaderboard.db import open_db

TOKEN = "a-long-enough-admin-token-0123456789"
META = {"name": "Model", "team": "Lab", "setting": "few-shot"}


@pytest.fixture(autouse=True)
def _close_databases(monkeypatch):
    monkeypatch.setenv("ETC_LB_RETRY_BACKOFF", "0")
    yield
    lb.close_all()


@pytest.fixture(name="tiny")
def tiny_fixture(tiny_corpus, monkeypatch, board_engine):
    """The tiny corpus (20 test items) as ETC_DATA_DIR; its test items. The test runs on both
    engines (unless marked ``embedded_only``)."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    return split_items(load_corpus(tiny_corpus), "test")


def jsonl(items, n: int = 0) -> bytes:
    """A distinct valid file per ``n``: the reference, with item k's text marked when k < n."""
    return dumps_jsonl(
        (it.key, f"{it.reference}{'ね' * (k < n)}") for k, it in enumerate(items)
    ).encode("utf-8")


def submit_many(items, count: int) -> list[str]:
    return [lb.submit(jsonl(items, n), {**META, "contact": f"c{n}@x.org"}).id for n in range(count)]


def job_rows(where: str = "", params=()) -> list[tuple]:
    sql = "SELECT id, submission_id, status, error FROM jobs" + (f" WHERE {where}" if where else "")
    return open_db().query(sql + " ORDER BY id", list(params))


def fail_next(monkeypatch) -> None:
    """Run the next queued job with a scorer that raises: the job fails (on either engine)."""
    from etclib.errors import EtcError

    def boom(db, job):
        raise EtcError("the scorer broke (a test)")

    with monkeypatch.context() as m:
        m.setattr(worker, "compute", boom)
        assert lb.process_jobs(max_jobs=1) == 1
