"""Upgrading a store file written by the earlier DuckDB engine into a SQLite file, in place.

One function for every embedded store (the leaderboard's board, the studies database): the
store's file (or its old default name beside a missing new one) is copied table by table into a
new SQLite file with the one table copier (:mod:`etclib.storage.copier`), and every table
compared (row count and SHA-256, as ``migrate`` does). Only when every table matches does the
SQLite file take the store's place; the DuckDB file is kept beside it as
``<name>.duckdb-backup`` (or, for an old default name, stays where it was), and a warning says
so once. A copy that differs leaves the DuckDB file untouched and raises the store's error with
the tables that differ. Processes opening the store at the same moment upgrade it once (an
exclusive lock on ``<store>.upgrade.lock``).

The store says what differs (:class:`Store`): what it is called in messages, how a new file is
made (its own schema, a connection with ``write()``, ``cursor()``, ``dialect`` and
``close()``), its own tables (never copied), the sequences continued past the copied ids, the
order of rows where it matters, and its error type.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import copier
from .dialects import duckdb as legacy


@dataclass
class Store:
    """What the upgrade needs to know of one store."""

    #: How messages name it ("leaderboard database", "studies database").
    label: str
    #: ``make(path, source)``: a new, empty store file at ``path`` with its schema, as an open
    #: store (``write()`` context giving a cursor in one transaction, ``cursor()``,
    #: ``dialect``, ``close()``); ``source`` says for what it is made.
    make: Callable[[Path, str], Any]
    #: ``error(path, message)``: the store's exception.
    error: Callable[[str, str], Exception]
    #: Tables of the target's own, never copied.
    own_tables: tuple[str, ...] = ("schema_version", "sequences")
    #: sequence -> (table, column): continued past the largest copied id.
    sequences: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: table -> ORDER BY of its copy, where the order of rows matters (default: every column).
    order: dict[str, str] = field(default_factory=dict)
    #: The logger that says, once, that the file was upgraded.
    logger: str = "etclib.storage.upgrade"


def backup_path(path: Path) -> Path:
    """Where the DuckDB file is kept: ``<name>.duckdb-backup`` (numbered if taken)."""
    candidate = path.with_name(path.name + ".duckdb-backup")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.duckdb-backup{n}")
    return candidate


def legacy_default(
    path: Path, default: Path, old_default: Path, using_default: bool
) -> Path | None:
    """The old default file (``old_default``, beside ``path``) when ``path`` is the store's
    default (``default``), missing, and the old one is a DuckDB file; else None."""
    if not using_default or path.exists():
        return None
    if path.resolve() != default.resolve():
        return None
    old = path.with_name(old_default.name)
    return old if legacy.is_duckdb(old) else None


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


def upgrade(source: Path, target: Path, store: Store) -> copier.MigrationReport | None:
    """Copy the DuckDB file ``source`` into a new SQLite file at ``target`` (``source`` itself:
    in place, the DuckDB file kept as a backup); the comparison, or None when another process
    upgraded it meanwhile."""
    with _exclusive(target):
        if not legacy.is_duckdb(source) or (source != target and target.exists()):
            return None  # done by another process while this one waited
        report, made = _copy(source, target, store)
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
    logging.getLogger(store.logger).warning(
        "upgraded the %s %s from DuckDB to SQLite: %d tables, every row compared (count and "
        "SHA-256); the DuckDB file is kept at %s",
        store.label,
        target,
        len(report.tables),
        backup,
    )
    return report


def _copy(source: Path, target: Path, store: Store) -> tuple[copier.MigrationReport, Path]:
    made = target.with_name(target.name + ".upgrading")
    for leftover in (made, made.with_name(made.name + "-wal"), made.with_name(made.name + "-shm")):
        with contextlib.suppress(OSError):
            leftover.unlink()
    import duckdb

    try:
        return _copy_checked(source, target, store, made)
    except duckdb.Error as exc:  # the old file cannot be read: its fault
        raise store.error(
            str(source),
            f"The {store.label} {source} is a DuckDB file of an earlier version, and it "
            f"cannot be read to upgrade it ({' '.join(str(exc).split())[:200]}). Nothing was "
            "changed. Restore it from a backup, or move it aside.",
        ) from None
    finally:
        for leftover in (made.with_name(made.name + "-wal"), made.with_name(made.name + "-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _copy_checked(
    source: Path, target: Path, store: Store, made: Path
) -> tuple[copier.MigrationReport, Path]:
    old = legacy.connect(source)
    try:
        new = store.make(made, "the upgrade of " + str(source))
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
            if t not in store.own_tables
        ]
        layout = {}
        with new.write() as cur:
            for table in tables:
                have = set(new.dialect.columns(cur, table))
                if not have:
                    raise store.error(
                        str(source),
                        f"The {store.label} {source} (DuckDB, an earlier version) has a table "
                        f"{table!r} that this version does not know; nothing was changed. "
                        "Upgrade with the version that wrote it, or move the file aside.",
                    )
                cols = [c for c in legacy.DIALECT.columns(old, table) if c in have]
                layout[table] = cols
                cur.execute(f"DELETE FROM {table}")
                copier.copy_table(old, cur, table, cols, store.order.get(table, ", ".join(cols)))
            for sequence, (table, column) in store.sequences.items():
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
        raise store.error(
            str(source),
            f"Upgrading the {store.label} {source} from DuckDB to SQLite gave a copy that "
            f"differs in {', '.join(report.differing)}; nothing was changed and the DuckDB "
            "file is as it was. Report this with the file's tables: " + "; ".join(report.lines()),
        )
    return report, made
