"""One storage layer for the project's stores: the leaderboard's board, the judge-vs-human
studies, the judge cache.

A store is named by one setting holding a file path (SQLite, the embedded default) or a URL
(``postgresql://``). An engine is one module under :mod:`etclib.storage.dialects`, registered in
:data:`ENGINES`; :mod:`etclib.storage.copier` copies a store between two targets.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from etclib.storage.dialect import Dialect
from etclib.storage.dialect import Fault as Fault

#: Engine name -> its module (imported on first use). A new engine: one module, one line.
ENGINES = {
    "sqlite": "etclib.storage.dialects.sqlite",
    "postgresql": "etclib.storage.dialects.postgresql",
    "duckdb": "etclib.storage.dialects.duckdb",
}
#: The engine of a plain file path.
EMBEDDED = "sqlite"
#: A target of the embedded engine that lives as long as its connection: a store read before
#: it exists, without making it.
MEMORY = ":memory:"


def dialect(name: str) -> Dialect:
    """The engine registered as ``name``."""
    if name not in ENGINES:
        from etclib.core.errors import ConfigError

        raise ConfigError(f"Unknown storage engine {name!r}. Available: {', '.join(ENGINES)}.")
    return importlib.import_module(ENGINES[name]).DIALECT


def _scheme_engine(text: str) -> str | None:
    for name in ENGINES:
        if any(text.startswith(s) for s in dialect(name).schemes):
            return name
    return None


def dialect_for(target: str | os.PathLike | Any) -> Dialect:
    """The engine of a store target (a URL by its scheme; a file path: the embedded engine),
    or of a cursor or connection that carries one (``.dialect``)."""
    carried = getattr(target, "dialect", None)
    if isinstance(carried, Dialect):
        return carried
    name = _scheme_engine(target.strip()) if isinstance(target, str) else None
    return dialect(name or EMBEDDED)


def target_of(raw: str | os.PathLike) -> str | Path:
    """A setting's value as a store target: a URL of a registered engine stays text, anything
    else is a file path."""
    text = str(raw).strip()
    return text if _scheme_engine(text) else Path(raw)


def redacted(url: str) -> str:
    """A target for messages and logs: a URL without its password."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(str(url))
    if parts.password is None:
        return str(url)
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
