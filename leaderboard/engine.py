"""The few places where the leaderboard's SQL differs between its two engines.

The leaderboard runs on an embedded DuckDB file (the default) or on a PostgreSQL server
(``ETC_LEADERBOARD_DB=postgresql://...``; :mod:`leaderboard.db`). Queries are written once, with
``?`` placeholders, in SQL both engines accept. What cannot be written once is here, keyed on
the cursor of the write transaction (a DuckDB cursor, or :class:`leaderboard.db.ServerCursor`):

- :func:`for_update`: row locks. DuckDB has one writing process and serialises its writes, so
  it needs (and parses) none; on PostgreSQL, several processes write at once and a row a
  transaction reads to decide what to write must be locked.
- :func:`serialize`: a transaction-wide lock on a name (PostgreSQL's advisory locks), for checks
  that span rows (the daily limits, duplicates, migrating the schema).
- :func:`insert_frame`: a bulk insert of a pandas frame (DuckDB reads the frame in place;
  PostgreSQL takes it through ``COPY``).
"""

from __future__ import annotations

from typing import Any

SERVER = "postgresql"


def is_server(cur: Any) -> bool:
    """Whether ``cur`` is a PostgreSQL cursor (else an embedded DuckDB one)."""
    return getattr(cur, "engine", "duckdb") == SERVER


def for_update(cur: Any) -> str:
    """`` FOR UPDATE`` on PostgreSQL, nothing on DuckDB (which serialises its writers)."""
    return " FOR UPDATE" if is_server(cur) else ""


def serialize(cur: Any, name: str) -> None:
    """Hold a lock on ``name`` until the transaction ends (PostgreSQL; DuckDB needs none)."""
    if is_server(cur):
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(?))", [f"etc-leaderboard:{name}"])


def insert_frame(cur: Any, table: str, frame) -> None:
    """Insert every row of ``frame`` (its columns named as the table's) into ``table``."""
    if is_server(cur):
        cur.copy_rows(table, list(frame.columns), frame.itertuples(index=False, name=None))
        return
    name = f"_{table}_frame"
    cur.register(name, frame)
    try:
        cols = ", ".join(frame.columns)
        cur.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}")
    finally:
        cur.unregister(name)
