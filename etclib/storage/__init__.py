"""One storage layer for the project's stores (the leaderboard's board and queue, the
judge-vs-human studies, the judge cache).

A store is named by one setting (``ETC_LEADERBOARD_DB``, ``ETC_STUDIES_DB``, ``ETC_JUDGE_CACHE``)
that holds a file path (the embedded engine, SQLite in WAL mode: many processes of one machine)
or a URL (``postgresql://``: many machines). What differs between engines lives in one
:class:`~etclib.storage.dialect.Dialect` per engine, one module each under
:mod:`etclib.storage.dialects`, registered by name in :data:`DIALECTS`:

- :func:`dialect_for` picks the dialect of a target (the URL scheme; a plain path is SQLite);
- :mod:`etclib.storage.copier` copies and checks tables between any two stores (every
  ``migrate`` command and the in-place upgrade of a legacy DuckDB file use it);
- :mod:`etclib.storage.upgrade` upgrades a store file of the DuckDB days (the board, the
  studies) into SQLite in place, one function for both;
- :mod:`etclib.storage.server` opens PostgreSQL URLs (connections and pools) for the
  postgresql dialect.

The legacy DuckDB engine (:mod:`etclib.storage.dialects.duckdb`) is only read: to upgrade a
file written before the switch to SQLite, and by ``migrate`` from such a file.
"""

from __future__ import annotations

import os

from .dialect import Dialect
from .dialects import DIALECTS, dialect, dialect_for, is_url

__all__ = ["DIALECTS", "Dialect", "dialect", "dialect_for", "is_url", "target_of"]


def target_of(raw: str | os.PathLike) -> str | os.PathLike:
    """A setting's value as a store target: a URL stays text, anything else is a path."""
    from pathlib import Path

    text = str(raw).strip()
    return text if is_url(text) else Path(raw)
