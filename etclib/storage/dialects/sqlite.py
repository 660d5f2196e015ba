"""SQLite in WAL mode: the embedded engine (many readers, one writer at a time).

Each thread has its own connection (busy timeout, ``synchronous=NORMAL``). Writes run in
``BEGIN IMMEDIATE`` transactions, so a read-then-write step never interleaves with another
process's. Sequences are rows of a ``sequences`` table; times are text, read back as
:class:`datetime` in columns named like a time. Claims are ``lockf`` record locks on
``<file>.claims``, which the kernel drops with their process.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from etclib.storage import MEMORY
from etclib.storage.dialect import Dialect, Fault

#: Milliseconds a statement waits for another process's write lock before failing.
BUSY_TIMEOUT_MS = 30_000
HEADER = b"SQLite format 3\x00"
_STAMP = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?$")
_TIME_NAME = re.compile(r"(_at\b|not_before|_at\)|\bready\b)", re.IGNORECASE)
#: Driver messages that are the file's fault, and what they mean.
_UNWRITABLE = {
    "readonly": "read-only file system or no permission to write",
    "unable to open": "permission denied",
    "disk is full": "no space left on device",
    "disk i/o error": "disk I/O error",
}
_CORRUPT = ("malformed", "corrupt")
#: Bytes of a claims file that keys are spread over.
_CLAIM_SPAN = 1 << 40


sqlite3.register_adapter(datetime, lambda v: v.strftime("%Y-%m-%d %H:%M:%S.%f"))


def _strpos(text: Any, part: Any) -> int | None:
    if text is None or part is None:
        return None
    return str(text).find(str(part)) + 1


def _greatest(*values: Any) -> Any:
    return max((v for v in values if v is not None), default=None)


def _least(*values: Any) -> Any:
    return min((v for v in values if v is not None), default=None)


class Rows:
    """The rows of one statement, time columns read back as :class:`datetime`."""

    def __init__(self, cur: sqlite3.Cursor) -> None:
        self._cur = cur
        self.description = cur.description
        self.rowcount = cur.rowcount
        names = enumerate(cur.description or [])
        self._times = [i for i, d in names if _TIME_NAME.search(str(d[0]))]

    def _fix(self, rows: list) -> list[tuple]:
        if not self._times:
            return rows
        out = []
        for row in rows:
            row = list(row)
            for i in self._times:
                if isinstance(row[i], str) and _STAMP.match(row[i]):
                    row[i] = datetime.fromisoformat(row[i])
            out.append(tuple(row))
        return out

    def fetchone(self) -> tuple | None:
        row = self._cur.fetchone()
        return None if row is None else self._fix([row])[0]

    def fetchall(self) -> list[tuple]:
        return self._fix(self._cur.fetchall())

    def fetchmany(self, size: int) -> list[tuple]:
        return self._fix(self._cur.fetchmany(size))


class Connection:
    """A SQLite connection with the stores' small API (``execute`` with ``?``)."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw
        self.dialect = DIALECT

    def execute(self, sql: str, params: list | tuple | None = None) -> Rows:
        return Rows(self.raw.execute(sql, list(params) if params is not None else []))

    def executemany(self, sql: str, rows: list) -> None:
        self.raw.executemany(sql, rows)

    def copy_rows(self, table: str, columns: list[str], rows) -> None:
        DIALECT.insert_rows(self, table, columns, rows)

    def close(self) -> None:
        self.raw.close()


def connect(path: str | Path, *, busy_ms: int = BUSY_TIMEOUT_MS) -> Connection:
    """A new autocommit connection to the SQLite file ``path``, in WAL mode with a busy
    timeout; usable from any thread, one at a time."""
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
    if mode and str(mode[0]).lower() not in ("wal", "memory"):  # pragma: no cover - e.g. NFS
        raw.close()
        raise sqlite3.OperationalError(f"cannot use WAL mode on {path} (journal mode {mode[0]})")
    raw.execute("PRAGMA synchronous = NORMAL")
    raw.create_function("strpos", 2, _strpos, deterministic=True)
    raw.create_function("greatest", -1, _greatest, deterministic=True)
    raw.create_function("least", -1, _least, deterministic=True)
    return Connection(raw)


def _not_sqlite(path: Path) -> Fault | None:
    """Why the file ``path`` cannot be a SQLite store, or None."""
    from etclib.storage.duckfile import MAGIC, OTHER_HEADERS

    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if head == HEADER or not head:  # empty: SQLite's new file (maybe another process's, now)
        return None
    if head[8:12] == MAGIC:
        return Fault("legacy", str(path), "the file is a DuckDB database of an earlier version")
    for start, what in OTHER_HEADERS.items():
        if head.startswith(start):
            return Fault("corrupt", str(path), f"the file is {what}")
    return Fault("corrupt", str(path), "the file does not start with SQLite's header")


def _os_fault(path: Path, exc: OSError) -> Fault:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC):
        return Fault("unwritable", str(path), os.strerror(exc.errno).lower())
    if exc.errno == errno.EISDIR:
        return Fault("directory", str(path))
    return Fault("other", str(path), os.strerror(exc.errno or 0))


class Lender:
    """A file's connections: one per thread (weakly held: a thread that ends drops its own,
    which SQLite then closes), and one more that watches for other processes' commits."""

    def __init__(self, path: Path, *, busy_ms: int = BUSY_TIMEOUT_MS, **_: Any) -> None:
        self.path, self.busy_ms = path, busy_ms
        self._local = threading.local()
        self._all: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._watch: Connection | None = None
        self._seen: int | None = None

    def reader(self, faults: Any = None) -> Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = connect(self.path, busy_ms=self.busy_ms)
            self._local.con = con
            with self._lock:
                self._all.add(con)
        return con

    @contextlib.contextmanager
    def writer(self) -> Iterator[Connection]:
        con = self.reader()
        with DIALECT.transaction(con):
            yield con

    @contextlib.contextmanager
    def session(self) -> Iterator[Connection]:
        con = connect(self.path, busy_ms=self.busy_ms)  # the block's own, closed with it
        try:
            yield con
            if con.raw.in_transaction:  # begun by serialize(): committed with the block
                con.raw.execute("COMMIT")
        finally:
            con.close()  # a transaction still open (the block raised) is rolled back

    def _watcher(self) -> Connection:
        if self._watch is None:
            self._watch = connect(self.path, busy_ms=self.busy_ms)
        return self._watch

    def changed(self) -> bool:
        with self._lock:
            try:
                (version,) = self._watcher().raw.execute("PRAGMA data_version").fetchone()
            except sqlite3.Error:
                return False
            changed = self._seen is not None and version != self._seen
            self._seen = version
            return changed

    def check(self) -> None:
        if self.path.is_file() and self.path.stat().st_size == 0:  # before a connection fills it
            raise Fault("corrupt", str(self.path), "the file is empty (0 bytes)")
        with self._lock:
            rows = self._watcher().raw.execute("PRAGMA quick_check").fetchall()
        if [r[0] for r in rows] != ["ok"]:
            raise Fault("corrupt", str(self.path), "; ".join(str(r[0]) for r in rows[:3]))

    def close(self) -> None:
        with self._lock:  # not while changed() of another thread uses the watch
            cons, self._all = [*self._all], weakref.WeakSet()
            if self._watch is not None:
                with contextlib.suppress(Exception):
                    self._watch.close()
            self._watch = None
        for con in cons:
            with contextlib.suppress(Exception):
                con.close()
        self._local = threading.local()


class Claims:
    """Claims on one byte of ``<file>.claims`` per key (``lockf`` record locks). One descriptor
    per file and process, never closed: closing any descriptor of a file would drop every lock
    the process holds on it."""

    _fds: dict[str, int] = {}
    _lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.name = str(path.with_name(path.name + ".claims").resolve())

    def _fd(self) -> int:
        with self._lock:
            if self.name not in self._fds:
                self._fds[self.name] = os.open(self.name, os.O_RDWR | os.O_CREAT, 0o644)
            return self._fds[self.name]

    @staticmethod
    def _offset(key: str) -> int:
        return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) % _CLAIM_SPAN

    def try_lock(self, key: str) -> bool:
        import fcntl

        try:
            fcntl.lockf(self._fd(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, self._offset(key))
        except OSError:
            return False
        return True

    def unlock(self, key: str) -> None:
        import fcntl

        fcntl.lockf(self._fd(), fcntl.LOCK_UN, 1, self._offset(key))

    def close(self) -> None:
        pass


class SQLite(Dialect):
    name = "sqlite"
    schemes = ("sqlite:///",)
    shared = True
    # the write lock from the start: a read-then-write step runs one writer at a time
    begin = "BEGIN IMMEDIATE"
    own_tables = ("sequences",)

    def path(self, target: Any) -> Path:
        """The file a target names: a path, or a URL of this engine (``sqlite:///relative``,
        ``sqlite:////absolute``)."""
        text = str(target)
        scheme = next((s for s in self.schemes if text.startswith(s)), "")
        return Path(text[len(scheme) :])

    def connect(self, target: Any, **options: Any) -> Connection:
        return connect(self.path(target), **options)

    def prepare(self, target: Any, create: bool) -> bool:
        path = self.path(target)
        if str(target) == MEMORY:
            return True
        if path.is_dir() or (path.exists() and not path.is_file()):
            raise Fault("directory", str(path))
        if path.exists():  # its header is read only once SQLite refuses it (see fault())
            return False
        if not create:
            return True
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _os_fault(path, exc) from None
        return True

    def lender(self, target: Any, **options: Any) -> Lender:
        return Lender(self.path(target), **options)

    def fault(self, exc: BaseException, where: str) -> Fault | None:
        if isinstance(exc, OSError):
            return _os_fault(Path(where), exc)
        if not isinstance(exc, sqlite3.Error):
            return None
        low = str(exc).lower()
        for hint, reason in _UNWRITABLE.items():
            if hint in low:
                if hint == "unable to open" and Path(where).is_dir():
                    return Fault("directory", where)
                return Fault("unwritable", where, reason)
        if "not a database" in low:
            # what the file is, read once SQLite has refused it: reading a database's file
            # beside SQLite closes a descriptor of it, which drops this process's locks on it
            return _not_sqlite(self.path(where)) or Fault("corrupt", where, str(exc))
        if any(h in low for h in _CORRUPT):
            return Fault("corrupt", where, str(exc))
        if "locked" in low or "busy" in low:
            return Fault("busy", where, str(exc))
        return None

    def claims(self, target: Any) -> Claims:
        return Claims(self.path(target))

    def exists(self, target: Any) -> bool:
        return self.path(target).exists()

    def ddl(self, sql: str) -> list[str]:
        m = re.match(r"\s*CREATE SEQUENCE (\w+) START (\d+)\s*$", sql)
        if m:
            return [
                "CREATE TABLE IF NOT EXISTS sequences (name VARCHAR PRIMARY KEY, "
                "value BIGINT NOT NULL)",
                f"INSERT INTO sequences VALUES ('{m.group(1)}', {int(m.group(2)) - 1})",
            ]
        # every SQLite table has its insertion order as an implicit rowid already
        if re.match(r"\s*ALTER TABLE \w+ ADD COLUMN rowid\b", sql, re.IGNORECASE):
            return []
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

    def tables(self, cur: Any) -> list[str]:
        rows = cur.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        ).fetchall()
        return [r[0] for r in rows]

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
