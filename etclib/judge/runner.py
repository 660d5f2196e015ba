"""Run the judge over many items: asyncio, bounded concurrency, retries, cache, usage counts.

:class:`Judge` answers two questions, each one request to the provider:

- ``await judge.decompose(text)`` -> list of units (an empty or blank text has no unit and
  costs no call);
- ``await judge.entail(unit, target)`` -> ``(label, reasoning)``.

Both are built on :meth:`Judge.ask`, which asks any structured question (messages, a schema kind
from :data:`~etclib.judge.providers.SCHEMAS`, a parser); the label judge
(:mod:`etclib.labeljudge`) asks its ``labels`` questions through it. Every request goes through
the same path: the in-run memo (identical requests within a run are asked once, including
requests still in flight), then the persistent :class:`AnswerCache`, then the provider. A call
holds one of ``concurrency`` slots only while it is on the wire; back-off sleeps release it.
Faults are handled like this:

- 429, 408, 5xx, timeouts (``timeout`` seconds per call), dropped connections, malformed
  bodies and answers that do not parse: retried with exponential back-off and full jitter
  (``backoff`` seconds doubled per attempt, capped at ``backoff_max``, or the server's
  ``Retry-After`` when it is longer), at most ``max_attempts`` attempts per request; then the
  request fails and every item that needs it gets an error (counted, never scored as
  "Not Supported");
- a missing key, 401/403 (bad key), 404 (unknown model), and, before any call has succeeded in
  the run, a refused connection or a 400 (wrong endpoint or unsupported request): stop the run
  at once with :class:`~etclib.errors.JudgeError`.

:func:`judge_items` scores whole submissions item by item, overlapping decompositions and
entailments so that the concurrency slots stay busy (:func:`gather_items` runs any per-item
coroutines that way, with a progress bar); :func:`run_sync` runs a coroutine from sync code, in
a worker thread when the current thread already runs an event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .. import progress
from ..config import setting
from ..errors import ConfigError, JudgeError
from . import parse, pricing, templates
from .cache import AnswerCache, request_key
from .providers import DEFAULT_MODELS, DEFAULT_PROVIDER, TEMPERATURE, Provider, make_provider

T = TypeVar("T")

DEFAULT_CONCURRENCY = 16
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_ATTEMPTS = 6
DEFAULT_BACKOFF = 1.0
DEFAULT_BACKOFF_MAX = 30.0

_RETRY_STATUS = {408, 409, 429}
_FATAL_STATUS = {401, 403, 404}


@dataclass
class JudgeSettings:
    """Everything that configures one judge run (see :meth:`resolve` for where each comes from)."""

    provider: str = DEFAULT_PROVIDER
    model: str = DEFAULT_MODELS[DEFAULT_PROVIDER]
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff: float = DEFAULT_BACKOFF
    backoff_max: float = DEFAULT_BACKOFF_MAX

    @classmethod
    def resolve(cls, get: Callable[[str], Any] | None = None) -> JudgeSettings:
        """Settings from options (``get(name)``, e.g. ``Context.get``), else env, else defaults.

        Options / environment: ``judge_provider`` / ``ETC_JUDGE_PROVIDER``, ``judge_model`` /
        ``ETC_JUDGE_MODEL``, ``concurrency`` / ``ETC_JUDGE_CONCURRENCY``, ``judge_timeout`` /
        ``ETC_JUDGE_TIMEOUT``, ``judge_max_attempts`` / ``ETC_JUDGE_MAX_ATTEMPTS``,
        ``judge_backoff`` / ``ETC_JUDGE_BACKOFF``.
        """
        get = get or (lambda name: None)

        def pick(option: str, env: str) -> Any:
            value = get(option)
            return value if value not in (None, "") else setting(env)

        provider = str(pick("judge_provider", "ETC_JUDGE_PROVIDER") or DEFAULT_PROVIDER)
        if provider not in DEFAULT_MODELS:
            raise JudgeError(
                f"Unknown judge provider {provider!r}. Available: {', '.join(DEFAULT_MODELS)}."
            )
        model = str(pick("judge_model", "ETC_JUDGE_MODEL") or DEFAULT_MODELS[provider])

        def number(option: str, env: str, default: float, kind: type, low: float) -> Any:
            raw = pick(option, env)
            if raw in (None, ""):
                return default
            try:
                value = kind(raw)
            except (TypeError, ValueError):
                raise ConfigError(f"{option} (or {env}) must be a number, not {raw!r}.") from None
            if value < low:
                raise ConfigError(f"{option} (or {env}) must be at least {low}, not {raw!r}.")
            return value

        return cls(
            provider=provider,
            model=model,
            concurrency=number("concurrency", "ETC_JUDGE_CONCURRENCY", DEFAULT_CONCURRENCY, int, 1),
            timeout=number("judge_timeout", "ETC_JUDGE_TIMEOUT", DEFAULT_TIMEOUT, float, 0.001),
            max_attempts=number(
                "judge_max_attempts", "ETC_JUDGE_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS, int, 1
            ),
            backoff=number("judge_backoff", "ETC_JUDGE_BACKOFF", DEFAULT_BACKOFF, float, 0),
            backoff_max=DEFAULT_BACKOFF_MAX,
        )

    def signature(self) -> str:
        """``provider:..|model:..|temperature:0|prompts:decompose-vN-h,entail-vN-h|etclib-judge``."""
        temp = f"{TEMPERATURE:g}"
        return (
            f"provider:{self.provider}|model:{self.model}|temperature:{temp}"
            f"|prompts:{templates.tags()}|etclib-judge"
        )


@dataclass
class Usage:
    """What a run cost: API calls (every attempt), answers served without a call, tokens."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_versions: set[str] = field(default_factory=set)

    def report(self, model: str) -> dict[str, Any]:
        """``calls, cache_hits, retries, input_tokens, output_tokens, cost_usd`` (None = unknown
        price). Tokens count only calls made in this run, not cached answers."""
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": pricing.cost_usd(model, self.input_tokens, self.output_tokens),
        }


class RequestFailed(Exception):
    """One request gave no usable answer after its attempts (an item-level error, not fatal).

    ``raw`` is the text of the last reply received ('' when none came)."""

    def __init__(self, message: str, raw: str = ""):
        super().__init__(message)
        self.raw = raw


@dataclass(frozen=True)
class Answer:
    """One answered question: the parsed ``value`` in JSON types (lists, not tuples; the same
    whether it came from a call or the cache), the model's ``raw`` text, and ``cached``: served
    without a call of its own (run memo, a shared in-flight call, or the persistent cache)."""

    value: Any
    raw: str
    cached: bool


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


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def classify(exc: BaseException) -> tuple[str, str]:
    """``(action, description)`` for a failed call; action is ``retry``, ``connect``
    (cannot reach the endpoint), ``fatal``, ``bad_request`` or ``item`` (give up on it)."""
    if isinstance(exc, parse.AnswerParseError):
        return "retry", f"unparseable answer: {exc}"
    names = _names(exc)
    status = _status(exc)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or names & {
        "APITimeoutError",
        "TimeoutException",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
    }:
        return "retry", "timed out"
    if names & {"ConnectError", "ConnectTimeout"}:
        return "connect", f"cannot connect ({exc.__class__.__name__}: {exc})"
    if status is not None:
        message = str(exc).splitlines()[0][:300] if str(exc) else exc.__class__.__name__
        if status in _FATAL_STATUS:
            return "fatal", f"HTTP {status}: {message}"
        if status in _RETRY_STATUS or status >= 500:
            return "retry", f"HTTP {status}"
        if status == 400:
            return "bad_request", f"HTTP 400: {message}"
        return "item", f"HTTP {status}: {message}"
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
    }:
        return "retry", f"connection dropped ({exc.__class__.__name__})"
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return "retry", "malformed response body"
    return "item", f"{exc.__class__.__name__}: {exc}"


class Judge:
    """Decompose and entail with one provider, a shared cache and bounded concurrency.

    Use ``async with Judge(settings) as judge:``; the provider's client is opened on entry and
    closed on exit. ``provider`` and ``cache`` may be given (tests, several runs sharing one);
    ``model_option`` is the command-line option that fatal-error messages point to.
    """

    def __init__(
        self,
        settings: JudgeSettings | None = None,
        *,
        provider: Provider | None = None,
        cache: AnswerCache | None = None,
        model_option: str = "--judge-model",
    ):
        self.settings = settings or JudgeSettings.resolve()
        self.model_option = model_option
        self._provider = provider
        self._own_provider = provider is None
        self._own_cache = cache is None
        self.cache = cache if cache is not None else AnswerCache()
        self.usage = Usage()
        self._memo: dict[str, tuple[Any, str]] = {}
        self._inflight: dict[str, asyncio.Future] = {}
        self._slots: asyncio.Semaphore | None = None
        self._succeeded = False
        self._fatal: JudgeError | None = None
        self._prompts = {k: templates.load(k) for k in templates.KINDS}

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            raise JudgeError("Judge used outside 'async with Judge(...)'.")
        return self._provider

    async def __aenter__(self) -> Judge:
        if self._provider is None:
            s = self.settings
            self._provider = make_provider(s.provider, s.model, timeout=s.timeout)
        self._slots = asyncio.Semaphore(self.settings.concurrency)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            if self._own_provider and self._provider is not None:
                await self._provider.aclose()
        finally:
            if self._own_provider:
                self._provider = None
            if self._own_cache:
                self.cache.close()

    # -- the two questions -----------------------------------------------------------------
    async def decompose(self, text: str) -> list[str]:
        """The units of inner state in ``text`` (``[]`` for an empty text, without a call)."""
        if not text or not text.strip():
            return []
        answer = await self._template("decompose", parse.parse_units, text=text.strip())
        return [str(u) for u in answer.value]

    async def entail(self, unit: str, target: str) -> tuple[str, str]:
        """``(label, reasoning)``: is ``unit`` Supported / Neutral / Not Supported by ``target``."""
        answer = await self._template(
            "entail", parse.parse_entailment, unit=unit, target=target.strip()
        )
        return str(answer.value[0]), str(answer.value[1])

    async def _template(self, kind: str, parser: Callable[[str], Any], **fields: str) -> Answer:
        prompt = self._prompts[kind]
        return await self.ask(kind, prompt.tag, prompt.messages(**fields), parser, fields=fields)

    # -- any structured question -----------------------------------------------------------
    async def ask(
        self,
        kind: str,
        tag: str,
        messages: list[dict[str, str]],
        parser: Callable[[str], Any],
        *,
        temperature: float = TEMPERATURE,
        fields: dict[str, Any] | None = None,
    ) -> Answer:
        """Ask ``messages`` with ``kind``'s answer schema and parse the reply with ``parser``.

        ``tag`` identifies the prompt (name, version, hash) in the cache key; ``parser`` returns
        a JSON-able value or raises :class:`~etclib.judge.parse.AnswerParseError` (the answer is
        then retried); ``fields`` is what the cache row shows of the question. Raises
        :class:`RequestFailed` when no attempt gave a usable answer, JudgeError when the run
        must stop.
        """
        request = self.provider.request(kind, messages, temperature=temperature)
        key = request_key(self.provider.name, self.provider.model, tag, request)
        if key in self._memo:
            self.usage.cache_hits += 1
            return Answer(*self._memo[key], cached=True)
        pending = self._inflight.get(key)
        if pending is not None:
            self.usage.cache_hits += 1
            return Answer(*await asyncio.shield(pending), cached=True)
        stored = self.cache.get(key)
        if stored is not None:
            self.usage.cache_hits += 1
            self._memo[key] = (stored["answer"], stored["raw"])
            return Answer(*self._memo[key], cached=True)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            value, raw = await self._call(kind, key, tag, request, fields or {}, parser)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved: sharers re-raise it themselves
            raise
        else:
            self._memo[key] = (value, raw)
            future.set_result((value, raw))
            return Answer(value, raw, cached=False)
        finally:
            self._inflight.pop(key, None)

    # -- plumbing --------------------------------------------------------------------------
    async def _call(
        self,
        kind: str,
        key: str,
        tag: str,
        request: dict[str, Any],
        fields: dict[str, Any],
        parser: Callable[[str], Any],
    ) -> tuple[Any, str]:
        s = self.settings
        last = ""
        raw = ""
        for attempt in range(1, s.max_attempts + 1):
            if attempt > 1:
                self.usage.retries += 1
            retry_after: float | None = None
            assert self._slots is not None
            async with self._slots:
                if self._fatal is not None:  # another call already stopped the run
                    raise self._fatal
                self.usage.calls += 1
                try:
                    reply = await asyncio.wait_for(self.provider.complete(request), s.timeout)
                    self.usage.input_tokens += reply.input_tokens
                    self.usage.output_tokens += reply.output_tokens
                    if reply.model_version:
                        self.usage.model_versions.add(reply.model_version)
                    raw = reply.text
                    # JSON types, as a cached answer comes back
                    value = json.loads(json.dumps(parser(reply.text), ensure_ascii=False))
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - every failure is classified below
                    action, last = classify(exc)
                    retry_after = _retry_after(exc)
                else:
                    self._succeeded = True
                    self._store(kind, key, tag, fields, reply, value)
                    return value, reply.text
            if action == "fatal" or (action in ("connect", "bad_request") and not self._succeeded):
                self._fatal = JudgeError(self._fatal_message(last))
                raise self._fatal
            if action in ("item", "bad_request"):
                break
            if attempt < s.max_attempts:
                await asyncio.sleep(self._delay(attempt, retry_after))
        self.usage.failed_requests += 1
        raise RequestFailed(f"{kind} request failed after {attempt} attempt(s): {last}", raw)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        s = self.settings
        cap = min(s.backoff_max, s.backoff * 2 ** (attempt - 1))
        delay = random.uniform(cap / 2, cap)  # exponential, jittered
        if retry_after is not None and retry_after > delay:
            delay = min(retry_after, s.backoff_max)
        return delay

    def _fatal_message(self, what: str) -> str:
        p = self.provider
        endpoint = getattr(p, "endpoint", "")
        where = f" at {endpoint}" if endpoint else ""
        option = self.model_option
        hint = {
            "openai": f"check OPENAI_API_KEY, OPENAI_BASE_URL and the model name ({option})",
            "gemini": f"check GEMINI_API_KEY, ETC_GEMINI_BASE_URL and the model name ({option})",
        }.get(p.name, "check the provider's key, endpoint and model")
        return f"The {p.name} judge (model {p.model}){where} failed: {what}. Stopped; {hint}."

    def _store(self, kind: str, key: str, tag: str, fields: dict, reply: Any, value: Any) -> None:
        # the row keeps the question's fields, not the whole request: the system prompt is
        # identified by the template tag, and the key already covers every byte sent
        self.cache.put(
            key,
            kind=kind,
            provider=self.provider.name,
            model=self.provider.model,
            prompt=tag,
            request=fields,
            raw=reply.text,
            answer=value,
            model_version=reply.model_version,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
        )


@dataclass
class ItemResult:
    """One item's judge data (labels align with units; empty when nothing was asked)."""

    units: list[str] = field(default_factory=list)
    unit_labels: list[str] = field(default_factory=list)
    ref_units: list[str] = field(default_factory=list)
    ref_unit_labels: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "units": self.units,
            "unit_labels": self.unit_labels,
            "ref_units": self.ref_units,
            "ref_unit_labels": self.ref_unit_labels,
            "error": self.error,
        }


async def judge_item(judge: Judge, prediction: str, reference: str) -> ItemResult:
    """Decompose both texts, then label each unit against the other text (SPEC rules 1-3)."""
    out = ItemResult()
    try:
        out.units, out.ref_units = await asyncio.gather(
            judge.decompose(prediction), judge.decompose(reference)
        )
        if out.ref_units and out.units:
            labels = await asyncio.gather(
                *(judge.entail(u, reference) for u in out.units),
                *(judge.entail(u, prediction) for u in out.ref_units),
            )
            names = [label for label, _ in labels]
            out.unit_labels = names[: len(out.units)]
            out.ref_unit_labels = names[len(out.units) :]
    except RequestFailed as exc:
        out.error = str(exc)
    return out


async def judge_items(
    judge: Judge,
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    desc: str = "judge",
) -> list[ItemResult]:
    """:func:`judge_item` over all items at once (the judge's slots bound the calls); a
    progress bar counts finished items. A fatal JudgeError cancels the rest and propagates."""
    if len(predictions) != len(references):
        raise JudgeError(
            f"{len(predictions)} predictions but {len(references)} references; they must pair up."
        )
    return await gather_items(
        judge,
        [judge_item(judge, p, r) for p, r in zip(predictions, references, strict=True)],
        desc=desc,
    )


async def gather_items(judge: Judge, items: Sequence[Awaitable[T]], *, desc: str) -> list[T]:
    """Run one coroutine per item at once (the judge's slots bound the calls), results in
    order; a progress bar counts finished items. An exception (a fatal JudgeError) cancels the
    rest and propagates."""
    bar = progress.counter(len(items), desc=desc)

    def on_done(_: asyncio.Future) -> None:
        bar.update(1)
        u = judge.usage
        bar.set_postfix_str(f"calls {u.calls} hits {u.cache_hits} retries {u.retries}")

    tasks = []
    for item in items:
        task = asyncio.ensure_future(item)
        task.add_done_callback(on_done)
        tasks.append(task)
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        bar.close()


def run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run ``factory()`` to completion from sync code; in a worker thread if this thread
    already runs an event loop (Jupyter, Streamlit callbacks, async tests)."""

    async def main() -> T:
        return await factory()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()
