"""Upgrading a board file written by the earlier DuckDB engine into the SQLite board, in place.

On opening (:class:`leaderboard.db_sqlite.SQLiteDatabase`), a board path that holds a DuckDB
file (or, for the default path, the old default ``data/leaderboard.duckdb`` beside a missing
``data/leaderboard.sqlite``) is copied table by table into a new SQLite file with the one table
copier (:mod:`etclib.storage.copier`), and every table compared (row count and SHA-256, as
``migrate`` does). Only when every table matches does the SQLite file take the board's place;
the DuckDB file is kept beside it as ``<name>.duckdb-backup`` (or, for the old default, stays
where it was), and a warning says so once. A copy that differs leaves the DuckDB file untouched
and raises :class:`StorageError` with the tables that differ. Processes opening the board at the
same moment upgrade it once (an exclusive lock on ``<board>.upgrade.lock``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

from etclib.storage import copier
from etclib.storage.dialects import duckdb as legacy

from . import settings
from .errors import StorageError

log = logging.getLogger("leaderboard.upgrade")

#: Tables that are the target's own (never copied).
OWN_TABLES = ("schema_version", "sequences")
#: Sequences continued past the largest copied id: sequence -> (table, column).
SEQUENCES = {"job_ids": ("jobs", "id"), "score_ids": ("scores", "id")}


def legacy_default(path: Path) -> Path | None:
    """The old default board ``data/leaderboard.duckdb`` when ``path`` is the default board,
    missing, and the old one exists; else None."""
    if not settings.using_default_db() or path.exists():
        return None
    if path.resolve() != settings.DEFAULT_DB.resolve():
        return None
    old = path.with_name(settings.LEGACY_DEFAULT_DB.name)
    return old if legacy.is_duckdb(old) else None


def backup_path(path: Path) -> Path:
    """Where the DuckDB file is kept: ``<name>.duckdb-backup`` (numbered if taken)."""
    candidate = path.with_name(path.name + ".duckdb-backup")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.duckdb-backup{n}")
    return candidate


@contextlib.contextmanager
def _exclusive(path: Path):
    import fcntl

    lock = path.with_name(path.name + ".upgrade.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            lock.unlink()


def upgrade(source: Path, target: Path, board: type) -> copier.MigrationReport | None:
    """Copy the DuckDB board ``source`` into a new SQLite board at ``target`` (``source`` itself:
    in place, the DuckDB file kept as a backup); the comparison, or None when another process
    upgraded it meanwhile. ``board`` is the embedded board's class, which makes the new file."""
    with _exclusive(target):
        if not legacy.is_duckdb(source) or (source != target and target.exists()):
            return None  # done by another process while this one waited
        report, made = _copy(source, target, board)
        if source == target:
            backup = backup_path(source)
            source.rename(backup)
            wal = source.with_name(source.name + ".wal")
            if wal.exists():
                wal.rename(backup.with_name(backup.name + ".wal"))
            with contextlib.suppress(OSError):
                source.with_name(source.name + ".lock").unlink()
        else:
            backup = source
        made.rename(target)
    log.warning(
        "upgraded the leaderboard database %s from DuckDB to SQLite: %d tables, every row "
        "compared (count and SHA-256); the DuckDB file is kept at %s",
        target,
        len(report.tables),
        backup,
    )
    return report


def _copy(source: Path, target: Path, board: type) -> tuple[copier.MigrationReport, Path]:
    made = target.with_name(target.name + ".upgrading")
    for leftover in (made, made.with_name(made.name + "-wal"), made.with_name(made.name + "-shm")):
        with contextlib.suppress(OSError):
            leftover.unlink()
    import duckdb

    try:
        return _copy_checked(source, target, board, made)
    except duckdb.Error as exc:  # the old file cannot be read: its fault
        raise StorageError(
            str(source),
            f"The leaderboard database {source} is a DuckDB board file of an earlier version, "
            f"and it cannot be read to upgrade it ({' '.join(str(exc).split())[:200]}). "
            "Nothing was changed. Restore it from a backup, or move it aside.",
        ) from None
    finally:
        for leftover in (made.with_name(made.name + "-wal"), made.with_name(made.name + "-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _copy_checked(
    source: Path, target: Path, board: type, made: Path
) -> tuple[copier.MigrationReport, Path]:
    old = legacy.connect(source)
    try:
        new = board(made, create=True, source="the upgrade of " + str(source))
    except BaseException:
        old.close()
        raise
    report = copier.MigrationReport(str(source), str(target))
    try:
        tables = [
            t
            for (t,) in old.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
            ).fetchall()
            if t not in OWN_TABLES
        ]
        layout = {}
        with new.write() as cur:
            for table in tables:
                have = set(new.dialect.columns(cur, table))
                cols = [c for c in legacy.DIALECT.columns(old, table) if c in have]
                layout[table] = cols
                cur.execute(f"DELETE FROM {table}")
                order = "rowid" if table == "status_history" else ", ".join(cols)
                copier.copy_table(old, cur, table, cols, order)
            for sequence, (table, column) in SEQUENCES.items():
                (top,) = cur.execute(f"SELECT max({column}) FROM {table}").fetchone()
                if top is not None:
                    new.dialect.set_sequence(cur, sequence, int(top))
        for table in tables:
            cols = layout[table]
            n_src, sha_src = copier.table_digest(old, table, cols)
            n_dst, sha_dst = copier.table_digest(new.cursor(), table, cols)
            report.tables[table] = copier.TableCheck(n_src, n_dst, sha_src, sha_dst)
    except BaseException:
        old.close()
        new.close()
        with contextlib.suppress(OSError):
            made.unlink()
        raise
    old.close()
    new.close()
    if not report.ok:
        with contextlib.suppress(OSError):
            made.unlink()
        raise StorageError(
            str(source),
            f"Upgrading the leaderboard database {source} from DuckDB to SQLite gave a copy "
            f"that differs in {', '.join(report.differing)}; nothing was changed and the "
            "DuckDB file is as it was. Report this with the file's tables: "
            + "; ".join(report.lines()),
        )
    return report, made
