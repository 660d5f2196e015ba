"""What an engine says so that the stores are written once: the base class of every module under
:mod:`etclib.storage.dialects`. SQL uses ``?`` placeholders in the subset every engine accepts;
what differs is asked of the dialect each cursor carries (``cur.dialect``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


class Fault(Exception):
    """A store that cannot be used, as its engine found it (``kind``: one of :meth:`describe`'s);
    the store words it for its users."""

    def __init__(self, kind: str, where: str, reason: str = "") -> None:
        self.kind, self.where, self.reason = kind, where, reason
        super().__init__(f"{kind}: {where}: {reason}")

    def describe(self, what: str, setting: str, migrate: str) -> str:
        """The one line that says what is wrong with the ``what`` named by ``setting``, and
        what to do (``migrate``: the store's copy command)."""
        where, reason = self.where, self.reason
        new = str(Path(where).with_suffix(".sqlite"))
        said = {
            "missing": f"There is no {what} at {where} ({reason}). Check {setting} for a typo.",
            "directory": f"{where} is "
            + ("a directory" if Path(where).is_dir() else "a device or other special file")
            + f", not a database file. Point {setting} at a file, or move it away.",
            "unwritable": f"Cannot write the {what} {where} ({reason}). Make it and its folder "
            f"writable for the user running this, or point {setting} at a writable place.",
            "corrupt": f"Cannot open the {what} {where}: {reason}. Check {setting}; restore the "
            "file from a backup, or move it aside to start a new one.",
            "busy": f"The {what} {where} stayed locked by another process's write for longer "
            "than the busy timeout; nothing was written. Try again; if it persists, look for a "
            "process stuck in a write (e.g. a long `migrate`).",
            "server": f"The {what} {where} (PostgreSQL) cannot be used: {reason}. Check that the "
            f"server runs and that {setting} names it with the right user, password and database.",
            "legacy": f"The {what} {where} is a DuckDB file of an earlier version; this version "
            f"only reads it to copy it. Convert it once with `{migrate} --from {where} --to "
            f"{new if new != where else 'NEW.sqlite'}`, then point {setting} at the new file "
            "(docs/deploy.md).",
            "newer": f"The {what} {where} has {reason}; update the project before opening it.",
            "closed": f"The {what} {where} was closed; open it again.",
            "same": f"`{migrate}` copies the {what} into another; its source and --to name the "
            f"same one ({where}). Give the one to copy with --from (or {setting}).",
            "filled": f"The {what} {where} is not empty: {reason}. Nothing was copied. Give "
            "--replace to delete those rows and copy in their place, or point --to at an empty "
            "database.",
            "unknown": f"The {what} {where} has tables that this version does not know "
            f"({reason}); nothing was copied. Copy it with the version that wrote it, or move "
            "those tables aside.",
        }
        return said.get(
            self.kind, f"Cannot open the {what} {where} ({reason}). Check {setting} and its folder."
        )


class Rows:
    """Rows already fetched (a statement whose connection went back to its pool)."""

    def __init__(self, rows: list, description: Any = None, rowcount: int = -1) -> None:
        self._rows, self._next = rows, 0
        self.description, self.rowcount = description, rowcount

    def fetchmany(self, size: int) -> list:
        got = self._rows[self._next : self._next + size]
        self._next += len(got)
        return got

    def fetchone(self) -> Any:
        got = self.fetchmany(1)
        return got[0] if got else None

    def fetchall(self) -> list:
        return self.fetchmany(len(self._rows))


class Dialect:
    """One engine. Subclasses set the attributes and override the methods."""

    #: The registry name (``sqlite``, ``postgresql``, ...).
    name = ""
    #: URL schemes that name this engine (a plain path names the embedded default).
    schemes: tuple[str, ...] = ()
    #: Whether several processes write at once (running jobs then hold leases).
    shared = True
    #: Whether a target is a server that many machines share rather than a file of this one.
    server = False
    #: Appended to a SELECT whose rows decide a write (row locks), and its skip-locked form.
    for_update = ""
    skip_locked = ""
    #: The statement that opens a :meth:`transaction`.
    begin = "BEGIN"
    #: Tables the engine keeps for itself in a store (never copied).
    own_tables: tuple[str, ...] = ()

    # --- opening ----------------------------------------------------------------------------

    def connect(self, target: Any, **options: Any) -> Any:
        """One new connection (``execute`` with ``?``, ``executemany``, ``copy_rows``,
        ``close``, ``dialect``); the caller closes it."""
        raise NotImplementedError

    def prepare(self, target: Any, create: bool) -> bool | None:
        """Check ``target`` before opening it (and make its folder when ``create``): whether
        it is new (None: only its tables tell); a :class:`Fault` when it cannot hold a store."""
        return None

    def lender(self, target: Any, **options: Any) -> Any:
        """How a :class:`~etclib.storage.database.Database` gets its connections: ``reader
        (faults)``, ``writer()`` and ``session()`` contexts, ``changed()``, ``check()``,
        ``close()``."""
        raise NotImplementedError

    def fault(self, exc: BaseException, where: str) -> Fault | None:
        """The :class:`Fault` a driver error means (the store's fault, not a query's), else None."""
        return None

    def claims(self, target: Any) -> Any:
        """Named claims that other processes see and that die with the process holding them:
        ``try_lock(key) -> bool``, ``unlock(key)``, ``close()``."""
        raise NotImplementedError

    def exists(self, target: Any) -> bool:
        """Whether reading ``target`` needs nothing made first (a file that exists; a server)."""
        return True

    # --- schema -------------------------------------------------------------------------------

    def ddl(self, sql: str) -> list[str]:
        """A schema statement written in the shared SQL, as this engine takes it (maybe none,
        maybe several)."""
        return [sql]

    @contextlib.contextmanager
    def transaction(self, con: Any) -> Iterator[None]:
        """All statements of the block on ``con``, or none of them."""
        con.execute(self.begin)
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):
                con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def has_table(self, cur: Any, table: str) -> bool:
        """Whether ``table`` exists in the current schema (information_schema)."""
        got = cur.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
            "AND table_schema = current_schema()",
            [table],
        ).fetchone()
        return bool(got[0])

    def tables(self, cur: Any) -> list[str]:
        """The tables of the current schema (information_schema)."""
        rows = cur.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
        ).fetchall()
        return [r[0] for r in rows]

    def columns(self, cur: Any, table: str) -> list[str]:
        """The columns of ``table``, in their order (information_schema)."""
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
            [tuple(plain(v) for v in row) for row in rows],
        )

    def insert_frame(self, cur: Any, table: str, frame: Any) -> None:
        """Insert every row of a pandas ``frame`` (its columns named as the table's)."""
        self.insert_rows(cur, table, list(frame.columns), frame.itertuples(index=False, name=None))

    def string_agg(self, expr: str, sep: str, order: str, source: str) -> str:
        """A scalar subquery joining ``expr`` over ``source`` (``FROM ... WHERE ...``) with the
        literal ``sep``, in the order of ``order``."""
        return f"(SELECT string_agg({expr}, '{sep}' ORDER BY {order}) {source})"

    # --- leases -------------------------------------------------------------------------------

    def clock(self) -> tuple[str, list]:
        """SQL for the lease clock's "now" (naive UTC) and its parameters."""
        return "?", [datetime.now(UTC).replace(tzinfo=None)]

    def older_than(self, column: str, seconds: float) -> tuple[str, list]:
        """``column`` is more than ``seconds`` before the lease clock's now: SQL and params."""
        cutoff = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=seconds)
        return f"{column} < ?", [cutoff]


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value a driver takes."""
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy":
        return item()
    return value
