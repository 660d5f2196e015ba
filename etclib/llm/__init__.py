"""One LLM client stack for the judge and the backends: OpenAI-compatible servers and Gemini.

- this module: client factories (keys and endpoints from settings), closing clients, and
  :func:`failure`, which turns a classified failure into a public-safe error;
- :mod:`.models`: the per-model capability table (temperature, token-limit field, structured
  output, thinking) and prices; :func:`~.models.decoding` says what a model gets;
- :mod:`.chat`: request building and reply reading for both protocols, the empty-answer rule,
  usage counting (:class:`~.chat.Usage`);
- :mod:`.retry`: error classification, retry delays (Retry-After and Gemini's RetryInfo), the
  sync and streaming retry loops.

The judge (:mod:`etclib.judge`) adds caching and structured output on top; the backends
(:mod:`etclib.backends.openai`, ``gemini``) add streaming.

Keys and endpoints are read with :func:`etclib.config.setting`, so they may come from the
environment or from ``.streamlit/secrets.toml``:

- OpenAI (and OpenAI-compatible servers such as vLLM): ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``
  (the SDK's own names). A self-hosted server that checks no key still needs a non-empty value,
  e.g. ``OPENAI_API_KEY=EMPTY``.
- Gemini: ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``); ``ETC_GEMINI_BASE_URL`` overrides the
  endpoint (a proxy, or the loopback fake server in tests).

The SDKs are imported only when a client is built; a missing SDK raises
:class:`~etclib.errors.DependencyError` naming the package. Every client is built with the SDK's
own retries switched off (``max_retries=0`` / one attempt), so that callers own retry policy and
count retries themselves.
"""

from __future__ import annotations

import logging
from typing import Any

from ..config import setting
from ..errors import (
    ConfigError,
    DependencyError,
    EmptyAnswerError,
    QuotaExhaustedError,
    ServiceError,
    UnsupportedSettingError,
)
from .chat import Reply, Usage
from .models import Decoding, ModelInfo, decoding, info
from .retry import CallFailed, Fault, RetryPolicy, classify

__all__ = [
    "PROVIDERS",
    "CallFailed",
    "Decoding",
    "Fault",
    "ModelInfo",
    "Reply",
    "RetryPolicy",
    "Usage",
    "aclose_gemini",
    "classify",
    "configured",
    "decoding",
    "endpoint",
    "failure",
    "gemini_client",
    "info",
    "openai_client",
    "quota_error",
]

#: Provider failures are logged here with their reference id and redacted detail.
log = logging.getLogger("etclib.llm")

PROVIDERS: tuple[str, ...] = ("openai", "gemini")

#: Default per-request timeout in seconds.
DEFAULT_TIMEOUT = 60.0


def openai_api_key() -> str | None:
    """The OpenAI key (``OPENAI_API_KEY``), or None."""
    return setting("OPENAI_API_KEY")


def openai_base_url() -> str | None:
    """The OpenAI endpoint override (``OPENAI_BASE_URL``), or None for api.openai.com."""
    return setting("OPENAI_BASE_URL")


def gemini_api_key() -> str | None:
    """The Gemini key: ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``, else None."""
    return setting("GEMINI_API_KEY") or setting("GOOGLE_API_KEY")


def gemini_base_url() -> str | None:
    """The Gemini endpoint override (``ETC_GEMINI_BASE_URL``), or None for Google's endpoint."""
    return setting("ETC_GEMINI_BASE_URL")


def configured(provider: str) -> bool:
    """Whether ``provider`` (``"openai"`` or ``"gemini"``) has a key to call it with."""
    if provider == "openai":
        return bool(openai_api_key())
    if provider == "gemini":
        return bool(gemini_api_key())
    raise ConfigError(f"Unknown LLM provider {provider!r}. Available: {', '.join(PROVIDERS)}.")


def configured_providers() -> dict[str, bool]:
    """``{"openai": bool, "gemini": bool}``: which providers have a key."""
    return {p: configured(p) for p in PROVIDERS}


def endpoint(provider: str) -> str:
    """A human-readable description of where ``provider``'s requests go (for messages)."""
    if provider == "openai":
        return openai_base_url() or "https://api.openai.com/v1"
    if provider == "gemini":
        return gemini_base_url() or "https://generativelanguage.googleapis.com"
    raise ConfigError(f"Unknown LLM provider {provider!r}. Available: {', '.join(PROVIDERS)}.")


def _require_openai_key(api_key: str | None) -> str:
    key = api_key or openai_api_key()
    if not key:
        raise ConfigError(
            "No OpenAI API key: set OPENAI_API_KEY in the environment or in "
            ".streamlit/secrets.toml (for a self-hosted OpenAI-compatible server that checks "
            "no key, set OPENAI_API_KEY=EMPTY and OPENAI_BASE_URL to its /v1 URL)."
        )
    return key


def _require_gemini_key(api_key: str | None) -> str:
    key = api_key or gemini_api_key()
    if not key:
        raise ConfigError(
            "No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment or "
            "in .streamlit/secrets.toml; get one at https://aistudio.google.com/apikey."
        )
    return key


def openai_client(
    async_: bool = False,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    api_key: str | None = None,
    base_url: str | None = None,
) -> Any:
    """An ``openai.OpenAI`` (or ``openai.AsyncOpenAI`` with ``async_=True``) client.

    ``api_key`` / ``base_url`` default to ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``. The SDK's
    retries are off (``max_retries=0``); ``timeout`` is in seconds.
    Raises ConfigError without a key, DependencyError without the ``openai`` package.
    """
    key = _require_openai_key(api_key)
    try:
        import openai
    except ImportError as exc:
        raise DependencyError(
            "The OpenAI provider needs the 'openai' package: pip install openai"
        ) from exc
    cls = openai.AsyncOpenAI if async_ else openai.OpenAI
    return cls(
        api_key=key,
        base_url=base_url or openai_base_url() or None,
        timeout=timeout,
        max_retries=0,
    )


def gemini_client(
    *,
    timeout: float = DEFAULT_TIMEOUT,
    api_key: str | None = None,
    base_url: str | None = None,
) -> Any:
    """A ``google.genai.Client`` for the Gemini Developer API (its ``.aio`` is the async client).

    ``api_key`` / ``base_url`` default to ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``) /
    ``ETC_GEMINI_BASE_URL``. The SDK makes one attempt per request (its retries are off);
    ``timeout`` is in seconds. Raises ConfigError without a key, DependencyError without the
    ``google-genai`` package.
    """
    key = _require_gemini_key(api_key)
    try:
        from google import genai
        from google.genai import types
    except ImportError as exc:
        raise DependencyError(
            "The Gemini provider needs the 'google-genai' package: pip install google-genai"
        ) from exc
    options = types.HttpOptions(
        base_url=base_url or gemini_base_url() or None,
        timeout=max(1, int(timeout * 1000)),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=key, vertexai=False, http_options=options)


async def aclose_gemini(client: Any) -> None:
    """Close a ``genai.Client``'s async transport. ``client.aio.aclose()`` exists from
    google-genai 1.39 (below the floor in etclib.llm.sdk); with an older SDK there is nothing to
    call and the transport is released when the client is collected."""
    close = getattr(getattr(client, "aio", None), "aclose", None)
    if close is not None:
        await close()


#: What to check, by provider and fault kind (no value of any setting, only names).
HINTS: dict[tuple[str, str], str] = {
    ("openai", "auth"): "Check OPENAI_API_KEY (and OPENAI_BASE_URL).",
    ("gemini", "auth"): "Check GEMINI_API_KEY (or GOOGLE_API_KEY) and its permissions.",
    ("openai", "connect"): "Check OPENAI_BASE_URL and that the server is running.",
    ("gemini", "connect"): "Check ETC_GEMINI_BASE_URL.",
    ("openai", "not_found"): "Check the model name against the server's model list.",
    ("gemini", "not_found"): "Check the model name.",
    ("openai", "bad_request"): "Check the request settings and the model name.",
    ("gemini", "bad_request"): "Check the request settings and the model name.",
    ("openai", "rate_limit"): "Wait and try again, or send fewer requests at a time.",
    ("gemini", "rate_limit"): "Wait and try again, or send fewer requests at a time.",
}


#: Where to check a used-up quota, by provider: (what ran out, in words; the pages to check).
QUOTA_PAGES: dict[str, tuple[str, str]] = {
    "openai": (
        "the account's billing quota (no credit left)",
        "https://platform.openai.com/settings/organization/billing/overview and "
        "https://platform.openai.com/usage",
    ),
    "gemini": (
        "the daily request quota",
        "https://aistudio.google.com/usage (limits: https://ai.google.dev/gemini-api/docs/rate-limits)",
    ),
}


def quota_error(fault: Fault, *, provider: str, who: str, resume: str = "") -> QuotaExhaustedError:
    """The error for a used-up quota (``fault.kind == "quota"``): which provider, which quota
    (``fault.what``: OpenAI's ``insufficient_quota`` or a Gemini ``quotaId``), where to check
    it, and ``resume`` (what running again does), logged with its detail."""
    words, where = QUOTA_PAGES.get(
        provider, ("a quota of the model service", "the provider's usage and billing pages")
    )
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

    ``who`` names the caller in our words (``"The openai backend (model 'gpt-4.1')"``). The
    message is ``who``, the fault's public description, the attempts and a hint; the redacted
    provider text is the error's ``detail``. A refused setting becomes
    :class:`~etclib.errors.UnsupportedSettingError`, an empty answer
    :class:`~etclib.errors.EmptyAnswerError`, anything else ``cls``.
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
        hint = HINTS.get((provider, fault.kind), "")
        public = f"{who}: {fault.public}{tries}." + (f" {hint}" if hint else "")
        err = cls(public, detail=fault.detail, kind=fault.kind, status=fault.status)
    log.warning("%s [ref %s]: %s", who, err.ref, fault.detail)
    return err
