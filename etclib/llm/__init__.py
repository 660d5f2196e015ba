"""One LLM client stack for the judge and the backends, whatever the provider.

:mod:`.providers` registers the providers, :mod:`.models` holds the capability and price table,
:mod:`.chat` what a call returns, :mod:`.retry` fault classification and retry loops. Every SDK
client has its own retries off, so callers own the retry policy. See docs/providers.md.
"""

from __future__ import annotations

import logging

from etclib.core.errors import (
    EmptyAnswerError,
    QuotaExhaustedError,
    ServiceError,
    UnsupportedSettingError,
)
from etclib.llm import providers
from etclib.llm.chat import Reply, Usage
from etclib.llm.models import Decoding, ModelInfo, decoding, info
from etclib.llm.providers import Quotas
from etclib.llm.retry import CallFailed, Fault, RetryPolicy, classify

__all__ = [
    "PROVIDERS",
    "CallFailed",
    "Decoding",
    "Fault",
    "ModelInfo",
    "Reply",
    "RetryPolicy",
    "Usage",
    "classify",
    "configured",
    "decoding",
    "endpoint",
    "failure",
    "info",
    "quota_error",
]

#: Provider failures are logged here with their reference id and redacted detail.
log = logging.getLogger("etclib.llm")

#: The registered provider names (:mod:`.providers`).
PROVIDERS: tuple[str, ...] = providers.names()

#: Default per-request timeout in seconds.
DEFAULT_TIMEOUT = providers.DEFAULT_TIMEOUT
#: a used-up quota of a provider that names none: (what ran out, in words; where to check it)
QUOTA_PAGES = ("a quota of the model service", "the provider's usage and billing pages")


def configured(provider: str) -> bool:
    """Whether ``provider`` has a key to call it with (ConfigError for an unknown name)."""
    return providers.get(provider).configured()


def endpoint(provider: str) -> str:
    """A human-readable description of where ``provider``'s requests go (for messages)."""
    return providers.get(provider).endpoint()


def quota_error(fault: Fault, *, provider: str, who: str, resume: str = "") -> QuotaExhaustedError:
    """The error for a used-up quota (``fault.kind == "quota"``): which provider, which quota
    (``fault.what``: OpenAI's ``insufficient_quota`` or a Gemini ``quotaId``), where to check
    it, and ``resume`` (what running again does), logged with its detail."""
    spec = providers.get(provider) if provider in providers.REGISTRY else None
    words, where = spec.quota_pages if isinstance(spec, Quotas) else QUOTA_PAGES
    named = f" ({fault.what})" if fault.what else ""
    status = f" (HTTP {fault.status})" if fault.status else ""
    public = (
        f"{who}: the {provider} quota is used up: {words}{named}{status}; no wait within this "
        f"run helps, so it stopped. Check it at {where}." + (f" {resume}" if resume else "")
    )
    err = QuotaExhaustedError(
        public,
        provider=provider,
        quota=fault.what or words,
        where=where,
        detail=fault.detail,
        status=fault.status,
    )
    log.warning("%s [ref %s]: %s", who, err.ref, fault.detail)
    return err


def failure(
    fault: Fault,
    *,
    provider: str,
    who: str,
    attempts: int = 1,
    cls: type[ServiceError] = ServiceError,
) -> ServiceError:
    """The public-safe error for a call that failed for good, logged with its detail.

    ``who`` names the caller in our words (``"The openai backend (model 'gpt-4.1')"``); the
    redacted provider text is only the error's ``detail``.
    """
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    if fault.kind == "unsupported":
        public = (
            f"{who}: {fault.public}. etclib sends temperature 0 and max_tokens to models that "
            "are not in its capability table (etclib/llm/models.py); add this model's family "
            "there (one line) with what it accepts."
        )
        err: ServiceError = UnsupportedSettingError(
            public, setting=fault.what or "", detail=fault.detail, status=fault.status
        )
    elif fault.kind == "quota":
        return quota_error(fault, provider=provider, who=who)
    elif fault.kind in ("empty", "blocked"):
        err = EmptyAnswerError(
            f"{who}: {fault.public}{tries}.",
            reason=fault.what or "empty",
            detail=fault.detail,
            kind=fault.kind,
        )
    else:
        hints = providers.get(provider).hints if provider in providers.REGISTRY else {}
        hint = hints.get(fault.kind, "")
        public = f"{who}: {fault.public}{tries}." + (f" {hint}" if hint else "")
        err = cls(public, detail=fault.detail, kind=fault.kind, status=fault.status)
    log.warning("%s [ref %s]: %s", who, err.ref, fault.detail)
    return err
