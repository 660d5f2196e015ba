"""Storage faults met in process: a missing board is created only when asked; a foreign file as
the board or the studies database is named as such, nothing written to it and nothing (no DuckDB
extension) installed on the way; every DuckDB connection has extension loading off. The faults
met by commands and pages: tests/integration/test_storage_faults.py."""

from __future__ import annotations

import pytest

import leaderboard as lb
from leaderboard.db import open_db
from tests.fixtures.board import (  # noqa: F401 - fixtures, found by name
    META,
    TOKEN,
    _close_databases,
    fail_next,
    job_rows,
    jsonl,
    submit_many,
    tiny_fixture,
)


@pytest.mark.embedded_only  # about the SQLite file itself
def test_a_missing_database_is_created_only_when_asked(tiny, tmp_path, monkeypatch, capsys):
    from leaderboard.__main__ import main

    path = tmp_path / "new" / "board.sqlite"
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    assert main(["show"]) == 7 and not path.exists()
    assert "No leaderboard database at" in capsys.readouterr().err
    assert main(["show", "--create"]) == 0 and path.is_file()
    assert "created a new, empty leaderboard database" in capsys.readouterr().err
    lb.close_all()
    assert main(["show"]) == 0
    with pytest.raises(lb.DatabaseMissingError):
        open_db(tmp_path / "typo.sqlite", create=False)


SQLITE_HEADER = b"SQLite format 3\x00" + b"\x00" * 4080


def no_extension_dirs(home) -> bool:
    return not any(p.name == "extensions" for p in home.rglob("*"))


def test_a_foreign_file_as_the_board_is_named_and_nothing_is_installed(tmp_path, monkeypatch):
    """The board is SQLite; a SQLite file that is no database, or a Parquet file, is named as
    such, and nothing (no DuckDB extension) is installed on the way."""
    from leaderboard.db import open_db

    home = tmp_path / "home"  # HOME (tests/conftest.py): where DuckDB keeps its extensions
    parquet = tmp_path / "board.parquet"
    parquet.write_bytes(b"PAR1" + b"\x00" * 100)
    with pytest.raises(lb.DatabaseCorruptError) as info:
        open_db(parquet, create=False)
    assert "the file is a Parquet file" in str(info.value)
    assert parquet.read_bytes() == b"PAR1" + b"\x00" * 100
    board = tmp_path / "leaderboard.sqlite"
    board.write_bytes(SQLITE_HEADER)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # no network: a download would fail
    with pytest.raises(lb.DatabaseCorruptError) as info:
        open_db(board, create=False)
    message = str(info.value)
    assert "damaged or is not a leaderboard database" in message
    assert "extension" not in message.lower() and "download" not in message.lower()
    assert no_extension_dirs(home)
    assert board.read_bytes() == SQLITE_HEADER  # nothing was written to it


def test_a_file_that_is_no_studies_database_is_named(tmp_path, monkeypatch):
    from etclib.core.errors import StoreError
    from etclib.studies.db import connect

    path = tmp_path / "studies.sqlite"
    path.write_text("name,score\n", encoding="utf-8")
    with pytest.raises(StoreError, match="does not start with SQLite's header"):
        with connect(path):
            pass
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(SQLITE_HEADER)  # the header and nothing after it
    with pytest.raises(StoreError, match=f"Cannot open the studies database {damaged}"):
        with connect(damaged):
            pass
    assert path.read_text(encoding="utf-8") == "name,score\n"
    assert no_extension_dirs(tmp_path / "home")


def test_every_duckdb_connection_has_extension_loading_off(tmp_path):
    """Even a connection given a SQLite file directly fails locally, at once, not by download."""
    import duckdb

    from etclib.storage import duckfile

    path = tmp_path / "x.db"
    path.write_bytes(SQLITE_HEADER)
    with pytest.raises(duckdb.Error) as info:
        duckfile.connect(path)
    assert "Failed to download" not in str(info.value)
    con = duckfile.connect(":memory:")
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall()
    )
    assert settings == {
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }


def test_no_module_opens_duckdb_but_through_duckfile():
    from tests.conftest import REPO

    offenders = [
        str(p.relative_to(REPO))
        for folder in ("etclib", "leaderboard", "views", "site_pages")
        for p in (REPO / folder).rglob("*.py")
        if "duckdb.connect(" in p.read_text(encoding="utf-8") and p.name != "duckfile.py"
    ]
    assert offenders == []
