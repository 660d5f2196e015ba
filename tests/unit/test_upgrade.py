"""A board file written by the DuckDB engine (tests/data/legacy_board.duckdb.gz, made by the
code of main before issue #28: tests/data/make_legacy_board.py) is opened by the SQLite board
and upgraded in place with every row intact; the old default path keeps working; a damaged
legacy file is refused and left as it was; ``migrate`` still copies a legacy file to PostgreSQL.

The comparison here reads both files with their own drivers (duckdb, sqlite3) and compares the
sorted rows of every table, value by value, without the project's copier or digest.
"""

from __future__ import annotations

import gzip
import logging
import os
import shutil
import sqlite3
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

import leaderboard as lb
from leaderboard.db import SCHEMA_VERSION, open_db

LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy_board.duckdb.gz"


#: Rows per table in the fixture, counted when it was made (make_legacy_board.py).
EXPECTED_SUBMISSIONS = 5


def legacy_copy(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(LEGACY) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def _value(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, datetime):
        return v.isoformat(" ")
    if isinstance(v, memoryview):
        return bytes(v)
    return v


def _sqlite_value(v):
    # SQLite keeps timestamps as "YYYY-MM-DD HH:MM:SS.ffffff" text
    if isinstance(v, str) and len(v) == 26 and v[4] == "-" and v[10] == " " and v[19] == ".":
        return datetime.fromisoformat(v).isoformat(" ")
    return v


def duck_tables(path: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [
            t
            for (t,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
            ).fetchall()
            if t != "schema_version"
        ]
        return {
            t: sorted(
                (
                    tuple(_value(v) for v in row)
                    for row in con.execute(f"SELECT * FROM {t}").fetchall()
                ),
                key=repr,
            )
            for t in names
        }
    finally:
        con.close()


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


def test_a_duckdb_board_is_upgraded_in_place_with_every_row_intact(tmp_path, monkeypatch, caplog):
    path = legacy_copy(tmp_path / "board.duckdb")
    original = path.read_bytes()
    before = duck_tables(path)
    assert len(before["submissions"]) == EXPECTED_SUBMISSIONS
    assert {"scores", "item_scores", "score_arrays", "limit_events"} <= set(before)
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    with caplog.at_level(logging.WARNING, logger="leaderboard.upgrade"):
        db = open_db(create=False)
    said = [r.getMessage() for r in caplog.records if r.name == "leaderboard.upgrade"]
    assert len(said) == 1 and "kept at" in said[0] and "board.duckdb.duckdb-backup" in said[0]
    assert db.engine == "sqlite" and db.schema_version() == SCHEMA_VERSION
    backup = tmp_path / "board.duckdb.duckdb-backup"
    assert backup.read_bytes() == original  # the DuckDB file, kept as it was
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    lb.close_all()
    for table, rows in before.items():
        got = sqlite_rows(path, table, duck_columns(backup, table))
        assert len(got) == len(rows), table
        assert got == rows, table
    # opened again: nothing more to upgrade, nothing said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="leaderboard.upgrade"):
        db = open_db(create=False)
    assert not [r for r in caplog.records if r.name == "leaderboard.upgrade"]
    assert not (tmp_path / "board.duckdb.duckdb-backup2").exists()


def test_the_old_default_path_is_upgraded_into_the_new_one(tmp_path, monkeypatch):
    monkeypatch.delenv("ETC_LEADERBOARD_DB")
    monkeypatch.chdir(tmp_path)
    old = legacy_copy(tmp_path / "data" / "leaderboard.duckdb")
    original = old.read_bytes()
    db = open_db(create=False)
    assert Path(db.label) == Path("data") / "leaderboard.sqlite"
    assert db.query("SELECT count(*) FROM submissions")[0][0] == EXPECTED_SUBMISSIONS
    assert old.read_bytes() == original  # stays where it was, as the backup
    lb.close_all()
    assert open_db(create=False).query("SELECT count(*) FROM submissions")[0][0] == 5


def test_a_damaged_legacy_file_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    path = legacy_copy(tmp_path / "board.duckdb")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    damaged = path.read_bytes()
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    with pytest.raises(lb.StorageError) as err:
        open_db(create=False)
    text = str(err.value)
    assert str(path) in text and "Nothing was changed" in text
    assert path.read_bytes() == damaged
    left = [n for n in os.listdir(tmp_path) if n.startswith("board")]
    assert left == ["board.duckdb"]  # no half-made SQLite file, no backup
