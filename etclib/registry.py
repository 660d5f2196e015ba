"""Name -> thing registries: one collision rule and one "Did you mean" for every kind.

etclib keeps its kinds (metrics, backends, tracks, CLI commands, ...) in plain dicts, each
beside its code; these helpers are what every such dict shares, after lm-evaluation-harness's
``Registry``:

- :func:`add`: register ``name``; the same name again with another thing is an error naming
  both (registering the same thing twice is harmless: a module imported twice);
- :func:`lookup`: the thing of ``name``, or an error that says what was wrong and what to do
  (:func:`unknown`: "Unknown metric 'blue'. Did you mean 'bleu'? Available: bleu, rouge.");
- :func:`suggest`: the " Did you mean 'x'?" part alone, for a message of another form.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any, TypeVar

from .errors import ConfigError, EtcError

T = TypeVar("T")


def suggest(name: Any, names: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``" Did you mean 'x'?"`` for the closest of ``names`` to ``name``, or ``""``."""
    close = difflib.get_close_matches(str(name), list(names), n=1, cutoff=cutoff)
    return f" Did you mean {close[0]!r}?" if close else ""


def unknown(
    kind: str,
    name: Any,
    names: Iterable[str],
    *,
    cutoff: float = 0.6,
    available: Iterable[str] | None = None,
) -> str:
    """The message for a name that is not registered: what, the closest name, what there is
    (``available``, default ``names``)."""
    names = list(names)
    shown = ", ".join(names if available is None else available)
    return f"Unknown {kind} {str(name)!r}.{suggest(name, names, cutoff=cutoff)} Available: {shown}."


def lookup(
    registry: Mapping[str, T],
    name: str,
    *,
    kind: str,
    error: type[EtcError] = ConfigError,
    cutoff: float = 0.6,
) -> T:
    """``registry[name]``, or ``error`` with :func:`unknown`'s message."""
    if name not in registry:
        raise error(unknown(kind, name, registry, cutoff=cutoff))
    return registry[name]


def add(
    registry: MutableMapping[str, T],
    name: str,
    thing: T,
    *,
    kind: str,
    error: type[EtcError] = ConfigError,
) -> T:
    """Register ``thing`` as ``name``; another thing already registered as ``name`` is an
    ``error`` (the one collision rule), the same thing again is accepted. Returns ``thing``."""
    known = registry.get(name, thing)
    if known != thing:
        raise error(
            f"{kind[:1].upper()}{kind[1:]} {name!r} is already registered (from {known}); "
            "choose another name."
        )
    registry[name] = thing
    return thing
