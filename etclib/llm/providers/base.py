"""What an LLM provider is: a small core every provider writes (:class:`ProviderSpec`: its facts
and its codec), and the capabilities only some have, each a small protocol a provider opts into
by subclassing it. Consumers ask ``isinstance(spec, Batch)``, never a provider's name. Spec
modules import no SDK at import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Protocol, runtime_checkable

from etclib.core.config import setting
from etclib.core.errors import ConfigError, DependencyError
from etclib.llm.chat import Reply
from etclib.llm.models import Decoding, ModelInfo

#: Default per-request timeout in seconds.
DEFAULT_TIMEOUT = 60.0


def http_timeout(timeout: float, connect_timeout: float | None = None) -> Any:
    """``timeout`` seconds for each read, ``connect_timeout`` (default the same) to connect:
    an ``httpx.Timeout`` when they differ (the openai and anthropic SDKs take either)."""
    if connect_timeout is None:
        return timeout
    import httpx

    return httpx.Timeout(float(timeout), connect=float(connect_timeout))


class ProviderSpec:
    """One provider's facts and codec; subclasses set the facts and write the codec."""

    #: registry name (``openai``), used in options, signatures and the CLI
    name: ClassVar[str] = ""
    #: how people call it (``OpenAI``)
    label: ClassVar[str] = ""
    #: the backend's one-line description (the site's model picker)
    description: ClassVar[str] = ""
    #: the pip package of its SDK
    package: ClassVar[str] = ""
    #: (module, client class, async client class) that :meth:`client` builds, or None
    sdk_classes: ClassVar[tuple[str, str, str] | None] = None
    #: the lowest version of that SDK etclib works with, and what needs it (:mod:`etclib.llm.sdk`)
    sdk_floor: ClassVar[tuple[str, str] | None] = None
    #: settings that may hold the key, first set wins; all of them are secrets
    key_settings: ClassVar[tuple[str, ...]] = ()
    #: other settings whose values are secrets
    extra_secrets: ClassVar[tuple[str, ...]] = ()
    #: the setting that overrides the endpoint, and the endpoint without it
    base_url_setting: ClassVar[str] = ""
    default_endpoint: ClassVar[str] = ""
    #: the judge's default model; the backend's default model and the setting that changes it
    judge_model: ClassVar[str] = ""
    backend_model: ClassVar[str] = ""
    model_setting: ClassVar[str] = ""
    #: the backend's default token limit (None: the model's own)
    backend_max_tokens: ClassVar[int | None] = 512
    #: the token-limit field of a model not in :attr:`models`, and its other fields
    token_param: ClassVar[str] = "max_tokens"
    unknown_model: ClassVar[dict[str, Any]] = {}
    #: capability and price rows (:class:`~etclib.llm.models.ModelInfo`)
    models: ClassVar[tuple[ModelInfo, ...]] = ()
    #: what to check, by fault kind (names of settings only, never values)
    hints: ClassVar[dict[str, str]] = {}
    #: documented requests per day, by (model prefix, key tier), per project and model (the
    #: judge's pre-flight estimate, :mod:`etclib.judge.pricing`), and where they were read
    #: (page, date); empty where the provider limits per minute only
    daily_requests: ClassVar[dict[tuple[str, str], int]] = {}
    daily_limits_source: ClassVar[tuple[str, str]] = ("", "")
    #: what to set, for a missing key (ConfigError text) and for the site's model picker
    key_help: ClassVar[str] = ""
    availability_help: ClassVar[str] = ""

    # -- settings ---------------------------------------------------------------------------
    @property
    def secret_settings(self) -> tuple[str, ...]:
        """Every setting whose value is a secret (redacted from logs and errors)."""
        return (*self.key_settings, *self.extra_secrets)

    def api_key(self) -> str | None:
        return next((value for name in self.key_settings if (value := setting(name))), None)

    def base_url(self) -> str | None:
        return setting(self.base_url_setting) if self.base_url_setting else None

    def configured(self) -> bool:
        return bool(self.api_key())

    def endpoint(self, client: Any = None) -> str:
        """Where requests go (``client``'s when it says), for messages."""
        url = getattr(client, "base_url", None)
        return str(url) if url else self.base_url() or self.default_endpoint

    def require_key(self, api_key: str | None) -> str:
        key = api_key or self.api_key()
        if not key:
            raise ConfigError(self.key_help)
        return key

    def sdk(self, module: str) -> ModuleType:
        """The SDK's ``module``; DependencyError naming the package when it is missing."""
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            raise DependencyError(
                f"The {self.label} provider needs the {self.package!r} package: "
                f"pip install {self.package}"
            ) from exc

    # -- codec ------------------------------------------------------------------------------
    def client(
        self,
        *,
        async_: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        base_url: str | None = None,
        connect_timeout: float | None = None,
    ) -> Any:
        """An SDK client with its own retries off (callers own retry policy), built from
        :attr:`sdk_classes`; a provider whose SDK takes other arguments overrides this."""
        if self.sdk_classes is None:
            raise NotImplementedError
        module, sync_name, async_name = self.sdk_classes
        key = self.require_key(api_key)
        cls = getattr(self.sdk(module), async_name if async_ else sync_name)
        return cls(
            api_key=key,
            base_url=base_url or self.base_url() or None,
            timeout=http_timeout(timeout, connect_timeout),
            max_retries=0,
        )

    async def aclose(self, client: Any) -> None:
        await client.close()

    def request(
        self,
        model: str,
        messages: list[dict[str, str]],
        decoding: Decoding,
        *,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """A chat request as a plain JSON-able dict (hashed into the judge's cache key)."""
        raise NotImplementedError

    def token_limit(self, req: dict[str, Any]) -> int | None:
        return req.get(self.token_param)

    def with_token_limit(self, req: dict[str, Any], limit: int) -> dict[str, Any]:
        return {**req, self.token_param: limit}

    def send(self, client: Any, req: dict[str, Any]) -> Reply:
        """One synchronous call; EmptyAnswerError for no text."""
        raise NotImplementedError

    async def asend(self, client: Any, req: dict[str, Any]) -> Reply:
        """One call on an async client; EmptyAnswerError for no text."""
        raise NotImplementedError

    def open_stream(self, client: Any, req: dict[str, Any]) -> Iterable[Any]:
        raise NotImplementedError

    def chunk_text(self, chunk: Any) -> str:
        raise NotImplementedError

    def stream_end(self, chunks: list[Any]) -> tuple[Reply, str | None]:
        """From a stream's chunks: their usage as a Reply, and the empty-answer reason if it
        had no text (None: ``empty``)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<provider {self.name}>"


# -- capabilities ----------------------------------------------------------------------------


@runtime_checkable
class JSONAnswers(Protocol):
    """Answers in a JSON Schema, as the judge asks for them; without it the judge's prompt
    alone asks for JSON."""

    def judge_format(self, model: str) -> str:
        """How JSON answers are asked of ``model`` (checked when the judge starts)."""
        return "json_schema"

    def json_request(
        self, req: dict[str, Any], kind: str, schema: dict[str, Any], fmt: str
    ) -> dict[str, Any]:
        """``req`` asking for a JSON answer of ``schema`` (named ``kind``) in format ``fmt``."""
        ...


@runtime_checkable
class PromptCache(Protocol):
    """A prompt cache that a request asks for (Claude's ``cache_control``); the judge marks
    its long fixed prompt with it. Providers that cache on their own need nothing."""

    def cache_prompt(self, req: dict[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class ServiceTiers(Protocol):
    """Service tiers (OpenAI's ``flex``) for the judge's online calls."""

    def online_fields(self, model: str, service_tier: str) -> dict[str, Any]:
        """Fields added to each online call (not to the request hashed into the judge's cache
        key: they change the price and the wait, not the answer); ConfigError for a tier the
        model does not take."""
        ...


@runtime_checkable
class Quotas(Protocol):
    """Used-up quotas told apart from rate limits (no wait within a run cures them)."""

    #: a used-up quota: (what ran out, in words; the pages to check it)
    quota_pages: ClassVar[tuple[str, str]]

    def quota(self, exc: BaseException, body: Any, status: int) -> str | None:
        """The used-up quota an error names, else None."""
        ...


@dataclass(frozen=True)
class BatchState:
    """One read of a batch job: the provider's word for its ``state``, whether it is ``done``
    (it will not change again), its counts where the provider reports them, and ``error``:
    why the whole job failed or gave no results ('' otherwise)."""

    state: str
    done: bool
    total: int = 0
    answered: int = 0
    failed: int = 0
    error: str = ""


@dataclass(frozen=True)
class BatchAnswer:
    """One request's outcome in a finished batch: its ``key`` (the custom id it was sent
    with), the ``reply`` (None when it failed) or the ``error`` (etclib's words, short)."""

    key: str
    reply: Reply | None = None
    error: str = ""


@runtime_checkable
class Batch(Protocol):
    """A batch interface (the judge's ``--batch``); its models' rows carry a ``batch_price``."""

    #: where the models' ``batch_price`` was read (page, date)
    batch_prices_source: ClassVar[tuple[str, str]]
    #: the most requests, and bytes of requests, one job takes (more are sent as several)
    batch_max_requests: ClassVar[int]
    batch_max_bytes: ClassVar[int]

    def batch_submit(
        self, client: Any, model: str, requests: list[tuple[str, dict[str, Any]]], name: str
    ) -> str:
        """Send ``requests`` (custom id, request as ``request`` builds it) as one job named
        ``name`` on a synchronous ``client``; the job's id."""
        ...

    def batch_read(self, client: Any, batch_id: str) -> BatchState:
        """One read of the job's state."""
        ...

    def batch_answers(self, client: Any, batch_id: str) -> list[BatchAnswer]:
        """Every request's outcome in a finished job (those it has; expired or cancelled jobs
        may hold some or none)."""
        ...


@runtime_checkable
class ModelListing(Protocol):
    """Servers of the provider say which models they serve (the chat probes a self-hosted
    server that the provider's endpoint setting points at)."""

    def served_models(
        self, base_url: str, api_key: str | None = None, timeout: float = 2.0
    ) -> list[dict[str, Any]]:
        """The models the server at ``base_url`` serves, as it describes them (one attempt,
        ``timeout`` seconds)."""
        ...
