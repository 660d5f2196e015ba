"""A studies file written by the DuckDB engine of earlier versions is never opened as the studies
database: opening it (or the old default ``data/studies.duckdb`` beside a missing new default)
says which ``etclib studies migrate`` command converts it; that command copies every row, and
refuses a file with a table this version does not know.

The DuckDB file is written here with the duckdb package directly, with the DDL the studies used
when the engine was DuckDB (two of its tables), so the expected rows are the ones written here.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime

import pytest

from etclib.core.errors import StoreError
from etclib.studies import annotation
from etclib.studies import db as studiesdb
from tests.fixtures.studies import ANNOTATORS, DECISIONS, _legacy_file


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


def test_a_duckdb_studies_file_is_refused_with_the_command_that_converts_it(tmp_path, monkeypatch):
    path = tmp_path / "studies.duckdb"
    monkeypatch.setenv("ETC_STUDIES_DB", str(path))
    original = _legacy_file(path)
    with pytest.raises(StoreError) as err:
        annotation.submissions()
    text = str(err.value)
    assert "DuckDB file of an earlier version" in text
    assert f"etclib studies migrate --from {path} --to {tmp_path / 'studies.sqlite'}" in text
    assert path.read_bytes() == original


def test_migrate_converts_a_duckdb_studies_file_with_every_row(tmp_path, monkeypatch):
    from etclib.cli import main

    path = tmp_path / "studies.duckdb"
    original = _legacy_file(path)
    new = tmp_path / "studies.sqlite"
    assert main(["studies", "migrate", "--from", str(path), "--to", str(new)]) == 0
    assert path.read_bytes() == original  # only read
    assert _sqlite_rows(new, "annotators") == _as_stored(ANNOTATORS)
    assert _sqlite_rows(new, "judge_decisions") == _as_stored(DECISIONS)
    # the studies read the converted file: 3 decisions of sub-x, 2 of sub-y, none sampled
    monkeypatch.setenv("ETC_STUDIES_DB", str(new))
    subs = annotation.submissions()
    got = {r["submission_id"]: (r["decisions"], r["sampled"]) for r in subs.to_dict("records")}
    assert got == {"sub-x": (3, 0), "sub-y": (2, 0)}
    with studiesdb.connect() as con:  # the tables the old file did not have are there, empty
        assert con.execute("SELECT count(*) FROM annotation_answers").fetchone() == (0,)


def test_the_old_default_file_is_named_rather_than_a_new_one_made(tmp_path, monkeypatch):
    monkeypatch.delenv("ETC_STUDIES_DB", raising=False)
    monkeypatch.setenv("ETC_SECRETS_FILE", str(tmp_path / "no-secrets.toml"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    _legacy_file(tmp_path / "data" / "studies.duckdb")
    with pytest.raises(StoreError, match="migrate --from data/studies.duckdb"):
        with studiesdb.connect(read_only=True):
            pass
    assert os.listdir(tmp_path / "data") == ["studies.duckdb"]


def test_a_table_this_version_does_not_know_is_refused(tmp_path):
    """Nothing is copied, and the DuckDB file is left as it was."""
    import duckdb

    path = tmp_path / "studies.duckdb"
    _legacy_file(path)
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE retired_study (x INTEGER)")
    con.close()
    original = path.read_bytes()
    with pytest.raises(StoreError, match="does not know .retired_study."):
        studiesdb.migrate(path, tmp_path / "studies.sqlite")
    assert path.read_bytes() == original
    assert _sqlite_rows(tmp_path / "studies.sqlite", "judge_decisions") == []
