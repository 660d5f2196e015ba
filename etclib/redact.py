"""Remove secrets from text before it is logged or shown to an operator.

:func:`redact` is the one place that decides what a secret looks like. It removes

- every configured secret value: the settings named in :data:`SECRET_SETTINGS` (API keys, the
  admin token, the Hub token), read with :func:`etclib.config.setting`, plus any ``secrets``
  the caller passes;
- anything shaped like a credential, whatever its value: ``Bearer <token>`` and
  ``Authorization: ...`` headers, OpenAI-style keys (``sk-...``), Google API keys
  (``AIza...``), Hugging Face tokens (``hf_...``), GitHub tokens (``ghp_...``), and the value of
  a ``key=`` / ``api_key=`` / ``token=`` / ``access_token=`` parameter in a URL or a log line.

Each removed span becomes ``[REDACTED]``. Provider error text passes through here before it is
stored as an error's private ``detail`` (:class:`etclib.errors.ServiceError`) or written to a
log; the public message of such an error is written by etclib and holds no provider text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .config import setting

MASK = "[REDACTED]"

#: Settings whose values are secrets (values shorter than :data:`MIN_SECRET` are not secrets:
#: ``OPENAI_API_KEY=EMPTY`` for a server that checks none).
SECRET_SETTINGS: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "ETC_FINETUNED_API_KEY",
    "ETC_ADMIN_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
)
MIN_SECRET = 6

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


def configured_secrets() -> list[str]:
    """The values of :data:`SECRET_SETTINGS` that are set (and long enough to be secrets)."""
    out = []
    for name in SECRET_SETTINGS:
        value = setting(name)
        if value and len(value) >= MIN_SECRET:
            out.append(value)
    return out


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
