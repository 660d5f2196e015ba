"""PostgreSQL: a server shared by many processes on many machines.

Several transactions write at once: rows that decide a write are locked (``FOR UPDATE``), a
claim skips the rows another worker holds (``FOR UPDATE SKIP LOCKED``), checks spanning rows
take a transaction-level advisory lock on a name (:meth:`PostgreSQL.serialize`), bulk inserts
go through ``COPY``, and leases are measured on the server's clock (the workers' machines'
clocks do not matter). Connections and pools: :mod:`etclib.storage.server`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from ..dialect import Dialect, _plain

#: The server's clock, in the naive UTC the TIMESTAMP columns hold.
NOW = "timezone('UTC', clock_timestamp())"


class PostgreSQL(Dialect):
    name = "postgresql"
    schemes = ("postgresql://", "postgres://")
    shared = True
    server = True
    for_update = " FOR UPDATE"
    skip_locked = " FOR UPDATE SKIP LOCKED"

    def ddl(self, sql: str) -> list[str]:
        return [re.sub(r"\bBLOB\b", "BYTEA", sql)]

    def create_schema(self, con: Any, target: Any, name: str, ddl: str) -> None:
        # once per process, one process at a time (a race in CREATE TABLE IF NOT EXISTS can
        # report a duplicate type), on a connection of its own
        from ..server import ensure_schema

        ensure_schema(str(target), name, "".join(self.ddl(ddl)))

    @contextlib.contextmanager
    def transaction(self, con: Any) -> Iterator[None]:
        with con.raw.transaction():
            yield

    def serialize(self, cur: Any, name: str) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(?))", [f"etc-leaderboard:{name}"])

    def next_id(self, cur: Any, sequence: str) -> int:
        return int(cur.execute("SELECT nextval(?)", [sequence]).fetchone()[0])

    def set_sequence(self, cur: Any, sequence: str, value: int) -> None:
        cur.execute("SELECT setval(?, ?)", [sequence, int(value)])

    def insert_rows(self, cur: Any, table: str, columns, rows) -> None:
        cur.copy_rows(table, list(columns), ([_plain(v) for v in row] for row in rows))

    def clock(self) -> tuple[str, list]:
        return NOW, []

    def older_than(self, column: str, seconds: float) -> tuple[str, list]:
        return f"{column} < {NOW} - make_interval(secs => ?)", [seconds]


DIALECT = PostgreSQL()
