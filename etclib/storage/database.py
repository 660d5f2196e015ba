"""A store opened on its engine: connections, transactions, the one migration runner.

:class:`Store` says what is a store's own (schema, tables, how it words a fault);
:class:`Database` opens one on the engine its target names; :func:`open_store` keeps one open
database per store and target in the process.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from etclib.storage import dialect_for, redacted
from etclib.storage.dialect import Fault

#: A migration step: one statement in the shared SQL, or a function of a write cursor.
Step = str | Callable[[Any], None]


@dataclass(frozen=True)
class Schema:
    """A store's tables, as migrations: ``(version, steps)`` in increasing order; ``versions``
    names the table recording them (without one, the steps run once per process)."""

    name: str
    migrations: Sequence[tuple[int, Sequence[Step]]]
    versions: str | None = None

    @property
    def version(self) -> int:
        return max(v for v, _ in self.migrations)

    @classmethod
    def of(cls, name: str, ddl: str) -> Schema:
        """``CREATE ... IF NOT EXISTS`` statements (``;``-separated) as a schema of one step each."""
        steps = tuple(s.strip() for s in ddl.split(";") if s.strip())
        return cls(name, ((1, steps),))


@dataclass(frozen=True)
class Store:
    """What the storage layer needs to know of one store."""

    #: Its name (locks, the process's open databases).
    name: str
    #: ``error(fault)``: the store's own exception for a :class:`Fault`, worded for its users.
    error: Callable[[Fault], Exception]
    #: Its tables, made when it is opened (None: its parts apply their own schemas).
    schema: Schema | None = None
    #: The tables ``migrate`` copies, parents first (or a function giving them).
    tables: Sequence[str] | Callable[[], Sequence[str]] = ()
    #: sequence -> (table, column): continued past the largest copied id.
    sequences: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: table -> ORDER BY of its copy where the order of rows matters (default: every column).
    order: dict[str, str] = field(default_factory=dict)
    #: Whether opening reads every page of a file (a damaged store is refused at once).
    check: bool = False

    def table_names(self) -> list[str]:
        return list(self.tables() if callable(self.tables) else self.tables)


def now() -> datetime:
    """The time a row is written: UTC without a zone (the columns are ``TIMESTAMP``)."""
    return datetime.now(UTC).replace(tzinfo=None)


class Database:
    """One store open at ``target`` (a file path or a server URL); ``create``: make it when
    missing (else the "missing" error naming ``source``); ``options`` go to the engine."""

    def __init__(
        self, target: Any, store: Store, *, create: bool = True, source: str = "", **options: Any
    ) -> None:
        self.store, self.target = store, target
        self.dialect = dialect_for(target)
        #: What messages show: the path, or the URL without its password.
        self.label = redacted(str(target))
        self.closed = False
        self._local = threading.local()
        self._applied: set[str] = set()
        with self.faults():
            fresh = self.dialect.prepare(target, create)
            if fresh and not create:
                raise Fault("missing", self.label, source)
            self._lender = self.dialect.lender(target, **options)
        try:
            with self.faults():
                if store.check:
                    self._lender.check()
                schema = store.schema
                # a server holds no file to find: a database without the store's tables is new
                self.created = (
                    fresh
                    if fresh is not None
                    else bool(schema and schema.versions and self.version(schema) == 0)
                )
                if self.created and not create:
                    raise Fault("missing", self.label, source)
                if schema is not None:
                    self.apply(schema)
        except BaseException:
            self._lender.close()
            raise

    # --- connections -----------------------------------------------------------------------

    @contextlib.contextmanager
    def faults(self) -> Iterator[None]:
        """A driver error that is the store's fault (not a query's) as the store's error."""
        try:
            yield
        except Fault as fault:
            raise self.store.error(fault) from fault
        except Exception as exc:
            fault = self.dialect.fault(exc, self.label)
            if fault is None:
                raise
            raise self.store.error(fault) from fault

    def _open(self) -> None:
        if self.closed:
            raise self.store.error(Fault("closed", self.label))

    def cursor(self) -> Any:
        """A connection for reads (inside this thread's write or session: that one's)."""
        self._open()
        inside = getattr(self._local, "writing", None) or getattr(self._local, "session", None)
        if inside is not None:
            return inside
        with self.faults():
            return self._lender.reader(self.faults)

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """A connection inside one transaction, committed at the end and rolled back when the
        block raises; inside a write or a session of the same thread: part of it."""
        if getattr(self._local, "writing", None) is not None:
            yield self._local.writing
            return
        self._open()
        session = getattr(self._local, "session", None)
        if session is not None:
            with self.faults(), self.dialect.transaction(session):
                yield from self._held("writing", session)
            return
        with self.faults(), self._lender.writer() as cur:
            applied = yield from self._outermost("writing", cur)
        self._applied |= applied

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        """A connection for one block, committed when it ends and rolled back when it raises
        (on a file each statement commits unless ``dialect.serialize`` opened a transaction); a
        nested session is part of the outer one."""
        if getattr(self._local, "session", None) is not None:
            yield self._local.session
            return
        self._open()
        with self.faults(), self._lender.session() as con:
            applied = yield from self._outermost("session", con)
        self._applied |= applied

    def _held(self, name: str, con: Any) -> Iterator[Any]:
        setattr(self._local, name, con)
        try:
            yield con
        finally:
            setattr(self._local, name, None)

    def _outermost(self, name: str, con: Any) -> Iterator[Any]:
        """The block's connection; the schemas applied inside it (they count as applied once
        it has committed)."""
        self._local.pending = set()
        try:
            yield from self._held(name, con)
            return self._local.pending
        finally:
            self._local.pending = None

    def query(self, sql: str, params: Sequence | None = None) -> list[tuple]:
        """Rows of a read query."""
        with self.faults():
            return self.cursor().execute(sql, list(params or [])).fetchall()

    def query_df(self, sql: str, params: Sequence | None = None):
        """A read query as a pandas DataFrame (column names from the query)."""
        import pandas as pd

        with self.faults():
            got = self.cursor().execute(sql, list(params or []))
            rows = got.fetchall()
        return pd.DataFrame.from_records(rows, columns=[d[0] for d in got.description or []])

    def changed_elsewhere(self) -> bool:
        """Whether another process committed since this was last asked (engines that can tell)."""
        return not self.closed and self._lender.changed()

    def close(self) -> None:
        """Close every connection of this database."""
        if self.closed:
            return
        self.closed = True
        self._lender.close()
        with _LOCK:
            for key, db in list(_OPEN.items()):
                if db is self:
                    del _OPEN[key]

    # --- schema ----------------------------------------------------------------------------

    def version(self, schema: Schema | None = None) -> int:
        """The version of ``schema`` (default: the store's) applied here; 0 for none."""
        return self._version(self.cursor(), schema or self.store.schema)

    def _version(self, cur: Any, schema: Schema) -> int:
        if not self.dialect.has_table(cur, schema.versions):
            return 0
        return int(cur.execute(f"SELECT max(version) FROM {schema.versions}").fetchone()[0] or 0)

    def apply(self, schema: Schema) -> int | None:
        """Apply the migrations of ``schema`` not applied yet, in one transaction under its lock;
        the version found before (None for a schema without versions)."""
        if schema.versions is None:
            pending = getattr(self._local, "pending", None)
            if schema.name not in self._applied | (pending or set()):
                with self.write() as cur:
                    self.dialect.serialize(cur, f"schema:{schema.name}")
                    self._run(cur, [s for _, steps in schema.migrations for s in steps])
                (self._applied if pending is None else pending).add(schema.name)
            return None
        found = self.version(schema)
        if found > schema.version:
            raise Fault(
                "newer",
                self.label,
                f"schema version {found}, newer than this code knows ({schema.version})",
            )
        if found < schema.version:
            with self.write() as cur:
                self.dialect.serialize(cur, f"schema:{schema.name}")
                cur.execute(
                    f"CREATE TABLE IF NOT EXISTS {schema.versions} "
                    "(version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)"
                )
                done = self._version(cur, schema)  # another process may have applied some
                for version, steps in schema.migrations:
                    if version > done:
                        self._run(cur, steps)
                        cur.execute(
                            f"INSERT INTO {schema.versions} VALUES (?, ?)", [version, now()]
                        )
        return found

    def _run(self, cur: Any, steps: Sequence[Step]) -> None:
        for step in steps:
            if callable(step):
                step(cur)
            else:
                for sql in self.dialect.ddl(step):
                    cur.execute(sql)


_OPEN: dict[tuple[str, str], Database] = {}
_LOCK = threading.RLock()


def key_of(target: Any) -> str:
    """A target as one text: a URL as it is, a file by its resolved path."""
    return target if isinstance(target, str) else str(Path(target).resolve())


def open_store(
    target: str | os.PathLike, store: Store, *, kind: type[Database] = Database, **options: Any
) -> Database:
    """The process's open :class:`Database` of ``store`` at ``target`` (opened on first use,
    as ``kind``; later calls give the same object until it is closed)."""
    key = (store.name, key_of(target))
    with _LOCK:
        db = _OPEN.get(key)
        if db is None or db.closed:
            db = kind(target, store, **options)
            _OPEN[key] = db
        return db


def close_all(store: Store | None = None, target: Any = None) -> None:
    """Close the process's open databases (of ``store``, at ``target``; default: all)."""
    with _LOCK:
        dbs = [
            db
            for (name, key), db in _OPEN.items()
            if (store is None or name == store.name) and (target is None or key == key_of(target))
        ]
    for db in dbs:
        db.close()
