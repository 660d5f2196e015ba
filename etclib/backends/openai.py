"""``openai``: any OpenAI-compatible Chat Completions server, at temperature 0 where allowed.

GPT-4.1 through the OpenAI API (the paper's baseline, pinned to the snapshot the paper used,
:data:`etclib.llm.models.OPENAI_DEFAULT_MODEL`), or a vLLM server that serves the fine-tuned adapter under its own model
name (docs/models.md). Streaming for the chat page. What a model gets follows the capability
table (:mod:`etclib.llm.models`): GPT-5 and o-series models get no ``temperature`` (they take
only their default), ``max_completion_tokens`` and ``reasoning_effort``; others temperature 0
and ``max_tokens``. The model the server says it served (``resp.model``) is counted in
``usage.model_versions`` and reported by ``etclib predict`` as ``served_models``.

Settings (environment or ``.streamlit/secrets.toml``):

- ``OPENAI_API_KEY``: the key; a self-hosted server that checks none needs ``EMPTY``.
- ``OPENAI_BASE_URL``: the server's ``/v1`` URL (default: api.openai.com).
- ``ETC_OPENAI_MODEL``: the model name (default :data:`etclib.llm.models.OPENAI_DEFAULT_MODEL`);
  the ``model`` option wins.

Options: ``model``, ``base_url`` and ``api_key`` (another server than ``OPENAI_BASE_URL``, e.g.
the fine-tuned model's vLLM server for the chat page), ``max_new_tokens`` (the model's token
limit field, default 512), ``thinking`` (reasoning effort for reasoning models: the table's
default, ``default`` to send none), ``batch_size`` (requests in flight, default 8), ``retries``
(on 429, 5xx, timeouts, dropped connections; default 4), ``retry_wait`` (seconds before the
first retry, doubled each time, jittered; a longer Retry-After wins; default 1), ``timeout``
(seconds to wait for each read: for a streamed answer, the first token and every gap after it),
``connect_timeout`` (seconds to open the connection; default ``timeout``).

:func:`served_models` asks a server which models it serves (``GET /v1/models``, one attempt):
the chat page probes its model servers with it, and reads vLLM's extra fields (``root``,
``parent``: the adapter's path and its base) for the model card.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import llm
from ..config import setting
from ..errors import BackendError, ConfigError
from ..llm import chat
from ..llm.models import OPENAI_DEFAULT_MODEL
from ..llm.retry import RetryPolicy
from ._api import APIBackend
from .base import positive_int, retry_count

#: the default model (etclib.llm.models names it once)
DEFAULT_MODEL = OPENAI_DEFAULT_MODEL


class OpenAIBackend(APIBackend):
    """Chat Completions at temperature 0 (where allowed) against OpenAI or a compatible server."""

    name = "openai"
    description = "OpenAI or OpenAI-compatible server (vLLM), temperature 0, streaming."
    provider = "openai"

    def __init__(
        self,
        model: str | None = None,
        max_new_tokens: int | None = None,
        batch_size: int | None = None,
        retries: int = 4,
        retry_wait: float = 1.0,
        timeout: float = llm.DEFAULT_TIMEOUT,
        base_url: str | None = None,
        api_key: str | None = None,
        thinking: str | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        """Build the client now; ``BackendError`` if no key is configured."""
        self.model = model or setting("ETC_OPENAI_MODEL") or DEFAULT_MODEL
        self.max_new_tokens = positive_int(
            512 if max_new_tokens is None else max_new_tokens, "max_new_tokens", self.name
        )
        self.batch_size = positive_int(
            8 if batch_size is None else batch_size, "batch_size", self.name
        )
        self.retries = retry_count(retries, self.name)
        self.retry_wait = float(retry_wait)
        self.policy = RetryPolicy(attempts=self.retries + 1, backoff=self.retry_wait)
        self.decoding = llm.decoding(
            "openai", self.model, temperature=0.0, thinking=thinking, where="thinking"
        )
        self.usage = chat.Usage()
        if base_url is not None and not str(base_url).startswith(("http://", "https://")):
            raise ConfigError(
                f"Backend 'openai': option 'base_url' must be an http(s) URL, got {base_url!r}."
            )
        self.endpoint = base_url or llm.endpoint("openai")
        try:
            self.client = llm.openai_client(
                timeout=float(timeout), base_url=base_url, api_key=api_key
            )
        except ConfigError as exc:
            raise BackendError(f"The openai backend is not configured: {exc}") from None
        if connect_timeout is not None:
            import httpx

            self.client = self.client.with_options(
                timeout=httpx.Timeout(float(timeout), connect=float(connect_timeout))
            )

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        model = setting("ETC_OPENAI_MODEL") or DEFAULT_MODEL
        if not llm.configured("openai"):
            return False, (
                "set OPENAI_API_KEY (EMPTY for a vLLM server) and, for a server other than "
                "OpenAI's, OPENAI_BASE_URL and ETC_OPENAI_MODEL"
            )
        # the endpoint stays private: this text reaches the site's model picker
        return True, f"ready ({model})"

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        return chat.openai_request(
            self.model, messages, self.decoding, max_tokens=self.max_new_tokens
        )

    def _send(self, messages: list[dict[str, str]]) -> chat.Reply:
        return chat.openai_reply(self.client.chat.completions.create(**self._request(messages)))

    def _open_stream(self, messages: list[dict[str, str]]) -> Iterable[Any]:
        return self.client.chat.completions.create(
            **self._request(messages), stream=True, stream_options={"include_usage": True}
        )

    def _chunk_text(self, chunk: Any) -> str:
        return chat.openai_chunk_text(chunk)

    def _stream_end(self, chunks: list[Any]) -> tuple[chat.Reply, str | None]:
        usage = next((c.usage for c in reversed(chunks) if getattr(c, "usage", None)), None)
        finish = next((c.choices[0].finish_reason for c in reversed(chunks) if c.choices), None)
        reply = chat.Reply(
            "",
            input_tokens=(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            model_version=getattr(chunks[-1], "model", None) if chunks else None,
        )
        return reply, {"content_filter": "safety", "length": "output_limit"}.get(finish or "")


def served_models(
    base_url: str, api_key: str | None = None, timeout: float = 2.0
) -> list[dict[str, Any]]:
    """The models an OpenAI-compatible server at ``base_url`` serves (``GET {base_url}/models``),
    each as the server describes it (vLLM adds ``root``, ``parent`` and ``max_model_len``).

    One attempt, ``timeout`` seconds for the connection and for the answer; the SDK's exception
    (``openai.APIConnectionError``, ``APITimeoutError``, ``APIStatusError``) is raised as it is,
    for :func:`etclib.llm.classify`.
    """
    client = llm.openai_client(
        timeout=float(timeout), base_url=base_url, api_key=api_key or "EMPTY"
    )
    try:
        return [m.model_dump() for m in client.models.list().data]
    finally:
        client.close()


BACKEND = OpenAIBackend
