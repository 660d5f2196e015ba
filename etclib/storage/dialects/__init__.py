"""The registry of engines: name -> its :class:`~etclib.storage.dialect.Dialect` module.

Adding an engine is one new module here and one line in :data:`_MODULES`.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from ..dialect import Dialect

#: name -> module under this package (imported on first use).
_MODULES = {"sqlite": "sqlite", "postgresql": "postgresql", "duckdb": "duckdb"}
#: The engine of a plain file path.
EMBEDDED = "sqlite"
DIALECTS: dict[str, Dialect] = {}


def dialect(name: str) -> Dialect:
    """The dialect registered as ``name``."""
    if name not in DIALECTS:
        if name not in _MODULES:
            from ...errors import ConfigError

            raise ConfigError(f"Unknown storage engine {name!r}. Available: {', '.join(_MODULES)}.")
        module = importlib.import_module(f"{__name__}.{_MODULES[name]}")
        DIALECTS[name] = module.DIALECT
    return DIALECTS[name]


def _by_scheme(text: str) -> str | None:
    for name in _MODULES:
        if any(text.startswith(s) for s in dialect(name).schemes):
            return name
    return None


def is_url(target: object) -> bool:
    """Whether a store setting names a server (a URL of a registered engine), not a file."""
    return isinstance(target, str) and _by_scheme(target.strip()) is not None


def dialect_for(target: str | os.PathLike | Any) -> Dialect:
    """The dialect of a store target (a URL by its scheme; a file path: the embedded engine)
    or of a cursor or connection that carries one (``.dialect``)."""
    carried = getattr(target, "dialect", None)
    if isinstance(carried, Dialect):
        return carried
    if isinstance(target, str):
        name = _by_scheme(target.strip())
        if name is not None:
            return dialect(name)
    return dialect(EMBEDDED)
