"""Copying a board into another target, every row of every table checked: the embedded board
into PostgreSQL, or a board file of an earlier DuckDB version into SQLite.

>>> report = migrate(open_db("data/leaderboard.sqlite"), "postgresql://etc@db/etc")  # doctest: +SKIP
>>> report.ok, report.tables["scores"]                                               # doctest: +SKIP
(True, TableCheck(rows_source=412, rows_target=412, sha_source='9f…', sha_target='9f…'))
"""

from __future__ import annotations

import os
from typing import Any

from etclib.storage.copier import MigrationReport, copy_store, table_digest

from .db import Database, open_db

__all__ = ["MigrationReport", "columns", "migrate", "table_digest"]


def columns(db: Database, table: str) -> list[str]:
    """The columns of ``table`` that the board ``db`` has, in its order."""
    return db.dialect.columns(db.cursor(), table)


def migrate(
    source: Database | str | os.PathLike, target: Any, *, replace: bool = False
) -> MigrationReport:
    """Copy every table of the board ``source`` (an open board, or its target) into the board
    at ``target``; the comparison of each table (a non-empty target is refused unless
    ``replace``)."""
    into = open_db(target, create=True)
    report = copy_store(getattr(source, "target", source), into, replace=replace)
    into.invalidate()
    return report
