"""Upgrading a board file written by the earlier DuckDB engine into the SQLite board, in place.

On opening (:class:`leaderboard.db_sqlite.SQLiteDatabase`), a board path that holds a DuckDB
file (or, for the default path, the old default ``data/leaderboard.duckdb`` beside a missing
``data/leaderboard.sqlite``) is upgraded by the storage layer's one upgrade function
(:func:`etclib.storage.upgrade.upgrade`: every table copied and compared, the DuckDB file kept
as ``<name>.duckdb-backup``); this module says what is the board's own: its tables and
sequences, the order of its status history, its error.
"""

from __future__ import annotations

from pathlib import Path

from etclib.storage import copier
from etclib.storage import upgrade as storage_upgrade

from . import settings
from .errors import StorageError

#: Tables that are the target's own (never copied).
OWN_TABLES = ("schema_version", "sequences")
#: Sequences continued past the largest copied id: sequence -> (table, column).
SEQUENCES = {"job_ids": ("jobs", "id"), "score_ids": ("scores", "id")}
backup_path = storage_upgrade.backup_path


def legacy_default(path: Path) -> Path | None:
    """The old default board ``data/leaderboard.duckdb`` when ``path`` is the default board,
    missing, and the old one exists; else None."""
    return storage_upgrade.legacy_default(
        path, settings.DEFAULT_DB, settings.LEGACY_DEFAULT_DB, settings.using_default_db()
    )


def upgrade(source: Path, target: Path, board: type) -> copier.MigrationReport | None:
    """Copy the DuckDB board ``source`` into a new SQLite board at ``target`` (``source`` itself:
    in place, the DuckDB file kept as a backup); the comparison, or None when another process
    upgraded it meanwhile. ``board`` is the embedded board's class, which makes the new file."""
    store = storage_upgrade.Store(
        label="leaderboard database",
        make=lambda made, why: board(made, create=True, source=why),
        error=StorageError,
        own_tables=OWN_TABLES,
        sequences=SEQUENCES,
        order={"status_history": "rowid"},
        logger="leaderboard.upgrade",
    )
    return storage_upgrade.upgrade(source, target, store)
