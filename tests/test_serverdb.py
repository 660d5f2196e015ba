"""etclib/serverdb.py: one query text for both engines, against a real PostgreSQL server."""

from __future__ import annotations

import pytest

from etclib import serverdb
from etclib.errors import ConfigError


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT ?", "SELECT %s"),
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        ("SELECT '?' , ?", "SELECT '?' , %s"),
        (
            "SELECT \"a?\" FROM t WHERE x LIKE 'ab%' AND y = ?",
            "SELECT \"a?\" FROM t WHERE x LIKE 'ab%%' AND y = %s",
        ),
        ("SELECT 10 % 3, ?", "SELECT 10 %% 3, %s"),
        ("SELECT '日本語？', ?", "SELECT '日本語？', %s"),
        ("SELECT 'it''s ?', ?", "SELECT 'it''s ?', %s"),
        ("", ""),
    ],
)
def test_translate(sql, expected):
    assert serverdb.translate(sql) == expected


def test_translate_without_parameters_leaves_the_text():
    assert (
        serverdb.translate("SELECT 10 % 3 WHERE '?'", has_params=False) == "SELECT 10 % 3 WHERE '?'"
    )


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("postgresql://u:p@h/db", True),
        ("postgres://h/db", True),
        ("data/leaderboard.duckdb", False),
        ("/tmp/postgresql://x", False),
        (None, False),
    ],
)
def test_is_url(target, expected):
    assert serverdb.is_url(target) is expected


def test_redacted_hides_the_password_only():
    assert (
        serverdb.redacted("postgresql://etc:s3cret@db:5432/lb") == "postgresql://etc:***@db:5432/lb"
    )
    assert serverdb.redacted("postgresql://db/lb") == "postgresql://db/lb"


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
