"""``openai``: any OpenAI-compatible Chat Completions server, at temperature 0.

GPT-4.1 through the OpenAI API (the paper's baseline), or a vLLM server that serves the
fine-tuned adapter under its own model name (docs/models.md). Streaming for the chat page.

Settings (environment or ``.streamlit/secrets.toml``):

- ``OPENAI_API_KEY``: the key; a self-hosted server that checks none needs ``EMPTY``.
- ``OPENAI_BASE_URL``: the server's ``/v1`` URL (default: api.openai.com).
- ``ETC_OPENAI_MODEL``: the model name (default ``gpt-4.1``); the ``model`` option wins.

Options: ``model``, ``base_url`` and ``api_key`` (another server than ``OPENAI_BASE_URL``, e.g.
the fine-tuned model's vLLM server for the chat page), ``max_new_tokens`` (sent as ``max_tokens``, default 512), ``batch_size``
(requests in flight, default 8), ``retries`` (on 429, 5xx, timeouts; default 4),
``retry_wait`` (seconds before the first retry, doubled each time; default 1), ``timeout``.
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

DEFAULT_MODEL = "gpt-4.1"


def _transient(exc: BaseException) -> bool:
    import openai

    return isinstance(
        exc,
        openai.RateLimitError
        | openai.InternalServerError
        | openai.APIConnectionError
        | openai.APIResponseValidationError,
    ) or (
        isinstance(exc, openai.APIStatusError) and exc.status_code in (408, 409, 429, 502, 503, 504)
    )


class OpenAIBackend(Backend):
    """Chat Completions at temperature 0 against OpenAI or an OpenAI-compatible server."""

    name = "openai"
    description = "OpenAI or OpenAI-compatible server (vLLM), temperature 0, streaming."
    uses_prompt = True

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

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        model = setting("ETC_OPENAI_MODEL") or DEFAULT_MODEL
        if not llm.configured("openai"):
            return False, (
                "set OPENAI_API_KEY (EMPTY for a vLLM server) and, for a server other than "
                "OpenAI's, OPENAI_BASE_URL and ETC_OPENAI_MODEL"
            )
        return True, f"ready ({model} at {llm.endpoint('openai')})"

    def _describe(self, exc: BaseException) -> str:
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}" if status else exc.__class__.__name__
        hint = {
            401: " Check OPENAI_API_KEY.",
            403: " Check the key's permissions.",
            404: " Check ETC_OPENAI_MODEL / --model against the server's model list.",
        }.get(status or 0, "")
        return f"{self.endpoint}: model {self.model!r} failed ({what}: {exc}).{hint}"

    def _create(self, messages: list[dict[str, str]], stream: bool = False) -> Any:
        return with_retries(
            lambda: self.client.chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=0,
                max_tokens=self.max_new_tokens,
                stream=stream,
            ),
            transient=_transient,
            describe=self._describe,
            retries=self.retries,
            wait_s=self.retry_wait,
        )

    def complete(self, messages: list[dict[str, str]]) -> str:
        """One answer for one conversation."""
        resp = self._create(messages)
        if not resp.choices:
            raise BackendError(f"{self.endpoint}: model {self.model!r} returned no choice.")
        return clean(resp.choices[0].message.content or "")

    def predict(
        self,
        items: Sequence[Item],
        progress: Progress | None = None,
        shots: Shots | None = None,
    ) -> list[str]:
        return concurrent_map(self.complete, messages_for(items, shots), self.batch_size, progress)

    def stream(self, item: Item, shots: Sequence[Item] = ()) -> Iterator[str]:
        """Yield the answer's text deltas as the server sends them."""
        chunks = self._create(build_messages(item, list(shots)), stream=True)
        yield from relay_stream(
            chunks,
            lambda c: (c.choices[0].delta.content or "") if c.choices else "",
            self._describe,
        )

    def signature(self) -> dict[str, Any]:
        sig = super().signature()
        sig.update(model=self.model, temperature=0, max_tokens=self.max_new_tokens)
        return sig


BACKEND = OpenAIBackend
