"""A studies file written by the earlier DuckDB engine is upgraded to SQLite in place on opening
(the storage layer's one upgrade function, as the board's): every row kept, the DuckDB file kept
beside it as ``<name>.duckdb-backup``; the old default ``data/studies.duckdb`` becomes the new
default ``data/studies.sqlite``; ``etclib studies migrate`` copies such a file into PostgreSQL.

The DuckDB file is written here with the duckdb package directly, with the DDL the studies used
when the engine was DuckDB (two of its tables), so the expected rows are the ones written here.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime

import pytest

from etclib.studies import annotation
from etclib.studies import db as studiesdb

#: The tables as the DuckDB-era code created them (etclib/studies/codes.py and
#: etclib/studies/annotation/store.py before the switch).
LEGACY_DDL = """
CREATE TABLE annotators (
    annotator_id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    code_hash VARCHAR NOT NULL UNIQUE,
    issued_at TIMESTAMP NOT NULL,
    revoked BOOLEAN NOT NULL
);
CREATE TABLE judge_decisions (
    decision_id VARCHAR PRIMARY KEY,
    submission_id VARCHAR NOT NULL,
    dialogue_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    side VARCHAR NOT NULL,
    unit VARCHAR NOT NULL,
    target VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    added_at TIMESTAMP NOT NULL
);
"""


ANNOTATORS = [
    ("a1", "注釈者Ａ", "hash-1", datetime(2026, 3, 1, 9, 30, 0, 250000), False),
    ("a2", "", "hash-2", datetime(2026, 3, 2, 10, 0), True),
]


DECISIONS = [
    (f"d{i}", "sub-x" if i < 3 else "sub-y", 100 + i, i % 2, "speaker", "precision",
     f"嬉しい{i}", "今日は楽しかった。", "Neutral", datetime(2026, 3, 3, 12, 0, i))
    for i in range(5)
]  # fmt: skip


def _legacy_file(path) -> bytes:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(LEGACY_DDL)
    con.executemany("INSERT INTO annotators VALUES (?, ?, ?, ?, ?)", ANNOTATORS)
    con.executemany("INSERT INTO judge_decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", DECISIONS)
    con.close()
    return path.read_bytes()


def _sqlite_rows(path, table: str) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
    finally:
        con.close()


def _as_stored(rows) -> list[tuple]:
    """The rows as SQLite holds them: times as text, booleans as 0 / 1."""
    out = []
    for row in rows:
        out.append(
            tuple(
                v.strftime("%Y-%m-%d %H:%M:%S.%f")
                if isinstance(v, datetime)
                else int(v)
                if isinstance(v, bool)
                else v
                for v in row
            )
        )
    return out


def test_a_duckdb_studies_file_is_upgraded_in_place_with_every_row(tmp_path, monkeypatch, caplog):
    path = tmp_path / "studies.duckdb"
    monkeypatch.setenv("ETC_STUDIES_DB", str(path))
    original = _legacy_file(path)
    with caplog.at_level(logging.WARNING, logger="etclib.studies"):
        subs = annotation.submissions()
    said = [r.getMessage() for r in caplog.records if r.name == "etclib.studies"]
    assert len(said) == 1 and "studies database" in said[0] and "duckdb-backup" in said[0]
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    assert (tmp_path / "studies.duckdb.duckdb-backup").read_bytes() == original
    assert _sqlite_rows(path, "annotators") == _as_stored(ANNOTATORS)
    assert _sqlite_rows(path, "judge_decisions") == _as_stored(DECISIONS)
    # the studies read the upgraded file: 3 decisions of sub-x, 2 of sub-y, none sampled
    got = {r["submission_id"]: (r["decisions"], r["sampled"]) for r in subs.to_dict("records")}
    assert got == {"sub-x": (3, 0), "sub-y": (2, 0)}
    # the study tables the old file did not have are there (empty), and writing works
    with studiesdb.connect() as con:
        assert con.execute("SELECT count(*) FROM annotation_answers").fetchone() == (0,)
        con.execute("UPDATE annotators SET revoked = ? WHERE annotator_id = 'a1'", [True])
    # opened again: nothing more to upgrade, nothing said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="etclib.studies"):
        with studiesdb.connect(read_only=True) as con:
            assert con.execute("SELECT count(*) FROM judge_decisions").fetchone() == (5,)
    assert not [r for r in caplog.records if r.name == "etclib.studies"]
    assert not (tmp_path / "studies.duckdb.duckdb-backup2").exists()


def test_the_old_default_file_becomes_the_new_default(tmp_path, monkeypatch):
    monkeypatch.delenv("ETC_STUDIES_DB", raising=False)
    monkeypatch.setenv("ETC_SECRETS_FILE", str(tmp_path / "no-secrets.toml"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    old = tmp_path / "data" / "studies.duckdb"
    original = _legacy_file(old)
    with studiesdb.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM annotators").fetchone() == (2,)
    new = tmp_path / "data" / "studies.sqlite"
    assert new.read_bytes()[:16] == b"SQLite format 3\x00"
    assert old.read_bytes() == original  # the old default stays where it was
    assert _sqlite_rows(new, "judge_decisions") == _as_stored(DECISIONS)


def test_a_copy_that_cannot_be_placed_changes_nothing(tmp_path, monkeypatch):
    """A table this version does not know: refused, the DuckDB file left as it was."""
    import duckdb

    from etclib.errors import StoreError

    path = tmp_path / "studies.duckdb"
    _legacy_file(path)
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE retired_study (x INTEGER)")
    con.close()
    original = path.read_bytes()
    with pytest.raises(StoreError, match="'retired_study' that this version does not know"):
        with studiesdb.connect(path):
            pass
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("studies")) == [
        "studies.duckdb"
    ]
