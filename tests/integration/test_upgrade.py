"""A board converted from a DuckDB file of an earlier version (``migrate --from``) ranks,
scores and continues its ids; ``migrate`` copies such a file into PostgreSQL too."""

from __future__ import annotations

import leaderboard as lb
from leaderboard import queue
from leaderboard.db import open_db
from tests.fixtures.board import duck_tables, legacy_copy


def test_the_converted_board_ranks_scores_and_continues_its_ids(tmp_path, monkeypatch, tiny_corpus):
    from leaderboard.__main__ import main

    path = legacy_copy(tmp_path / "lb.duckdb")
    top_job = max(r[0] for r in duck_tables(path)["jobs"])
    top_score = max(r[0] for r in duck_tables(path)["scores"])
    assert main(["migrate", "--from", str(path), "--to", str(tmp_path / "lb.sqlite")]) == 0
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(tmp_path / "lb.sqlite"))
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_RETRY_BACKOFF", "0")
    ranking = lb.ranking()
    names = set(ranking["name"])
    assert {"model 0", "model 7", "model 11"} <= names and "model 3" not in names  # hidden
    queued = open_db().query("SELECT id FROM submissions WHERE status = 'queued'")
    assert len(queued) == 1
    assert lb.process_jobs() == 1
    assert lb.status(queued[0][0])["status"] == "scored"
    with open_db().write() as cur:
        new_job = queue.enqueue(cur, queued[0][0], "lexical", {"follow": False})
    (new_score,) = open_db().query("SELECT min(id) FROM scores WHERE submission_id = ?", queued[0])[
        0
    ]
    assert new_job == top_job + 1 and new_score == top_score + 1


def test_migrate_copies_a_legacy_board_file_to_postgresql(tmp_path, monkeypatch, postgres_url):
    from leaderboard.__main__ import main

    path = legacy_copy(tmp_path / "old.duckdb")
    before = duck_tables(path)
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    assert main(["migrate", "--to", postgres_url]) == 0
    server = open_db(postgres_url)
    for table in ("submissions", "jobs", "scores", "item_scores", "moderation_log"):
        (n,) = server.query(f"SELECT count(*) FROM {table}")[0]
        assert n == len(before[table]), table
