"""``gemini``: Google's Gemini through google-genai, at temperature 0, with streaming.

The prompt's system message becomes the ``system_instruction``; the user message the content.

Settings (environment or ``.streamlit/secrets.toml``):

- ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``): the key.
- ``ETC_GEMINI_BASE_URL``: another endpoint (a proxy; the loopback fake server in tests).
- ``ETC_GEMINI_MODEL``: the model name (default ``gemini-2.5-flash``); the ``model`` option wins.

Options: ``model``, ``max_new_tokens`` (``max_output_tokens``; default: the model's own limit,
because thinking models spend output tokens on thoughts), ``batch_size`` (requests in flight,
default 8), ``retries`` (on 429, 5xx, timeouts; default 4), ``retry_wait``, ``timeout``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .. import llm
from ..config import setting
from ..errors import BackendError, ConfigError
from ..task import Item, build_messages
from ._api import concurrent_map, relay_stream, with_retries
from .base import Backend, Progress, Shots, clean, messages_for, positive_int, retry_count

DEFAULT_MODEL = "gemini-2.5-flash"


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection and timeout errors of whichever HTTP library google-genai runs on."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module in ("httpx", "httpx2", "aiohttp"):
        try:
            lib = __import__(module)
        except ImportError:
            continue
        for name in ("TransportError", "ClientConnectionError"):
            cls = getattr(lib, name, None)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                found.append(cls)
    return tuple(found)


def _transient(exc: BaseException) -> bool:
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        return exc.code in (408, 429) or (exc.code or 0) >= 500
    return isinstance(exc, _transport_errors())


def split_messages(messages: list[dict[str, str]]) -> tuple[str | None, list[dict[str, Any]]]:
    """Chat messages as Gemini wants them: ``(system_instruction, contents)``."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
    contents = [
        {"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": m["content"]}]}
        for m in messages
        if m["role"] != "system"
    ]
    return system, contents


class GeminiBackend(Backend):
    """Gemini ``generateContent`` at temperature 0."""

    name = "gemini"
    description = "Google Gemini (google-genai), temperature 0, streaming."
    uses_prompt = True

    def __init__(
        self,
        model: str | None = None,
        max_new_tokens: int | None = None,
        batch_size: int | None = None,
        retries: int = 4,
        retry_wait: float = 1.0,
        timeout: float = llm.DEFAULT_TIMEOUT,
    ) -> None:
        """Build the client now; ``BackendError`` if no key is configured."""
        self.model = model or setting("ETC_GEMINI_MODEL") or DEFAULT_MODEL
        self.max_new_tokens = (
            None
            if max_new_tokens is None
            else positive_int(max_new_tokens, "max_new_tokens", self.name)
        )
        self.batch_size = positive_int(
            8 if batch_size is None else batch_size, "batch_size", self.name
        )
        self.retries = retry_count(retries, self.name)
        self.retry_wait = float(retry_wait)
        self.endpoint = llm.endpoint("gemini")
        try:
            self.client = llm.gemini_client(timeout=float(timeout))
        except ConfigError as exc:
            raise BackendError(f"The gemini backend is not configured: {exc}") from None

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        if not llm.configured("gemini"):
            return False, "set GEMINI_API_KEY (or GOOGLE_API_KEY), and optionally ETC_GEMINI_MODEL"
        model = setting("ETC_GEMINI_MODEL") or DEFAULT_MODEL
        return True, f"ready ({model} at {llm.endpoint('gemini')})"

    def _describe(self, exc: BaseException) -> str:
        code = getattr(exc, "code", None)
        what = f"HTTP {code}" if isinstance(code, int) else exc.__class__.__name__
        hint = {
            400: " Check the request and model name.",
            401: " Check GEMINI_API_KEY.",
            403: " Check GEMINI_API_KEY and its permissions.",
            404: " Check ETC_GEMINI_MODEL / --model.",
        }.get(code if isinstance(code, int) else 0, "")
        return f"{self.endpoint}: model {self.model!r} failed ({what}: {exc}).{hint}"

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        from google.genai import types

        system, contents = split_messages(messages)
        cfg = types.GenerateContentConfig(
            system_instruction=system, temperature=0, max_output_tokens=self.max_new_tokens
        )
        return {"model": self.model, "contents": contents, "config": cfg}

    def complete(self, messages: list[dict[str, str]]) -> str:
        """One answer for one conversation."""
        request = self._request(messages)
        resp = with_retries(
            lambda: self.client.models.generate_content(**request),
            transient=_transient,
            describe=self._describe,
            retries=self.retries,
            wait_s=self.retry_wait,
        )
        return clean(resp.text or "")

    def predict(
        self,
        items: Sequence[Item],
        progress: Progress | None = None,
        shots: Shots | None = None,
    ) -> list[str]:
        return concurrent_map(self.complete, messages_for(items, shots), self.batch_size, progress)

    def stream(self, item: Item, shots: Sequence[Item] = ()) -> Iterator[str]:
        """Yield the answer's text as Gemini streams it."""
        request = self._request(build_messages(item, list(shots)))
        chunks = with_retries(
            lambda: self.client.models.generate_content_stream(**request),
            transient=_transient,
            describe=self._describe,
            retries=self.retries,
            wait_s=self.retry_wait,
        )
        yield from relay_stream(chunks, lambda c: c.text or "", self._describe)

    def signature(self) -> dict[str, Any]:
        sig = super().signature()
        sig.update(model=self.model, temperature=0, max_output_tokens=self.max_new_tokens)
        return sig


BACKEND = GeminiBackend
