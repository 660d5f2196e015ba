"""The test PostgreSQL server (tests/pgserver.py): real, on loopback, a database per test."""

from __future__ import annotations

import psycopg


def test_a_database_of_its_own_on_loopback(postgres_server, postgres_url):
    with psycopg.connect(postgres_url) as con:
        con.execute("CREATE TABLE t (a int)")
        con.execute("INSERT INTO t VALUES (2)")
        assert con.execute("SELECT a + 1 FROM t").fetchone() == (3,)
        (addr,) = con.execute("SELECT inet_server_addr()::text").fetchone()
        assert addr.startswith("127.0.0.1")
    other = postgres_server.new_database()
    try:
        with psycopg.connect(other) as con:
            assert con.execute("SELECT to_regclass('t')").fetchone() == (None,)
    finally:
        postgres_server.drop_database(other)
