"""The LLM providers, registered by name: one module per provider exporting one ``SPEC``
(:class:`~.base.ProviderSpec`). Everything that needs a provider reads this registry; adding one
is one module and one line in :data:`REGISTRY`. Spec modules import no SDK, so the registry loads
them all at import and installs their model rows and secret names at once.
"""

from __future__ import annotations

from etclib.core.registry import Registry
from etclib.llm.providers.base import (
    DEFAULT_TIMEOUT,
    Batch,
    JSONAnswers,
    ModelListing,
    PromptCache,
    ProviderSpec,
    Quotas,
    ServiceTiers,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "REGISTRY",
    "Batch",
    "JSONAnswers",
    "ModelListing",
    "PromptCache",
    "ProviderSpec",
    "Quotas",
    "ServiceTiers",
    "get",
    "names",
    "register",
    "specs",
]

#: name -> ``"module:SPEC"``; the first is the default judge provider's neighbour in listings
REGISTRY: Registry[ProviderSpec] = Registry(
    "LLM provider",
    {
        "openai": "etclib.llm.providers.openai:SPEC",
        "gemini": "etclib.llm.providers.gemini:SPEC",
        "anthropic": "etclib.llm.providers.anthropic:SPEC",
    },
)


def get(name: str) -> ProviderSpec:
    """The spec of provider ``name``; ConfigError with "Did you mean" otherwise."""
    return REGISTRY.get(name)


def names() -> tuple[str, ...]:
    """The registered provider names, in registration order."""
    return tuple(REGISTRY.names())


def specs(capability: type | None = None) -> list[ProviderSpec]:
    """The registered specs, in registration order; with ``capability`` (a protocol of
    :mod:`.base`), only those that have it."""
    return [s for _, s in REGISTRY.items() if capability is None or isinstance(s, capability)]


def _install() -> None:
    """Hand every spec's model rows to the capability table, its secret names to redaction
    and its SDK floor to :mod:`etclib.llm.sdk` (all sit below this package and cannot import
    it)."""
    for spec in specs():
        _install_one(spec)


def _install_one(spec: ProviderSpec) -> None:
    from etclib.core import redact
    from etclib.llm import models, sdk

    models.install(spec.name, spec.models, spec.token_param, spec.unknown_model)
    redact.add_secret_settings(spec.secret_settings)
    if spec.sdk_floor is not None and spec.package:
        sdk.install(spec.package, *spec.sdk_floor)


_install()


def register(name: str, target: ProviderSpec | str) -> None:
    """Add a provider from outside etclib (a plugin, a test): same collision rule as the
    library's own; its rows and secret names are installed at once."""
    REGISTRY.register(name, target)
    _install_one(REGISTRY.get(name))
