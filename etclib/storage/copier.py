"""The one table copier behind every ``migrate`` and the in-place upgrade of a legacy board.

:func:`copy_table` streams one table's rows from any store's cursor into another's (the target's
dialect inserts them in bulk); :func:`rows_digest` checks a copy: each row written canonically and
hashed, the row hashes sorted and hashed together, so neither engine's order, collation or
driver types matter. :class:`TableCheck` compares one table (count and SHA-256) and
:class:`MigrationReport` prints the comparison of all of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from .dialects import dialect_for
from .urls import redacted

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


def table_digest(store: Any, table: str, columns: list[str]) -> tuple[int, str]:
    """(rows, SHA-256) of ``table``'s ``columns`` (:func:`rows_digest`); ``store`` is a cursor,
    or an open store with ``query(sql)``."""
    sql = f"SELECT {', '.join(columns)} FROM {table}"
    query = getattr(store, "query", None)
    return rows_digest(query(sql) if query is not None else store.execute(sql).fetchall())


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
    total = hashlib.sha256()
    for d in digests:
        total.update(d)
    return len(digests), total.hexdigest()


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
        out = [f"copied {self.source} -> {redacted(self.target)}", *self.lines()]
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


def filled_tables(cur, tables: list[str] | tuple[str, ...]) -> str:
    """``"t1 (12), t2 (3)"``: the tables of ``tables`` that hold rows on cursor ``cur``, with
    their counts; empty when none does (a migration's target check, run inside the
    transaction that copies, so nothing can slip in between)."""
    held = {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    return ", ".join(f"{t} ({n})" for t, n in held.items() if n)
