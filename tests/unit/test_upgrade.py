"""A board file written by the DuckDB engine of earlier versions (tests/data/legacy_board.duckdb.gz,
made by tests/data/make_legacy_board.py) is never opened as a board: opening it, or the old
default path beside a missing new one, says which ``migrate`` command converts it; that command
copies every row intact; a damaged legacy file is refused and left as it was.

The comparison here reads both files with their own drivers (duckdb, sqlite3) and compares the
sorted rows of every table, value by value, without the project's copier or digest.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

import leaderboard as lb
from leaderboard.db import open_db
from leaderboard.migrations import SCHEMA_VERSION
from tests.fixtures.board import duck_tables, legacy_copy

#: Rows per table in the fixture, counted when it was made (make_legacy_board.py).
EXPECTED_SUBMISSIONS = 5


def _sqlite_value(v):
    # SQLite keeps timestamps as "YYYY-MM-DD HH:MM:SS.ffffff" text
    if isinstance(v, str) and len(v) == 26 and v[4] == "-" and v[10] == " " and v[19] == ".":
        return datetime.fromisoformat(v).isoformat(" ")
    return v


def sqlite_rows(path: Path, table: str, columns: list[str]) -> list[tuple]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    finally:
        con.close()
    return sorted((tuple(_sqlite_value(v) for v in row) for row in rows), key=repr)


def duck_columns(path: Path, table: str) -> list[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    finally:
        con.close()


def test_a_duckdb_board_is_refused_with_the_command_that_converts_it(tmp_path, monkeypatch):
    path = legacy_copy(tmp_path / "lb" / "board.duckdb")
    original = path.read_bytes()
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    with pytest.raises(lb.StorageError) as err:
        open_db(create=True)
    text = str(err.value)
    assert "DuckDB file of an earlier version" in text and "\n" not in text
    assert f"migrate --from {path} --to {path.with_suffix('.sqlite')}" in text
    assert path.read_bytes() == original
    assert os.listdir(path.parent) == ["board.duckdb"]  # nothing made beside it


def test_the_old_default_board_is_named_rather_than_a_new_one_made(tmp_path, monkeypatch):
    monkeypatch.delenv("ETC_LEADERBOARD_DB")
    monkeypatch.chdir(tmp_path)
    legacy_copy(tmp_path / "data" / "leaderboard.duckdb")
    with pytest.raises(lb.StorageError, match="migrate --from data/leaderboard.duckdb"):
        open_db(create=True)
    assert sorted(os.listdir(tmp_path / "data")) == ["leaderboard.duckdb"]


def test_migrate_converts_a_duckdb_board_with_every_row_intact(tmp_path, monkeypatch, capsys):
    from leaderboard.__main__ import main

    path = legacy_copy(tmp_path / "board.duckdb")
    original = path.read_bytes()
    before = duck_tables(path)
    assert len(before["submissions"]) == EXPECTED_SUBMISSIONS
    assert {"scores", "item_scores", "score_arrays", "limit_events"} <= set(before)
    new = tmp_path / "board.sqlite"
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    assert main(["migrate", "--to", str(new)]) == 0
    assert "every table has the same rows and checksum" in capsys.readouterr().out
    assert path.read_bytes() == original  # only read
    for table, rows in before.items():
        got = sqlite_rows(new, table, duck_columns(path, table))
        assert got == rows, table
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(new))
    db = open_db(create=False)
    assert db.engine == "sqlite" and db.schema_version() == SCHEMA_VERSION


def test_a_damaged_legacy_file_is_refused_and_nothing_is_made(tmp_path, monkeypatch, capsys):
    from leaderboard.__main__ import main

    path = legacy_copy(tmp_path / "board.duckdb")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    damaged = path.read_bytes()
    new = tmp_path / "board.sqlite"
    assert main(["migrate", "--from", str(path), "--to", str(new)]) != 0
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert path.read_bytes() == damaged
    assert sqlite_rows(new, "submissions", ["id"]) == []  # the target holds nothing
