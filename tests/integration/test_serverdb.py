"""etclib/storage/server.py: one query text for both engines, against a real PostgreSQL server."""

from __future__ import annotations

import pytest

from etclib.errors import ConfigError
from etclib.storage import server as serverdb


@pytest.mark.parametrize(
    ("target", "engine", "server"),
    [
        ("postgresql://u:p@h/db", "postgresql", True),
        ("postgres://h/db", "postgresql", True),
        (" postgresql://h/db", "postgresql", True),
        ("data/leaderboard.duckdb", "sqlite", False),
        ("data/studies.sqlite", "sqlite", False),
        ("/tmp/postgresql://x", "sqlite", False),
        (None, "sqlite", False),
    ],
)
def test_the_storage_layer_decides_the_engine_from_the_target(target, engine, server):
    from etclib.storage import dialect_for

    assert dialect_for(target).name == engine
    assert dialect_for(target).server is server


def test_queries_with_question_marks_run_on_the_server(postgres_url):
    con = serverdb.connect(postgres_url)
    try:
        con.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        con.executemany("INSERT INTO t VALUES (?, ?)", [(1, "50% 嬉しい?"), (2, "b")])
        rows = con.execute("SELECT a, b FROM t WHERE b LIKE '%嬉しい%' AND a = ?", [1]).fetchall()
        assert rows == [(1, "50% 嬉しい?")]
        con.commit()
    finally:
        con.close()
    with serverdb.pool(postgres_url).connection() as raw:
        assert serverdb.Connection(raw).execute(
            "SELECT count(*) FROM t WHERE a > ?", [0]
        ).fetchone() == (2,)
    serverdb.close_pools()


def test_a_wrong_password_says_which_database_without_the_password(postgres_server):
    bad = postgres_server.url().replace(postgres_server.password, "wrong-password")
    with pytest.raises(ConfigError) as err:
        serverdb.connect(bad)
    assert "***" in str(err.value) and "wrong-password" not in str(err.value)
    assert "Check the URL" in str(err.value)
