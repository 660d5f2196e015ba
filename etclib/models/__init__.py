"""Model backends: one module per backend behind one small interface, registered by name.

A backend turns task items into emotion transcriptions (``get_backend("retrieval")
.predict(items)``). Each backend module defines one :class:`~etclib.models.base.Backend`
subclass named ``BACKEND``, imported only when used (listing backends never imports torch or an
API SDK); its options are its constructor's keyword arguments. See docs/models.md.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from etclib.core import registry as names
from etclib.core.errors import BackendError, ConfigError, EtcError
from etclib.llm import providers as _llm_providers
from etclib.models.base import Backend as Backend

#: name -> module defining ``BACKEND`` (or ``"module:attribute"``): the transcription track's
#: backends, and one per registered LLM provider (:mod:`etclib.models.hosted`). Another track
#: lists its own (``Track.backends``); the functions below take that registry.
REGISTRY: dict[str, str] = {
    "retrieval": "etclib.models.retrieval",
    "constant": "etclib.models.constant",
    "copy": "etclib.models.copy",
    "hf": "etclib.models.hf",
}
for _provider in _llm_providers.names():
    REGISTRY.setdefault(_provider, f"etclib.models.hosted:{_provider}")
DEFAULT_BACKEND = "retrieval"
Registry = Mapping[str, str]


_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def register(name: str, module: str, registry: dict[str, str] | None = None) -> None:
    """Make backend ``name`` available from ``module`` (a plugin, a test); another module
    already registered under ``name`` is refused, so a plugin cannot silently replace it."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"Backend name {name!r} is not valid: use lower-case letters, digits, '-' and '_', "
            "starting with a letter."
        )
    names.add(REGISTRY if registry is None else registry, name, module, kind="backend")


def backend_class(name: str, registry: Registry | None = None) -> type[Backend]:
    """The class registered as ``name`` (in ``registry``, default :data:`REGISTRY`);
    ``BackendError`` with a suggestion if there is none."""
    reg = REGISTRY if registry is None else registry
    if name not in reg:
        raise BackendError(names.unknown("backend", name, list(reg), cutoff=0.5))
    module, _, attr = reg[name].partition(":")
    return getattr(importlib.import_module(module), attr or "BACKEND")


def options_of(name: str, registry: Registry | None = None) -> dict[str, Any]:
    """A backend's options and their defaults (``inspect.Parameter.empty`` when required)."""
    params = inspect.signature(backend_class(name, registry).__init__).parameters
    return {
        p.name: p.default
        for p in params.values()
        if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


def get_backend(name: str, *, registry: Registry | None = None, **options: Any) -> Backend:
    """Create backend ``name`` with ``options``; unknown names and options are refused early.
    ``None`` options are dropped, so a CLI can pass every flag and let defaults apply."""
    cls = backend_class(name, registry)
    given = {k: v for k, v in options.items() if v is not None}
    known = options_of(name, registry)
    for key in given:
        if key not in known:
            takes = ", ".join(known) or "no options"
            hint = names.suggest(key, known, cutoff=0.5)
            raise ConfigError(f"Backend {name!r} has no option {key!r}.{hint} It takes: {takes}.")
    return cls(**given)


@dataclass(frozen=True)
class BackendStatus:
    """Whether a backend can be used right now, for the site's picker."""

    name: str
    description: str
    usable: bool
    reason: str


def backend_status(name: str, registry: Registry | None = None) -> BackendStatus:
    """Whether backend ``name`` is usable here and why not; never raises (an unknown name, a
    broken module, a failing availability check come back as unusable, with the reason)."""
    try:
        cls = backend_class(name, registry)
    except EtcError as exc:
        return BackendStatus(name, "", False, str(exc))
    except Exception as exc:  # noqa: BLE001 - a broken module must not break a listing
        return BackendStatus(
            name, "", False, f"cannot be imported: {exc.__class__.__name__}: {exc}"
        )
    try:
        usable, reason = cls.availability()
    except Exception as exc:  # noqa: BLE001 - availability() should not raise; report if it does
        usable, reason = False, f"availability check failed: {exc.__class__.__name__}: {exc}"
    return BackendStatus(name, cls.description, bool(usable), str(reason))


def configured_backends(registry: Registry | None = None) -> list[BackendStatus]:
    """:func:`backend_status` of every backend of ``registry`` (default :data:`REGISTRY`)."""
    reg = REGISTRY if registry is None else registry
    return [backend_status(name, reg) for name in reg]
