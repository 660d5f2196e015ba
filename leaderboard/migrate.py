"""Moving an embedded (DuckDB) board into PostgreSQL: every row of every table, checked.

>>> report = migrate(open_db("data/leaderboard.duckdb"), "postgresql://etc@db/etc")  # doctest: +SKIP
>>> report.ok, report.tables["scores"]                                               # doctest: +SKIP
(True, TableCheck(rows_source=412, rows_target=412, sha_source='9f…', sha_target='9f…'))

The target is created (migrated to the current schema) by opening it; the copy is one
transaction, so a failure leaves the target as it was. Afterwards each table is compared:
its row count and a SHA-256 over its rows, computed the same way from both databases
(:func:`etclib.serverdb.rows_digest`: each row written canonically and hashed, the row hashes sorted, so
neither engine's order or collation matters). A target that already holds rows is refused
unless ``replace`` (its leaderboard rows are then deleted first, in the same transaction). The
sequences of job and score ids continue after the copied ones.
"""

from __future__ import annotations

from etclib.serverdb import MigrationReport, TableCheck, filled_tables, rows_digest

from .db import Database, ServerDatabase, open_db
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
#: Rows fetched from the source at a time.
CHUNK = 50_000


def columns(db: Database, table: str) -> list[str]:
    """The columns of ``table`` that the source board has, in its order."""
    rows = db.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "AND table_schema = current_schema() ORDER BY ordinal_position",
        [table],
    )
    return [r[0] for r in rows]


def table_digest(db: Database, table: str, cols: list[str]) -> tuple[int, str]:
    """(rows, SHA-256) of ``table``'s ``cols`` (:func:`etclib.serverdb.rows_digest`)."""
    return rows_digest(db.query(f"SELECT {', '.join(cols)} FROM {table}"))


def _order(table: str, cols: list[str]) -> str:
    # DuckDB's rowid is insertion order: the target's status_history keeps it (its identity
    # column of that name); other tables by their columns, which is as good as any order
    return "rowid" if table == "status_history" else ", ".join(cols)


def migrate(source: Database, url: str, *, replace: bool = False) -> MigrationReport:
    """Copy every table of the embedded board ``source`` into the PostgreSQL board at ``url``;
    the comparison of each table (raise :class:`LeaderboardError` for a non-empty target
    unless ``replace``)."""
    if isinstance(source, ServerDatabase):
        raise LeaderboardError(
            "migrate copies an embedded (DuckDB) board into PostgreSQL; ETC_LEADERBOARD_DB "
            f"names a server ({source.label}). Point it at the DuckDB file to copy."
        )
    target = open_db(url, create=True)
    report = MigrationReport(source.label, target.label)
    layout = {table: columns(source, table) for table in TABLES}
    with target.write() as cur:
        filled = filled_tables(cur, TABLES)
        if filled and not replace:
            raise LeaderboardError(
                f"The PostgreSQL board {target.label} is not empty: {filled}. Nothing was "
                "copied. Give --replace to delete its leaderboard rows and copy this board "
                "in their place, or point --to at an empty database."
            )
        for table in reversed(TABLES):
            cur.execute(f"DELETE FROM {table}")
        for table in TABLES:
            cols = layout[table]
            src = source.cursor().execute(
                f"SELECT {', '.join(cols)} FROM {table} ORDER BY {_order(table, cols)}"
            )
            while chunk := src.fetchmany(CHUNK):
                cur.copy_rows(table, cols, chunk)
        for sequence, (table, column) in SEQUENCES.items():
            (top,) = cur.execute(f"SELECT max({column}) FROM {table}").fetchone()
            if top is not None:
                cur.execute("SELECT setval(?, ?)", [sequence, int(top)])
    target.invalidate()
    for table in TABLES:
        cols = layout[table]
        n_src, sha_src = table_digest(source, table, cols)
        n_dst, sha_dst = table_digest(target, table, cols)
        report.tables[table] = TableCheck(n_src, n_dst, sha_src, sha_dst)
    return report
