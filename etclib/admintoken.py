"""The admin token (``ETC_ADMIN_TOKEN``): its minimum strength, the check, and rate limiting.

One token gates the leaderboard's moderation and the judge-versus-human study's admin actions.

- A token shorter than :data:`MIN_CHARS` characters is refused wherever it is read
  (:func:`configured_token` raises :class:`~etclib.errors.ConfigError`); the CLI and the site
  call :func:`check_configured` when they start, so a weak token stops them with a message.
- :func:`verify` compares in constant time (``hmac.compare_digest``). Wrong tokens are counted
  per session: after :data:`MAX_FAILURES` wrong tokens within :data:`WINDOW_SECONDS`, that
  session's attempts are refused without being checked (even the right token) until the window
  has passed. Every wrong token and every refused attempt is logged (logger
  ``etclib.admintoken``) with the session and the action, never the token typed.
- The session is the caller's: the site wraps an admin action in ``with session(key):`` (one
  key per browser session); the CLI runs without one (no limit: whoever runs it can read the
  files anyway), and its failures are logged all the same.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator

from . import config
from .errors import AccessDenied, ConfigError

MIN_CHARS = 24
MAX_FAILURES = 5
WINDOW_SECONDS = 600.0

log = logging.getLogger("etclib.admintoken")

_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar("admin_session", default=None)
_FAILURES: dict[str, deque[float]] = {}
_LOCK = threading.Lock()


class AdminDisabled(AccessDenied):
    """Admin actions are off: ``ETC_ADMIN_TOKEN`` is not set."""


class WrongToken(AccessDenied):
    """The token given is not the admin token."""


class TooManyAttempts(AccessDenied):
    """This session gave too many wrong tokens recently; it must wait."""


def configured_token() -> str | None:
    """``ETC_ADMIN_TOKEN``, or None when unset; :class:`ConfigError` when it is too short."""
    token = config.setting("ETC_ADMIN_TOKEN")
    if token is None:
        return None
    if len(token.strip()) < MIN_CHARS:
        raise ConfigError(
            f"ETC_ADMIN_TOKEN is shorter than {MIN_CHARS} characters, so it is refused. Set "
            "a long random one (environment or .streamlit/secrets.toml), e.g. the output of "
            '`python -c "import secrets; print(secrets.token_urlsafe(32))"`, or unset it to '
            "switch admin actions off."
        )
    return token


def check_configured() -> None:
    """At start-up: raise :class:`ConfigError` when ``ETC_ADMIN_TOKEN`` is set but too short."""
    configured_token()


@contextlib.contextmanager
def session(key: str | None) -> Iterator[None]:
    """Count the admin attempts made inside the block against session ``key``."""
    reset = _SESSION.set(key)
    try:
        yield
    finally:
        _SESSION.reset(reset)


def _who(key: str | None) -> str:
    if key is None:
        return "no session (command line)"
    return "session " + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def _recent(key: str, at: float) -> deque[float]:
    times = _FAILURES.setdefault(key, deque())
    while times and at - times[0] > WINDOW_SECONDS:
        times.popleft()
    return times


def verify(token: str | None, action: str = "admin action") -> None:
    """Raise unless ``token`` is the admin token and this session may still try.

    Raises :class:`AdminDisabled`, :class:`TooManyAttempts` or :class:`WrongToken` (all
    :class:`~etclib.errors.AccessDenied`), or :class:`ConfigError` for a too-short token.
    """
    expected = configured_token()
    if not expected:
        raise AdminDisabled(
            "Admin actions are switched off: ETC_ADMIN_TOKEN is not set. Set it in the "
            "environment or in .streamlit/secrets.toml, then give that token."
        )
    key = _SESSION.get()
    at = time.monotonic()
    if key is not None:
        with _LOCK:
            times = _recent(key, at)
            if len(times) >= MAX_FAILURES:
                wait = int(WINDOW_SECONDS - (at - times[0])) + 1
                log.warning(
                    "admin attempt refused (%s, %s): %d wrong tokens in the last %d s",
                    action,
                    _who(key),
                    len(times),
                    int(WINDOW_SECONDS),
                )
                raise TooManyAttempts(
                    f"Too many wrong admin tokens from this session ({len(times)} in "
                    f"{int(WINDOW_SECONDS // 60)} minutes); try again in {wait} s."
                )
    if token and hmac.compare_digest(str(token).encode("utf-8"), expected.encode("utf-8")):
        if key is not None:
            with _LOCK:
                _FAILURES.pop(key, None)
        return
    if key is not None:
        with _LOCK:
            _recent(key, at).append(at)
    log.warning("wrong admin token (%s, %s)", action, _who(key))
    raise WrongToken("Wrong admin token: give the value of ETC_ADMIN_TOKEN.")
