"""Opening DuckDB files: never installing or loading an extension, and naming a file that is
not a DuckDB database.

DuckDB, given a file it does not recognise, may download an extension to read it (a SQLite file
made it fetch ``sqlite_scanner``). So every DuckDB file goes through :func:`connect`, with
extension auto-install and auto-load off, after :func:`not_duckdb` has looked at its header.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: DuckDB's settings for every connection the project opens.
CONFIG: dict[str, Any] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
#: Bytes 8-11 of every DuckDB database file (after an 8-byte checksum).
MAGIC = b"DUCK"
#: Headers of other files a DuckDB path might hold by mistake, and what they are.
OTHER_HEADERS = {
    b"SQLite format 3\x00": "a SQLite database",
    b"PAR1": "a Parquet file",
    b"PGDMP": "a PostgreSQL dump",
}


def not_duckdb(path: str | os.PathLike) -> str | None:
    """Why the existing, non-empty file ``path`` is not a DuckDB database (what it looks like),
    or None when its header is DuckDB's (or it is missing, empty or unreadable: DuckDB says)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if not head or head[8:12] == MAGIC:
        return None
    for start, what in OTHER_HEADERS.items():
        if head.startswith(start):
            return f"the file is {what}, not a DuckDB database"
    return "the file does not start with DuckDB's header: not a DuckDB database"


def connect(path: str | os.PathLike, *, read_only: bool = False) -> Any:
    """``duckdb.connect`` with :data:`CONFIG` (``":memory:"`` for an in-memory database)."""
    import duckdb

    target = str(path) if str(path) == ":memory:" else str(Path(path))
    return duckdb.connect(target, read_only=read_only, config=dict(CONFIG))
