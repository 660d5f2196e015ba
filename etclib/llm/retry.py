"""Error classification and retries for calls to LLM providers.

:func:`classify` turns any exception of a provider SDK (or its HTTP library) into a
:class:`Fault`. A server's ``x-should-retry`` overrides the kind's default, except for a used-up
quota, which no retry cures. :meth:`RetryPolicy.delay` is exponential back-off with full jitter,
or the server's longer suggestion up to ``retry_after_max``. docs/judge.md, "Faults".
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from etclib.core.errors import DependencyError, EmptyAnswerError, ServiceError
from etclib.core.redact import redact

T = TypeVar("T")

TRANSIENT = frozenset({"timeout", "connection", "rate_limit", "server", "malformed"})
_RATE_STATUS = {408, 409, 429}
#: statuses a provider may use for a used-up quota or credit (each spec's ``quota`` decides)
_QUOTA_STATUS = {400, 402, 429}

#: every fault kind, in etclib's public words; :data:`TRANSIENT` are the kinds worth a retry
_PUBLIC = {
    "timeout": "the model service did not answer in time",
    "connect": "cannot connect to the model service",
    "connection": "the connection to the model service dropped",
    "rate_limit": "the model service is limiting the request rate",
    "quota": "the account's quota at the model service is used up",
    "server": "the model service had an internal error",
    "malformed": "the model service sent an unreadable response",
    "auth": "the model service refused the key",
    "not_found": "the model service does not know this model",
    "unsupported": "the model refused a setting",
    "bad_request": "the model service refused the request",
    "empty": "the model returned an empty answer",
    "blocked": "the model declined to answer",
    "other": "the call to the model service failed",
    "sdk": "the installed provider SDK is too old for this request",
}


@dataclass(frozen=True)
class Fault:
    """One failed call, classified: its ``kind`` (a key of ``_PUBLIC``), HTTP ``status``, the
    redacted provider ``detail`` and the server's suggested ``retry_after`` in seconds."""

    kind: str
    status: int | None = None
    detail: str = ""
    retry_after: float | None = None
    #: the server's ``x-should-retry`` header (True / False), or None when it sent none
    should_retry: bool | None = None
    #: the refused setting (``unsupported``), the empty answer's reason, or the quota that
    #: ran out (``quota``: OpenAI's ``insufficient_quota``, a Gemini ``quotaId``)
    what: str | None = None

    @property
    def transient(self) -> bool:
        """Worth a retry: the server's ``x-should-retry`` when it sent one, else by kind."""
        if self.should_retry is not None and self.kind != "quota":
            return self.should_retry
        return self.kind in TRANSIENT

    @property
    def public(self) -> str:
        """etclib's own words for the fault, e.g. ``the model service refused the key (HTTP
        401)``; no provider text."""
        text = _PUBLIC[self.kind]
        if self.kind == "unsupported" and self.what:
            text = f"the model does not accept the setting {self.what!r}"
        if self.kind == "sdk" and self.what:
            text = f"{text}: {self.what}"
        if self.kind in ("empty", "blocked") and self.what:
            from etclib.llm.chat import REASON_TEXT

            text = f"the model returned no answer: {REASON_TEXT.get(self.what, self.what)}"
        if self.status is not None:
            text += f" (HTTP {self.status})"
        return text


# --- reading exceptions ----------------------------------------------------------------------


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen and len(out) < 8:
        out.append(cur)
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return out


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for e in _chain(exc) for cls in type(e).__mro__}


def _status(exc: BaseException) -> int | None:
    for e in _chain(exc):
        code = getattr(e, "status_code", None)
        if not isinstance(code, int):
            code = getattr(e, "code", None)
        if isinstance(code, int) and 100 <= code < 600:
            return code
    return None


def _body(exc: BaseException) -> Any:
    """The parsed error body: openai's ``body`` (the ``error`` object), google-genai's
    ``details`` (the whole JSON; a list of one is unwrapped)."""
    for attr in ("body", "details"):
        value = getattr(exc, attr, None)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, dict | list):
            return value
    return None


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*s\s*$")


def _seconds(value: Any) -> float | None:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        match = _DURATION.match(str(value)) if isinstance(value, str) else None
        if not match:
            return None
        seconds = float(match.group(1))
    return seconds if seconds >= 0 else None


def retry_after(exc: BaseException) -> float | None:
    """The server's suggested delay in seconds: ``retry-after-ms`` / ``Retry-After`` headers
    (seconds; an HTTP date is ignored), or Gemini's RetryInfo ``retryDelay`` in the body."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        try:
            ms = headers.get("retry-after-ms")
            if ms is not None and _seconds(ms) is not None:
                return _seconds(ms) / 1000  # type: ignore[operator]
            seconds = _seconds(headers.get("retry-after"))
            if seconds is not None:
                return seconds
        except AttributeError:
            pass
    body = _body(exc)
    if isinstance(body, dict):
        error = body.get("error", body)
        details = error.get("details") if isinstance(error, dict) else None
        for d in details if isinstance(details, list) else []:
            if isinstance(d, dict) and str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
                return _seconds(d.get("retryDelay"))
    return None


def quota_of(exc: BaseException, status: int | None = None) -> str | None:
    """The used-up quota an error names (OpenAI ``insufficient_quota``; a Gemini per-day
    ``quotaId``; whatever each registered provider's ``quota`` reads), or None for a rate limit
    that a wait cures (see the module docstring)."""
    from etclib.llm.providers import Quotas, specs

    body = _body(exc)
    status = status if status is not None else (_status(exc) or 0)
    for spec in specs(Quotas):
        quota = spec.quota(exc, body, status)
        if quota:
            return quota
    return None


def _refused_setting(exc: BaseException, body: Any) -> str | None:
    """The setting a 400 names as unsupported (OpenAI's ``unsupported_value`` /
    ``unsupported_parameter`` with ``param``), else None."""
    code = getattr(exc, "code", None)
    param = getattr(exc, "param", None)
    if isinstance(body, dict):
        code = body.get("code", code)
        param = body.get("param", param)
    if code in ("unsupported_value", "unsupported_parameter") and param:
        return str(param)
    message = str(getattr(exc, "message", "") or "")
    match = re.search(r"Unsupported (?:value|parameter): '([A-Za-z_]+)'", message)
    return match.group(1) if match else None


def should_retry(exc: BaseException) -> bool | None:
    """The server's ``x-should-retry`` header (``true`` / ``false``), or None."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = headers.get("x-should-retry") if headers is not None else None
    except AttributeError:
        return None
    if value is None:
        return None
    value = str(value).strip().lower()
    return True if value == "true" else False if value == "false" else None


def classify(exc: BaseException, *, where: str = "") -> Fault:
    """The :class:`Fault` for ``exc``; ``where`` (an endpoint) is prefixed to the detail; the
    server's ``x-should-retry`` is kept in :attr:`Fault.should_retry`."""
    import dataclasses

    fault = _classify(exc, where=where)
    hint = should_retry(exc)
    return fault if hint is None else dataclasses.replace(fault, should_retry=hint)


def _classify(exc: BaseException, *, where: str = "") -> Fault:
    detail = redact(f"{where + ': ' if where else ''}{exc.__class__.__name__}: {exc}")
    if isinstance(exc, EmptyAnswerError):
        return Fault(exc.kind, detail=exc.detail or detail, what=exc.reason)
    if isinstance(exc, ServiceError):
        return Fault(exc.kind, exc.status, exc.detail or detail)
    if isinstance(exc, DependencyError) and getattr(exc, "upgrade", None):
        return Fault("sdk", detail=str(exc), what=exc.upgrade)  # type: ignore[attr-defined]
    names = _names(exc)
    status = _status(exc)
    if isinstance(exc, asyncio.TimeoutError | TimeoutError) or names & {
        "APITimeoutError",
        "TimeoutException",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
    }:
        return Fault("timeout", detail=detail)
    if names & {"ConnectError", "ConnectTimeout", "ClientConnectorError"}:
        return Fault("connect", detail=detail)
    if status is not None:
        if status in (401, 403):
            return Fault("auth", status, detail)
        if status == 404:
            return Fault("not_found", status, detail)
        if status in _QUOTA_STATUS:
            quota = quota_of(exc, status)
            if quota:
                return Fault("quota", status, detail, what=quota)
        if status in _RATE_STATUS:
            return Fault("rate_limit", status, detail, retry_after(exc))
        if status >= 500:
            return Fault("server", status, detail, retry_after(exc))
        if status == 400:
            setting = _refused_setting(exc, _body(exc))
            if setting:
                return Fault("unsupported", status, detail, what=setting)
        return Fault("bad_request", status, detail)
    if names & {
        "APIConnectionError",
        "RemoteProtocolError",
        "ReadError",
        "WriteError",
        "NetworkError",
        "ProtocolError",
        "ConnectionError",
        "ServerDisconnectedError",
        "IncompleteRead",
        "TransportError",
    }:
        return Fault("connection", detail=detail)
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError) or names & {
        "APIResponseValidationError"
    }:
        return Fault("malformed", detail=detail)
    return Fault("other", detail=detail)


# --- retrying ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``attempts`` attempts; waits per :meth:`delay`."""

    attempts: int = 5
    backoff: float = 1.0
    backoff_max: float = 30.0
    retry_after_max: float = 120.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        cap = min(self.backoff_max, self.backoff * 2 ** (attempt - 1))
        delay = random.uniform(cap / 2, cap)
        if retry_after is not None and retry_after > delay:
            delay = min(retry_after, self.retry_after_max)
        return delay


class CallFailed(Exception):
    """Internal: a call failed for good; callers turn it into their public error."""

    def __init__(self, fault: Fault, attempts: int):
        super().__init__(fault.public)
        self.fault = fault
        self.attempts = attempts


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    where: str = "",
    on_retry: Callable[[Fault], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``call()``, retried on transient faults; raises :class:`CallFailed` when it gives up."""
    for attempt in range(1, policy.attempts + 1):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - every failure is classified
            fault = classify(exc, where=where)
            if not fault.transient or attempt == policy.attempts:
                raise CallFailed(fault, attempt) from exc
            if on_retry is not None:
                on_retry(fault)
            sleep(policy.delay(attempt, fault.retry_after))
    raise AssertionError("unreachable")  # pragma: no cover


def stream_with_retries(
    open_stream: Callable[[], Iterable[Any]],
    text_of: Callable[[Any], str],
    policy: RetryPolicy,
    *,
    where: str = "",
    on_retry: Callable[[Fault], None] | None = None,
    on_chunk: Callable[[Any], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """Yield the streamed answer's text (leading whitespace dropped); :class:`CallFailed`.

    A transient fault before the first text (whether ``open_stream()`` sends at once or at first
    iteration) is retried with a new request; after it, a failure is final (the consumer has
    shown part of an answer). ``on_chunk`` sees every chunk (usage counting).
    """
    attempt = 0
    while True:
        attempt += 1
        chunks: Iterable[Any] | None = None
        started = False
        try:
            chunks = open_stream()
            for chunk in chunks:
                if on_chunk is not None:
                    on_chunk(chunk)
                text = text_of(chunk)
                if not started:
                    text = text.lstrip()
                    started = bool(text)
                if text:
                    yield text
            return
        except GeneratorExit:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified
            fault = classify(exc, where=where)
            if started or not fault.transient or attempt >= policy.attempts:
                raise CallFailed(fault, attempt) from exc
            if on_retry is not None:
                on_retry(fault)
            sleep(policy.delay(attempt, fault.retry_after))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
