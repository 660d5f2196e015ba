"""The backend of every registered LLM provider that has no backend module of its own.

``etclib.models.hosted:<provider>`` is the class :func:`etclib.models._api.hosted_backend`
makes from the provider's spec (:mod:`etclib.llm.providers`); :data:`etclib.models.REGISTRY`
lists one such entry per provider, so a new provider is a chat and prediction backend with no
file here. Options and settings: :class:`etclib.models._api.HostedBackend`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from etclib.llm import providers
from etclib.models._api import HostedBackend, hosted_backend


@cache
def backend(name: str) -> type[HostedBackend]:
    """The backend class of provider ``name``."""
    return hosted_backend(providers.get(name))


def __getattr__(name: str) -> Any:
    if name in providers.REGISTRY:
        return backend(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
