"""A name -> thing registry with one collision rule and one "Did you mean".

A thing that comes in kinds (a provider, a backend, a metric) is registered by name, either as
the thing itself or lazily as ``"package.module:attribute"`` (imported on first use). The rule:
registering a name again with the same target is a no-op; with another target it is refused, so
a plugin cannot silently replace an entry. An unknown name gets one message::

    Unknown LLM provider 'gemni'. Did you mean 'gemini'? Available: openai, gemini.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from typing import Generic, TypeVar

from .errors import ConfigError, EtcError

T = TypeVar("T")


def unknown(kind: str, name: str, known: list[str]) -> str:
    """``Unknown <kind> '<name>'. Did you mean '<close>'? Available: a, b.``"""
    close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"Unknown {kind} {name!r}.{hint} Available: {', '.join(known)}."


class Registry(Generic[T]):
    """Names -> things (or ``"module:attribute"`` strings, loaded on first :meth:`get`), in
    registration order. ``error`` is the exception class for unknown names and collisions."""

    def __init__(
        self,
        kind: str,
        entries: dict[str, T | str] | None = None,
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
        old = self._entries.get(name, target)
        if old is not target and old != target:
            raise self.error(
                f"{self.kind.capitalize()} {name!r} is already registered (from {old!r}); "
                "choose another name."
            )
        self._entries[name] = target

    def get(self, name: str) -> T:
        """The thing registered as ``name`` (loaded if lazy); ``error`` with a suggestion."""
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._entries:
            raise self.error(unknown(self.kind, name, self.names()))
        target = self._entries[name]
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
