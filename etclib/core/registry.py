"""Name -> thing registries: one collision rule and one "Did you mean" for every kind.

After lm-evaluation-harness's ``Registry``: :func:`add` registers a name (another thing under
the same name is an error naming both; the same thing twice is harmless), :func:`lookup`
returns it or a message that says what to do ("Unknown metric 'blue'. Did you mean 'bleu'?
Available: bleu, rouge."). :class:`Registry` adds lazy ``"module:attribute"`` entries.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any, Generic, TypeVar

from etclib.core.errors import ConfigError, EtcError

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
    if known is not thing and known != thing:
        raise error(
            f"{kind[:1].upper()}{kind[1:]} {name!r} is already registered (from {known}); "
            "choose another name."
        )
    registry[name] = thing
    return thing


class Registry(Generic[T]):
    """Names -> things (or ``"module:attribute"`` strings, loaded on first :meth:`get`), in
    registration order, under :func:`add`'s collision rule and :func:`lookup`'s message.
    ``error`` is the exception class for unknown names and collisions."""

    def __init__(
        self,
        kind: str,
        entries: Mapping[str, T | str] | None = None,
        *,
        error: type[EtcError] = ConfigError,
    ) -> None:
        self.kind = kind
        self.error = error
        self._entries: dict[str, T | str] = {}
        self._loaded: dict[str, T] = {}
        for name, target in (entries or {}).items():
            self.register(name, target)

    def register(self, name: str, target: T | str) -> None:
        """Add ``name``; the same target again is a no-op, another target is refused."""
        add(self._entries, name, target, kind=self.kind, error=self.error)

    def get(self, name: str) -> T:
        """The thing registered as ``name`` (loaded if lazy); ``error`` with a suggestion."""
        if name in self._loaded:
            return self._loaded[name]
        target = lookup(self._entries, name, kind=self.kind, error=self.error)
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            target = getattr(importlib.import_module(module), attr)
        self._loaded[name] = target  # type: ignore[assignment]
        return target  # type: ignore[return-value]

    def names(self) -> list[str]:
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return [(name, self.get(name)) for name in self._entries]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()!r})"
