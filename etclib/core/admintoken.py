"""The admin token (``ETC_ADMIN_TOKEN``): its minimum strength, the check, and rate limiting.

One token gates the leaderboard's and the studies' admin actions; one shorter than
:data:`MIN_CHARS` is refused wherever it is read. :func:`verify` compares in constant time.
Inside ``with session(key, store):`` (the site) a session is refused unchecked after
:data:`MAX_FAILURES` wrong tokens within :data:`WINDOW_SECONDS`; the CLI runs without a session,
so without a limit. Every wrong or refused attempt is logged, never the token typed. See
docs/leaderboard.md, "Admin operations".
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
from typing import Protocol

from etclib.core import config
from etclib.core.errors import AccessDenied, ConfigError

MIN_CHARS = 24
MAX_FAILURES = 5
WINDOW_SECONDS = 600.0

log = logging.getLogger("etclib.core.admintoken")


class FailureStore(Protocol):
    """Where a session's wrong tokens are counted."""

    def failures(self, key: str, window_s: float) -> list[float]:
        """Ages in seconds (oldest first) of ``key``'s wrong tokens within ``window_s``."""
        ...

    def add(self, key: str) -> None:
        """Count one wrong token of ``key``."""
        ...

    def clear(self, key: str) -> None:
        """Forget ``key``'s wrong tokens (the right token was given)."""
        ...


class MemoryFailures:
    """Wrong tokens counted in this process (the default store)."""

    def __init__(self) -> None:
        self._times: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def failures(self, key: str, window_s: float) -> list[float]:
        at = time.monotonic()
        with self._lock:
            times = self._times.setdefault(key, deque())
            while times and at - times[0] > window_s:
                times.popleft()
            return [at - t for t in times]

    def add(self, key: str) -> None:
        with self._lock:
            self._times.setdefault(key, deque()).append(time.monotonic())

    def clear(self, key: str) -> None:
        with self._lock:
            self._times.pop(key, None)


_MEMORY = MemoryFailures()
_SESSION: contextvars.ContextVar[tuple[str, FailureStore] | None] = contextvars.ContextVar(
    "admin_session", default=None
)


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
def session(key: str | None, store: FailureStore | None = None) -> Iterator[None]:
    """Count the admin attempts made inside the block against session ``key``, in ``store``
    (default: this process's memory)."""
    reset = _SESSION.set(None if key is None else (key, store or _MEMORY))
    try:
        yield
    finally:
        _SESSION.reset(reset)


def _who(key: str | None) -> str:
    if key is None:
        return "no session (command line)"
    return "session " + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def verify(token: str | None, action: str = "admin action") -> None:
    """Raise unless ``token`` is the admin token and this session may still try (an
    :class:`~etclib.core.errors.AccessDenied`, or :class:`ConfigError` for a too-short token)."""
    expected = configured_token()
    if not expected:
        raise AdminDisabled(
            "Admin actions are switched off: ETC_ADMIN_TOKEN is not set. Set it in the "
            "environment or in .streamlit/secrets.toml, then give that token."
        )
    current = _SESSION.get()
    key = current[0] if current is not None else None
    if current is not None:
        ages = current[1].failures(current[0], WINDOW_SECONDS)
        if len(ages) >= MAX_FAILURES:
            wait = int(WINDOW_SECONDS - ages[0]) + 1
            log.warning(
                "admin attempt refused (%s, %s): %d wrong tokens in the last %d s",
                action,
                _who(key),
                len(ages),
                int(WINDOW_SECONDS),
            )
            raise TooManyAttempts(
                f"Too many wrong admin tokens from this visitor ({len(ages)} in "
                f"{int(WINDOW_SECONDS // 60)} minutes); try again in {wait} s."
            )
    if token and hmac.compare_digest(str(token).encode("utf-8"), expected.encode("utf-8")):
        if current is not None:
            current[1].clear(current[0])
        return
    if current is not None:
        current[1].add(current[0])
    log.warning("wrong admin token (%s, %s)", action, _who(key))
    raise WrongToken("Wrong admin token: give the value of ETC_ADMIN_TOKEN.")
