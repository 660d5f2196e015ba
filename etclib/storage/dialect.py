"""What an engine must say for the stores' SQL to be written once (``?`` placeholders, SQL
that both engines accept): the base class of every dialect under :mod:`etclib.storage.dialects`.

A cursor of a store carries its dialect (``cur.dialect``); code that needs one of the differences
asks it (``dialect(cur).for_update``) instead of naming an engine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any


class Dialect:
    """One engine's SQL differences. Subclasses set the attributes and override the methods."""

    #: The registry name (``sqlite``, ``postgresql``, ``duckdb``).
    name = ""
    #: URL schemes that name this engine (a plain path names the embedded default).
    schemes: tuple[str, ...] = ()
    #: Whether several processes write at once (running jobs then hold leases).
    shared = True
    #: Whether a target of this engine is a server (a URL that many machines share), rather
    #: than a file of this machine: what ``migrate --to`` asks of its target.
    server = False
    #: Appended to a SELECT whose rows decide a write (row locks), and its skip-locked form.
    for_update = ""
    skip_locked = ""
    #: The statement that opens a :meth:`transaction`.
    begin = "BEGIN"

    # --- schema -------------------------------------------------------------------------------

    def ddl(self, sql: str) -> list[str]:
        """A schema statement written in the shared SQL, as this engine takes it (maybe none,
        maybe several)."""
        return [sql]

    def create_schema(self, con: Any, target: Any, name: str, ddl: str) -> None:
        """Run the ``CREATE ... IF NOT EXISTS`` statements of ``ddl`` (``;``-separated; one
        store's schema named ``name``) on ``con``, a connection to ``target``."""
        for statement in ddl.split(";"):
            if statement.strip():
                for sql in self.ddl(statement):
                    con.execute(sql)

    @contextlib.contextmanager
    def transaction(self, con: Any) -> Iterator[None]:
        """All statements of the block on ``con``, or none of them; a writer that reads
        before it writes holds its :meth:`serialize` lock until the block ends."""
        con.execute(self.begin)
        try:
            yield
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def has_table(self, cur: Any, table: str) -> bool:
        """Whether ``table`` exists in the current schema (the SQL standard's
        information_schema; an engine without it overrides this)."""
        got = cur.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
            "AND table_schema = current_schema()",
            [table],
        ).fetchone()
        return bool(got[0])

    def columns(self, cur: Any, table: str) -> list[str]:
        """The columns of ``table``, in their order (information_schema, as above)."""
        rows = cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "AND table_schema = current_schema() ORDER BY ordinal_position",
            [table],
        ).fetchall()
        return [r[0] for r in rows]

    # --- writing ------------------------------------------------------------------------------

    def serialize(self, cur: Any, name: str) -> None:
        """Hold a lock on ``name`` until the transaction ends (engines whose writers run at
        once; one whose write transactions are already exclusive needs none)."""

    def next_id(self, cur: Any, sequence: str) -> int:
        """The next value of a sequence of ids."""
        raise NotImplementedError

    def set_sequence(self, cur: Any, sequence: str, value: int) -> None:
        """Let ``sequence`` continue after ``value``."""
        raise NotImplementedError

    def insert_rows(
        self, cur: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence]
    ) -> None:
        """Insert many rows (tuples in the order of ``columns``) into ``table``."""
        marks = ", ".join("?" for _ in columns)
        cur.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
            [tuple(_plain(v) for v in row) for row in rows],
        )

    def string_agg(self, expr: str, sep: str, order: str, source: str) -> str:
        """A scalar subquery joining ``expr`` over ``source`` (``FROM ... WHERE ...``) with the
        literal ``sep``, in the order of ``order``."""
        return f"(SELECT string_agg({expr}, '{sep}' ORDER BY {order}) {source})"

    # --- leases -------------------------------------------------------------------------------

    def clock(self) -> tuple[str, list]:
        """SQL for the lease clock's "now" (naive UTC) and its parameters."""
        from datetime import UTC

        return "?", [datetime.now(UTC).replace(tzinfo=None)]

    def older_than(self, column: str, seconds: float) -> tuple[str, list]:
        """``column`` is more than ``seconds`` before the lease clock's now: SQL and params."""
        from datetime import UTC

        cutoff = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=seconds)
        return f"{column} < ?", [cutoff]


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value a driver takes."""
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy":
        return item()
    return value
