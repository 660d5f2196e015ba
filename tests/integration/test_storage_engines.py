"""The storage layer's dialects, one engine-neutral suite run on each engine.

Each test opens a connection of its engine through its dialect (a SQLite file in WAL mode; a
database of its own on the test session's real PostgreSQL server, skipped with the reason where
the machine has none) and asks the dialect for everything that differs: schema statements,
transactions, sequences, bulk inserts, the lease clock, the table copier. The expected values
are the rows written here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from etclib.storage import copier, dialect_for
from etclib.storage.dialects import sqlite as sqlite_engine

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY,
    name VARCHAR,
    data BLOB,
    score DOUBLE PRECISION,
    made_at TIMESTAMP,
    ok BOOLEAN
);
CREATE SEQUENCE item_ids START 5
"""
COLUMNS = ["id", "name", "data", "score", "made_at", "ok"]
ROWS = [
    (1, "嬉しいと感じている", b"\x00\xffbytes", 0.1, datetime(2026, 1, 2, 3, 4, 5, 678901), True),
    (2, "", b"", -2.5, datetime(2025, 12, 31, 23, 59, 59), False),
    (3, None, None, None, None, None),
]


def create_schema(con, ddl: str = SCHEMA) -> None:
    """The schema's statements as the connection's dialect takes them."""
    for statement in filter(str.strip, ddl.split(";")):
        for sql in con.dialect.ddl(statement):
            con.execute(sql)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path) -> Iterator[tuple[Any, str]]:
    """(connection, target) of one engine, with the test table made by its dialect."""
    if request.param == "sqlite":
        target: str = str(tmp_path / "store.sqlite")
        con = sqlite_engine.connect(target)
    else:
        target = request.getfixturevalue("postgres_url")
        con = dialect_for(target).connect(target, autocommit=True)
    assert dialect_for(target).name == request.param
    create_schema(con)
    try:
        yield con, target
    finally:
        con.close()


def _canonical(row) -> list:
    """A row written one way, by hand (not etclib's canonical form)."""
    out = []
    for v in row:
        if isinstance(v, bool):
            out.append(int(v))
        elif isinstance(v, float):
            out.append(repr(v))
        elif isinstance(v, datetime):
            out.append(v.isoformat())
        elif isinstance(v, (bytes, bytearray, memoryview)):
            out.append("bytes:" + bytes(v).hex())
        else:
            out.append(v)
    return out


def _fill(con, target) -> None:
    dialect = dialect_for(target)
    with dialect.transaction(con):
        dialect.insert_rows(con, "items", COLUMNS, ROWS)


def test_schema_and_bulk_insert_read_back_the_same_rows(store):
    con, target = store
    dialect = dialect_for(target)
    assert dialect.has_table(con, "items") and not dialect.has_table(con, "nothing")
    assert dialect.columns(con, "items") == COLUMNS
    _fill(con, target)
    got = con.execute(f"SELECT {', '.join(COLUMNS)} FROM items ORDER BY id").fetchall()
    assert [_canonical(r) for r in got] == [_canonical(r) for r in ROWS]
    # the time column reads back as a time on every engine
    assert got[0][4] == datetime(2026, 1, 2, 3, 4, 5, 678901)
    # the schema statements may run again (IF NOT EXISTS) without harm
    create_schema(con, SCHEMA.split("CREATE SEQUENCE")[0])
    assert con.execute("SELECT count(*) FROM items").fetchone()[0] == 3


def test_a_transaction_that_fails_leaves_nothing(store):
    con, target = store
    dialect = dialect_for(target)
    with pytest.raises(RuntimeError), dialect.transaction(con):
        dialect.insert_rows(con, "items", COLUMNS, ROWS[:2])
        raise RuntimeError("the step fails")
    assert con.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    with dialect.transaction(con):
        dialect.serialize(con, "items")  # a named lock inside a write: held to its end
        dialect.insert_rows(con, "items", COLUMNS, ROWS[:1])
    assert con.execute("SELECT count(*) FROM items").fetchone()[0] == 1


def test_sequences_start_where_declared_and_continue_after_a_set_value(store):
    con, target = store
    dialect = dialect_for(target)
    with dialect.transaction(con):
        assert [dialect.next_id(con, "item_ids") for _ in range(3)] == [5, 6, 7]
        dialect.set_sequence(con, "item_ids", 100)
        assert dialect.next_id(con, "item_ids") == 101


def test_the_lease_clock_tells_old_rows_from_new(store):
    con, target = store
    dialect = dialect_for(target)
    now = datetime.now(UTC).replace(tzinfo=None)
    with dialect.transaction(con):
        dialect.insert_rows(
            con,
            "items",
            ["id", "made_at"],
            [(1, now - timedelta(hours=1)), (2, now - timedelta(hours=3))],
        )
    for seconds, expected in ((60, [1, 2]), (2 * 3600, [2]), (5 * 3600, [])):
        sql, params = dialect.older_than("made_at", seconds)
        got = con.execute(f"SELECT id FROM items WHERE {sql} ORDER BY id", params).fetchall()
        assert [r[0] for r in got] == expected, seconds


def test_the_copier_moves_every_row_and_its_checksum_sees_a_change(store, tmp_path):
    con, target = store
    _fill(con, target)
    copy_path = tmp_path / "copy.sqlite"
    copy = sqlite_engine.connect(copy_path)
    try:
        create_schema(copy)
        with sqlite_engine.DIALECT.transaction(copy):
            assert copier.copy_table(con, copy, "items", COLUMNS, "id") == 3
        here = copier.table_digest(con, "items", COLUMNS)
        there = copier.table_digest(copy, "items", COLUMNS)
        # the checksum by hand: each row's JSON hashed, the hashes sorted and hashed together
        rows = sorted(
            hashlib.sha256(json.dumps(_canonical(r), ensure_ascii=False).encode()).digest()
            for r in ROWS
        )
        assert here == there == (3, hashlib.sha256(b"".join(rows)).hexdigest())
        copy.execute("UPDATE items SET name = 'x' WHERE id = 2")
        assert copier.table_digest(copy, "items", COLUMNS) != here
    finally:
        copy.close()
