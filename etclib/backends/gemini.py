"""``gemini``: Google's Gemini through google-genai, at temperature 0, with streaming.

The prompt's system message becomes the ``system_instruction``; the user message the content.
Thinking is set explicitly (``thinking_config``), so answers and cost do not depend on a server
default: Gemini 2.5 Flash / Flash-Lite get a budget of 0 (no thinking; the model then spends
its output on the answer), 2.5 Pro the smallest budget it accepts (128), Gemini 3 thinking
level ``low`` and temperature 1.0 (Google's guidance for Gemini 3); see
:mod:`etclib.llm.models`. The signature names the thinking setting sent.

Settings (environment or ``.streamlit/secrets.toml``):

- ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``): the key.
- ``ETC_GEMINI_BASE_URL``: another endpoint (a proxy; the loopback fake server in tests).
- ``ETC_GEMINI_MODEL``: the model name (default ``gemini-2.5-flash``); the ``model`` option wins.

Options: ``model``, ``max_new_tokens`` (``max_output_tokens``; default: the model's own limit,
because thinking models spend output tokens on thoughts), ``thinking`` (a budget in tokens for
Gemini 2.5, a level for Gemini 3, ``default`` for the server's default; default: the table's),
``batch_size`` (requests in flight, default 8), ``retries`` (on 429, 5xx, timeouts; the delay
Gemini suggests in a 429's RetryInfo is honoured; default 4), ``retry_wait``, ``timeout``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import llm
from ..config import setting
from ..errors import BackendError, ConfigError
from ..llm import chat
from ..llm.retry import RetryPolicy
from ._api import APIBackend
from .base import positive_int, retry_count

DEFAULT_MODEL = "gemini-2.5-flash"


class GeminiBackend(APIBackend):
    """Gemini ``generateContent`` at temperature 0, thinking set explicitly."""

    name = "gemini"
    description = "Google Gemini (google-genai), temperature 0, streaming."
    provider = "gemini"

    def __init__(
        self,
        model: str | None = None,
        max_new_tokens: int | None = None,
        batch_size: int | None = None,
        retries: int = 4,
        retry_wait: float = 1.0,
        timeout: float = llm.DEFAULT_TIMEOUT,
        thinking: int | str | None = None,
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
        self.policy = RetryPolicy(attempts=self.retries + 1, backoff=self.retry_wait)
        self.decoding = llm.decoding(
            "gemini", self.model, temperature=0.0, thinking=thinking, where="thinking"
        )
        self.usage = chat.Usage()
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
        # the endpoint stays private: this text reaches the site's model picker
        return True, f"ready ({model})"

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        req = chat.gemini_request(
            self.model, messages, self.decoding, max_tokens=self.max_new_tokens
        )
        req["config"] = chat.gemini_config(req["config"])
        return req

    def _send(self, messages: list[dict[str, str]]) -> chat.Reply:
        return chat.gemini_reply(self.client.models.generate_content(**self._request(messages)))

    def _open_stream(self, messages: list[dict[str, str]]) -> Iterable[Any]:
        # a generator: the request goes out at first iteration, inside stream_with_retries
        return self.client.models.generate_content_stream(**self._request(messages))

    def _chunk_text(self, chunk: Any) -> str:
        return chat.gemini_text(chunk)

    def _stream_end(self, chunks: list[Any]) -> tuple[chat.Reply, str | None]:
        if not chunks:
            return chat.Reply(""), "no_candidate"
        last = chunks[-1]
        tokens_in, tokens_out = chat.gemini_tokens(last)
        reply = chat.Reply("", tokens_in, tokens_out, getattr(last, "model_version", None))
        return reply, chat.gemini_empty_reason(last)[0]


BACKEND = GeminiBackend
