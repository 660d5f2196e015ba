"""Copying a store from one target into another, checked: behind every ``migrate`` command.

:func:`copy_store` copies every table in one transaction, then compares each table's row count
and :func:`rows_digest` on both sides (:class:`MigrationReport`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from etclib.storage import dialect, dialect_for, redacted
from etclib.storage.database import Database, key_of
from etclib.storage.dialect import Fault

#: Rows fetched from the source at a time.
CHUNK = 50_000


def copy_table(source: Any, target: Any, table: str, columns: list[str], order: str) -> int:
    """Copy ``columns`` of every row of ``table`` from cursor ``source`` into cursor ``target``
    (inside the target's write transaction), in ``order``; how many rows."""
    got = source.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
    done = 0
    insert = dialect_for(target).insert_rows
    while chunk := got.fetchmany(CHUNK):
        insert(target, table, columns, chunk)
        done += len(chunk)
    return done


def table_digest(cur: Any, table: str, columns: list[str]) -> tuple[int, str]:
    """(rows, SHA-256) of ``table``'s ``columns`` on cursor ``cur`` (:func:`rows_digest`);
    no columns: a table the store does not have, no rows."""
    if not columns:
        return rows_digest([])
    return rows_digest(cur.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall())


def canonical(value: Any) -> Any:
    """A value as both engines' drivers give it, written one way (JSON-safe)."""
    if isinstance(value, bool):  # SQLite keeps a BOOLEAN as 0 / 1
        return int(value)
    if value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes:" + bytes(value).hex()
    return str(value)


def rows_digest(rows: Iterable[Sequence]) -> tuple[int, str]:
    """(rows, SHA-256) of a table's rows: each row written canonically and hashed, the row
    hashes sorted and hashed together, so neither engine's order or collation matters."""
    digests = sorted(
        hashlib.sha256(
            json.dumps([canonical(v) for v in row], ensure_ascii=False).encode()
        ).digest()
        for row in rows
    )
    return len(digests), hashlib.sha256(b"".join(digests)).hexdigest()


@dataclass
class TableCheck:
    """One table compared after a copy."""

    rows_source: int
    rows_target: int
    sha_source: str
    sha_target: str

    @property
    def ok(self) -> bool:
        return self.rows_source == self.rows_target and self.sha_source == self.sha_target


@dataclass
class MigrationReport:
    """What a migration copied and how each table compared."""

    source: str
    target: str
    tables: dict[str, TableCheck] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.tables.values())

    @property
    def differing(self) -> list[str]:
        """Tables whose copy differs from the source."""
        return [t for t, c in self.tables.items() if not c.ok]

    def text(self) -> str:
        """What the ``migrate`` commands print: the copy, each table's comparison, the verdict."""
        out = [f"copied {self.source} -> {self.target}", *self.lines()]
        if self.ok:
            out.append("every table has the same rows and checksum on both sides")
        return "\n".join(out)

    def lines(self) -> list[str]:
        out = [f"{'table':<20} {'rows here':>10} {'rows there':>10}  sha256 (first 16)  same"]
        for table, c in self.tables.items():
            out.append(
                f"{table:<20} {c.rows_source:>10} {c.rows_target:>10}  {c.sha_source[:16]}  "
                + ("yes" if c.ok else f"NO (there: {c.sha_target[:16]})")
            )
        return out


@contextlib.contextmanager
def reading(source: Any, target: Database) -> Iterator[Any]:
    """A cursor of the store ``target.store`` at ``source``, only read: the store there (which
    must exist), or a file of an earlier DuckDB version as it is."""
    db = None
    try:
        db = Database(source, target.store, create=False, source="the copy's source")
        cur = db.cursor()  # connects: SQLite tells a file of another engine here
    except Exception as exc:
        if db is not None:
            db.close()
        if not (isinstance(exc.__cause__, Fault) and exc.__cause__.kind == "legacy"):
            raise
    else:
        try:
            yield cur
        finally:
            db.close()
        return
    legacy = dialect("duckdb")
    con = None
    try:
        con = legacy.connect(source)
        yield con
    except Exception as exc:
        fault = legacy.fault(exc, str(source))
        if fault is None:
            raise
        raise target.store.error(fault) from None
    finally:
        if con is not None:
            con.close()


def copy_store(source: Any, target: Database, *, replace: bool = False) -> MigrationReport:
    """Copy every table of ``target.store`` from ``source`` into ``target`` in one transaction,
    continue its sequences and compare each table on both sides; a target holding rows is
    refused unless ``replace``."""
    store = target.store
    if key_of(source) == key_of(target.target):
        raise store.error(Fault("same", target.label))
    tables = store.table_names()
    report = MigrationReport(redacted(str(source)), target.label)
    with reading(source, target) as src:
        have = dialect_for(src)
        if not have.server:  # a file holds one store: a table of another version is refused
            own = {*have.own_tables, store.schema.versions if store.schema else None}
            unknown = [t for t in have.tables(src) if t not in tables and t not in own]
            if unknown:
                raise store.error(Fault("unknown", redacted(str(source)), ", ".join(unknown)))
        layout = {t: have.columns(src, t) if have.has_table(src, t) else [] for t in tables}
        with target.write() as cur:
            held = {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
            filled = ", ".join(f"{t} ({n})" for t, n in held.items() if n)
            if filled and not replace:
                raise store.error(Fault("filled", target.label, filled))
            for table in reversed(tables):
                cur.execute(f"DELETE FROM {table}")
            for table, cols in layout.items():
                if cols:
                    copy_table(src, cur, table, cols, store.order.get(table, ", ".join(cols)))
            for sequence, (table, column) in store.sequences.items():
                (top,) = cur.execute(f"SELECT max({column}) FROM {table}").fetchone()
                if top is not None:
                    target.dialect.set_sequence(cur, sequence, int(top))
        for table, cols in layout.items():
            here = table_digest(src, table, cols)
            there = table_digest(target.cursor(), table, cols)
            report.tables[table] = TableCheck(here[0], there[0], here[1], there[1])
    return report
