"""SQLite in WAL mode: the embedded engine (many readers and one writer at a time, across the
processes of one machine).

- Every connection: WAL journal, ``busy_timeout`` (a writer waits for another instead of
  failing), ``synchronous=NORMAL`` (a killed process loses no committed transaction; only a
  power cut may lose the last ones), foreign keys off (as on the other engines).
- Writes run in ``BEGIN IMMEDIATE`` transactions: the write lock is taken at the start, so a
  claim (read a queued job, mark it running) can never interleave with another process's;
  hence no row locks (:attr:`for_update` is empty) and no named locks (:meth:`serialize`).
- Sequences are rows of a ``sequences`` table (``UPDATE ... RETURNING``).
- Timestamps are stored as ``YYYY-MM-DD HH:MM:SS.ffffff`` text (it sorts as time does) and read
  back as naive :class:`datetime` in columns named like a time (``*_at``, ``not_before``).
- ``strpos``, ``greatest`` and ``least`` are registered as functions, as the other engines have.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ..dialect import Dialect

#: Milliseconds a statement waits for another process's write lock before failing.
BUSY_TIMEOUT_MS = 30_000
HEADER = b"SQLite format 3\x00"
_STAMP = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?$")
_TIME_NAME = re.compile(r"(_at\b|not_before|_at\)|\bready\b)", re.IGNORECASE)


def _adapt(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")


sqlite3.register_adapter(datetime, _adapt)


def _strpos(text: Any, part: Any) -> int | None:
    if text is None or part is None:
        return None
    return str(text).find(str(part)) + 1


def _greatest(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def _least(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _time_columns(description: Any) -> list[int]:
    return [i for i, d in enumerate(description or []) if _TIME_NAME.search(str(d[0]))]


def _as_time(row: tuple, columns: list[int]) -> tuple:
    out = list(row)
    for i in columns:
        v = out[i]
        if isinstance(v, str) and _STAMP.match(v):
            out[i] = datetime.fromisoformat(v)
    return tuple(out)


class Rows:
    """The rows of one statement, time columns read back as :class:`datetime`."""

    def __init__(self, cur: sqlite3.Cursor) -> None:
        self._cur = cur
        self.description = cur.description
        self.rowcount = cur.rowcount
        self._times = _time_columns(cur.description)

    def _fix(self, rows: list) -> list[tuple]:
        return [_as_time(r, self._times) for r in rows] if self._times else rows

    def fetchone(self) -> tuple | None:
        row = self._cur.fetchone()
        return None if row is None else self._fix([row])[0]

    def fetchall(self) -> list[tuple]:
        return self._fix(self._cur.fetchall())

    def fetchmany(self, size: int) -> list[tuple]:
        return self._fix(self._cur.fetchmany(size))


class Connection:
    """A SQLite connection with the stores' small API (``execute`` with ``?``,
    ``executemany``, ``dialect``)."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw
        self.dialect = DIALECT
        self.engine = DIALECT.name

    def execute(self, sql: str, params: list | tuple | None = None) -> Rows:
        return Rows(self.raw.execute(sql, list(params) if params is not None else []))

    def executemany(self, sql: str, rows: list) -> None:
        self.raw.executemany(sql, rows)

    def copy_rows(self, table: str, columns: list[str], rows) -> None:
        DIALECT.insert_rows(self, table, columns, rows)

    def close(self) -> None:
        self.raw.close()


def connect(path: str | Path, *, busy_ms: int = BUSY_TIMEOUT_MS) -> Connection:
    """A new connection to the SQLite file ``path`` (autocommit: transactions are explicit),
    in WAL mode with a busy timeout. Usable from any thread; one thread at a time."""
    raw = sqlite3.connect(
        str(path), timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False
    )
    raw.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    mode = None
    for attempt in range(50):  # the switch to WAL needs a moment without other writers
        try:
            mode = raw.execute("PRAGMA journal_mode = WAL").fetchone()
            break
        except sqlite3.OperationalError as exc:
            # only a lock is waited out; a read-only folder or a damaged file fails at once
            if attempt == 49 or "locked" not in str(exc).lower():
                raw.close()
                raise
            time.sleep(0.05 * (attempt + 1))
    if mode and str(mode[0]).lower() not in (
        "wal",
        "memory",
    ):  # memory: ":memory:"  # pragma: no cover - e.g. a network filesystem
        raw.close()
        raise sqlite3.OperationalError(f"cannot use WAL mode on {path} (journal mode {mode[0]})")
    raw.execute("PRAGMA synchronous = NORMAL")
    raw.create_function("strpos", 2, _strpos, deterministic=True)
    raw.create_function("greatest", -1, _greatest, deterministic=True)
    raw.create_function("least", -1, _least, deterministic=True)
    return Connection(raw)


def not_sqlite(path: str | Path) -> bool:
    """Whether the existing, non-empty file ``path`` lacks SQLite's header."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return bool(head) and head != HEADER


class SQLite(Dialect):
    name = "sqlite"
    schemes = ("sqlite:///",)
    shared = True
    # the write lock from the start: a read-then-write step runs one writer at a time
    begin = "BEGIN IMMEDIATE"

    def ddl(self, sql: str) -> list[str]:
        m = re.match(r"\s*CREATE SEQUENCE (\w+) START (\d+)\s*$", sql)
        if m:
            return [
                "CREATE TABLE IF NOT EXISTS sequences (name VARCHAR PRIMARY KEY, "
                "value BIGINT NOT NULL)",
                f"INSERT INTO sequences VALUES ('{m.group(1)}', {int(m.group(2)) - 1})",
            ]
        return [sql]

    def serialize(self, cur: Any, name: str) -> None:
        # a write transaction is already exclusive; outside one, start one (BEGIN IMMEDIATE:
        # the file's write lock) that the caller ends, as a PostgreSQL transaction would be
        if not cur.raw.in_transaction:
            cur.execute("BEGIN IMMEDIATE")

    def transaction(self, con: Any) -> contextlib.AbstractContextManager[None]:
        if con.raw.in_transaction:  # inside a transaction already (serialize): part of it
            return contextlib.nullcontext()
        return super().transaction(con)

    def has_table(self, cur: Any, table: str) -> bool:
        got = cur.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [table]
        ).fetchone()
        return bool(got[0])

    def columns(self, cur: Any, table: str) -> list[str]:
        return [r[1] for r in cur.execute(f'PRAGMA table_info("{table}")').fetchall()]

    def next_id(self, cur: Any, sequence: str) -> int:
        row = cur.execute(
            "UPDATE sequences SET value = value + 1 WHERE name = ? RETURNING value", [sequence]
        ).fetchone()
        return int(row[0])

    def set_sequence(self, cur: Any, sequence: str, value: int) -> None:
        cur.execute("UPDATE sequences SET value = ? WHERE name = ?", [int(value), sequence])

    def string_agg(self, expr: str, sep: str, order: str, source: str) -> str:
        # group_concat keeps the order of its input (an ordered subquery)
        return (
            f"(SELECT group_concat(v, '{sep}') FROM (SELECT {expr} AS v {source} ORDER BY {order}))"
        )


DIALECT = SQLite()
