"""The PostgreSQL dialect: one query text for every engine, against a real PostgreSQL server."""

from __future__ import annotations

import contextlib

import pytest

from etclib.storage import Fault, dialect


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
    con = dialect("postgresql").connect(postgres_url)
    try:
        con.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        con.executemany("INSERT INTO t VALUES (?, ?)", [(1, "50% 嬉しい?"), (2, "b")])
        rows = con.execute("SELECT a, b FROM t WHERE b LIKE '%嬉しい%' AND a = ?", [1]).fetchall()
        assert rows == [(1, "50% 嬉しい?")]
        con.commit()
    finally:
        con.close()
    lender = dialect("postgresql").lender(postgres_url)
    try:
        got = lender.reader(contextlib.nullcontext).execute(
            "SELECT count(*) FROM t WHERE a > ?", [0]
        )
        assert got.fetchone() == (2,)
    finally:
        lender.close()


def test_a_wrong_password_says_which_database_without_the_password(postgres_server):
    bad = postgres_server.url().replace(postgres_server.password, "wrong-password")
    with pytest.raises(Fault) as err:
        dialect("postgresql").connect(bad)
    assert err.value.kind == "server"
    assert "***" in str(err.value) and "wrong-password" not in str(err.value)
