"""The studies database's SQLite file under threads (a site's pages and scoring threads open it
at once)."""

from __future__ import annotations

import pytest

from etclib.studies import db as studiesdb


def test_serialize_holds_the_write_lock_until_the_block_ends(tmp_path):
    """A read-then-write step (drawing a sample) is one writer at a time across processes: on
    SQLite, serialize() takes the file's write lock, kept until the block commits or fails."""
    import sqlite3

    path = tmp_path / "studies.sqlite"
    with studiesdb.connect(path) as con:
        con.execute("CREATE TABLE t (x INTEGER)")

    def other_writer_gets_in() -> bool:
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc)
            return False
        finally:
            other.close()

    with studiesdb.connect(path) as con:
        assert other_writer_gets_in()
        con.serialize("t")
        con.execute("INSERT INTO t VALUES (1)")
        assert not other_writer_gets_in()
        with con.transaction():  # inside the serialized transaction: part of it
            con.execute("INSERT INTO t VALUES (2)")
        assert not other_writer_gets_in()
    assert other_writer_gets_in()
    with pytest.raises(RuntimeError), studiesdb.connect(path) as con:
        con.serialize("t")
        con.execute("INSERT INTO t VALUES (3)")
        raise RuntimeError("the step fails")
    assert other_writer_gets_in()
    with studiesdb.connect(path, read_only=True) as con:
        assert con.execute("SELECT x FROM t ORDER BY x").fetchall() == [(1,), (2,)]
