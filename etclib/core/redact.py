"""Remove secrets from text before it is logged or shown to an operator.

:func:`redact` is the one place that decides what a secret looks like: every configured secret
value (:data:`SECRET_SETTINGS`, the providers' key settings, any ``secrets`` passed) and anything
shaped like a credential (``Bearer`` tokens, ``sk-``/``AIza``/``hf_``/``ghp_`` tokens, ``key=``
parameters). Provider error text passes through here before it is stored as an error's private
``detail`` or logged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from etclib.core.config import setting

MASK = "[REDACTED]"

#: Settings whose values are secrets (values shorter than :data:`MIN_SECRET` are not secrets:
#: ``OPENAI_API_KEY=EMPTY`` for a server that checks none).
SECRET_SETTINGS: tuple[str, ...] = (
    "ETC_FINETUNED_API_KEY",
    "ETC_ADMIN_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
)
MIN_SECRET = 6
#: Secret settings added at run time: the LLM providers' keys (see :func:`add_secret_settings`).
_ADDED: list[str] = []

_PATTERNS = [
    # the token after "Bearer" first, then whatever follows a credential header's name
    re.compile(r"(?i)\bbearer\s+[^\s,;'\"}]+"),
    re.compile(r"(?i)\b(authorization|x-goog-api-key|api-key|x-api-key)(\s*[:=]\s*)[^\s,;'\"}]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{10,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"(?i)([?&\s\"'](?:api_?key|key|token|access_token|secret)=)[^&\s\"']+"),
]


def add_secret_settings(names: Iterable[str]) -> None:
    """Treat the values of settings ``names`` as secrets too (the provider registry, which sits
    above this module, calls it with each provider's key settings)."""
    _ADDED.extend(n for n in names if n not in SECRET_SETTINGS and n not in _ADDED)


def secret_settings() -> tuple[str, ...]:
    """Every setting whose value is redacted: :data:`SECRET_SETTINGS` and those added."""
    return (*SECRET_SETTINGS, *_ADDED)


def configured_secrets() -> list[str]:
    """The values of :func:`secret_settings` that are set (and long enough to be secrets)."""
    return [v for name in secret_settings() if (v := setting(name)) and len(v) >= MIN_SECRET]


def redact(text: object, secrets: Iterable[str] = ()) -> str:
    """``str(text)`` with every configured secret, every given secret and every
    credential-shaped span replaced by ``[REDACTED]``."""
    out = str(text)
    values = {s for s in [*configured_secrets(), *secrets] if s and len(s) >= MIN_SECRET}
    for value in sorted(values, key=len, reverse=True):  # a longer secret may contain a shorter
        out = out.replace(value, MASK)
    for pattern in _PATTERNS:
        if pattern.groups:
            out = pattern.sub(lambda m: "".join(m.groups()) + MASK, out)
        else:
            out = pattern.sub(MASK, out)
    return out
