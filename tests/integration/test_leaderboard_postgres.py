"""The leaderboard on PostgreSQL: password-free errors, and migrating an embedded board.

The shared behaviour (submitting, scoring, limits, moderation, the board, several processes
and their leases: tests/integration/test_leases.py) runs on every engine; this file holds what only a
server board does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import queue
from leaderboard.db import open_db

REPO = Path(__file__).resolve().parents[2]
META = {"name": "My model", "team": "Lab", "setting": "few-shot"}


def variant(items, n: int) -> bytes:
    """A distinct valid file: the reference with the first n items replaced by the utterance."""
    return dumps_jsonl(
        (it.key, it.utterance if i < n else it.reference) for i, it in enumerate(items)
    ).encode()


def q(sql: str, params=()) -> list[tuple]:
    return open_db().query(sql, list(params))


def test_a_wrong_password_gives_a_typed_password_free_error(postgres_server, monkeypatch, capsys):
    bad = postgres_server.url().replace(postgres_server.password, "Wr0ng-s3cret")
    monkeypatch.setenv("ETC_LEADERBOARD_DB", bad)
    with pytest.raises(lb.StorageError) as err:
        open_db()
    assert "Wr0ng-s3cret" not in str(err.value) and "***" in str(err.value)
    from leaderboard.__main__ import main

    assert main(["show"]) == 7
    out = capsys.readouterr()
    assert "Wr0ng-s3cret" not in out.err + out.out and "PostgreSQL" in out.err


# --- migrate --to postgresql://... -------------------------------------------------------------


@pytest.fixture
def embedded(tiny_corpus, tmp_path, monkeypatch):
    """A scored embedded board: three submissions, one hidden, one re-scored, a failed job."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(tmp_path / "leaderboard.sqlite"))
    monkeypatch.setenv("ETC_ADMIN_TOKEN", "t" * 30)
    items = split_items(load_corpus(tiny_corpus), "test")
    ids = [lb.submit(variant(items, n), {**META, "contact": f"{n}@x.org"}).id for n in (0, 4, 9)]
    lb.process_jobs()
    lb.hide(ids[1], "t" * 30, "spam")
    lb.rescore(ids[2], "t" * 30)
    lb.process_jobs()
    db = open_db()
    with db.write() as cur:
        job = queue.enqueue(cur, ids[0], "lexical", {"follow": False})
        cur.execute("UPDATE jobs SET status = 'failed', error = 'boom' WHERE id = ?", [job])
    yield ids
    lb.close_all()


def test_migrate_copies_every_row_and_says_the_checksums_match(embedded, postgres_url, capsys):
    from leaderboard.__main__ import main

    src = open_db()
    tables = ("submissions", "predictions", "status_history", "jobs", "scores", "item_scores")
    counts = {t: src.query(f"SELECT count(*) FROM {t}")[0][0] for t in tables}
    history = {sid: [h["status"] for h in lb.status(sid)["history"]] for sid in embedded}
    board = lb.ranking()
    lb.close_all()
    assert main(["migrate", "--to", postgres_url]) == 0
    out = capsys.readouterr().out
    assert "every table has the same rows and checksum" in out and "NO" not in out
    assert "etc-test-password" not in out
    os.environ["ETC_LEADERBOARD_DB"] = postgres_url  # monkeypatch restores it
    dst = open_db()
    assert {t: dst.query(f"SELECT count(*) FROM {t}")[0][0] for t in tables} == counts
    assert {sid: [h["status"] for h in lb.status(sid)["history"]] for sid in embedded} == history
    moved = lb.ranking()
    assert list(moved["id"]) == list(board["id"])
    assert moved["rouge1"].tolist() == pytest.approx(board["rouge1"].tolist())
    # the copied board goes on: new ids follow the copied ones
    with dst.write() as cur:
        (job_id,) = cur.execute("SELECT nextval('job_ids')").fetchone()
    assert job_id > max(r[0] for r in dst.query("SELECT id FROM jobs"))


def test_migrate_refuses_a_non_empty_target_unless_told(embedded, postgres_url, capsys):
    from leaderboard.__main__ import main
    from leaderboard.migrate import migrate

    assert main(["migrate", "--to", postgres_url]) == 0
    capsys.readouterr()
    assert main(["migrate", "--to", postgres_url]) == 1
    err = capsys.readouterr().err
    assert "not empty" in err and "--replace" in err
    assert main(["migrate", "--to", postgres_url, "--replace"]) == 0
    report = migrate(open_db(), postgres_url, replace=True)
    assert report.ok and report.tables["submissions"].rows_target == 3


def test_the_checksum_sees_a_changed_value(embedded, postgres_url):
    from leaderboard.migrate import columns, migrate, table_digest

    report = migrate(open_db(), postgres_url)
    assert report.ok
    dst = open_db(postgres_url)
    with dst.write() as cur:
        cur.execute("UPDATE item_scores SET scores = '{}' WHERE item_index = 3")
    cols = columns(open_db(), "item_scores")
    assert (
        table_digest(dst.cursor(), "item_scores", cols)[1]
        != report.tables["item_scores"].sha_source
    )
