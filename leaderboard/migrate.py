"""Moving an embedded board into PostgreSQL: every row of every table, checked.

>>> report = migrate(open_db("data/leaderboard.sqlite"), "postgresql://etc@db/etc")  # doctest: +SKIP
>>> report.ok, report.tables["scores"]                                               # doctest: +SKIP
(True, TableCheck(rows_source=412, rows_target=412, sha_source='9f…', sha_target='9f…'))

The target is created (migrated to the current schema) by opening it; the copy is one
transaction, so a failure leaves the target as it was. The rows go through the one table copier
of :mod:`etclib.storage.copier` (also behind ``etclib studies migrate`` and the upgrade of a
legacy DuckDB board), and afterwards each table is compared: its row count and a SHA-256 over
its rows, computed the same way from both databases (:func:`etclib.storage.copier.rows_digest`).
A target that already holds rows is refused unless ``replace`` (its leaderboard rows are then
deleted first, in the same transaction). The sequences of job and score ids continue after the
copied ones. A legacy DuckDB board file is upgraded to SQLite when it is opened, then copied.
"""

from __future__ import annotations

from etclib.storage.copier import (
    MigrationReport,
    TableCheck,
    copy_table,
    filled_tables,
    table_digest,
)

from .db import Database, open_db
from .errors import LeaderboardError

#: Every table of the board, parents first; schema_version is the target's own.
TABLES: tuple[str, ...] = (
    "submissions",
    "submission_accounts",
    "predictions",
    "status_history",
    "jobs",
    "scores",
    "score_arrays",
    "item_scores",
    "moderation_log",
    "hub_pushes",
)
#: Sequences continued past the largest copied id: sequence -> (table, column).
SEQUENCES = {"job_ids": ("jobs", "id"), "score_ids": ("scores", "id")}


def columns(db: Database, table: str) -> list[str]:
    """The columns of ``table`` that the source board has, in its order."""
    return db.dialect.columns(db.cursor(), table)


def _order(table: str, cols: list[str]) -> str:
    # rowid is insertion order (SQLite's, DuckDB's): the target's status_history keeps it (its
    # identity column of that name); other tables by their columns, which is as good as any order
    return "rowid" if table == "status_history" else ", ".join(cols)


def migrate(source: Database, url: str, *, replace: bool = False) -> MigrationReport:
    """Copy every table of the embedded board ``source`` into the board at ``url`` (a server);
    the comparison of each table (raise :class:`LeaderboardError` for a non-empty target
    unless ``replace``)."""
    target = open_db(url, create=True)
    if target is source or target.label == source.label:
        raise LeaderboardError(
            f"migrate copies a board into another; ETC_LEADERBOARD_DB and --to name the same "
            f"one ({source.label}). Point ETC_LEADERBOARD_DB at the board to copy."
        )
    report = MigrationReport(source.label, target.label)
    layout = {table: columns(source, table) for table in TABLES}
    with target.write() as cur:
        filled = filled_tables(cur, TABLES)
        if filled and not replace:
            raise LeaderboardError(
                f"The board {target.label} is not empty: {filled}. Nothing was copied. Give "
                "--replace to delete its leaderboard rows and copy this board in their place, "
                "or point --to at an empty database."
            )
        for table in reversed(TABLES):
            cur.execute(f"DELETE FROM {table}")
        for table in TABLES:
            cols = layout[table]
            copy_table(source.cursor(), cur, table, cols, _order(table, cols))
        for sequence, (table, column) in SEQUENCES.items():
            (top,) = cur.execute(f"SELECT max({column}) FROM {table}").fetchone()
            if top is not None:
                target.dialect.set_sequence(cur, sequence, int(top))
    target.invalidate()
    for table in TABLES:
        cols = layout[table]
        n_src, sha_src = table_digest(source.cursor(), table, cols)
        n_dst, sha_dst = table_digest(target.cursor(), table, cols)
        report.tables[table] = TableCheck(n_src, n_dst, sha_src, sha_dst)
    return report
