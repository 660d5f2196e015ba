"""Run the judge over many items: asyncio, bounded concurrency, retries, cache, usage counts.

Every request goes through the in-run memo (identical requests asked once, in flight included),
then the persistent :class:`AnswerCache`, then the provider, holding one of ``concurrency``
slots only while on the wire. Transient faults are retried with back-off, a cut answer is asked
once more with twice the limit, and a used-up quota or a fatal service error stops the run
(docs/judge.md, "Faults" and "When a run cannot finish").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from etclib import llm
from etclib.core import progress
from etclib.core.errors import JudgeError, JudgeServiceError, QuotaExhaustedError
from etclib.judge import parse, templates
from etclib.judge.cache import AnswerCache, request_key
from etclib.judge.providers import TEMPERATURE, Provider, make_provider, settings_hint
from etclib.judge.settings import JudgeSettings
from etclib.llm.chat import Usage
from etclib.llm.retry import Fault

T = TypeVar("T")

__all__ = [
    "Answer",
    "ItemResult",
    "Judge",
    "JudgeSettings",
    "Question",
    "RequestFailed",
    "Usage",
    "every",
    "gather_items",
    "judge_item",
    "judge_items",
    "run_sync",
    "warm",
]


class RequestFailed(Exception):
    """One request gave no usable answer after its attempts (an item-level error, not fatal).

    ``raw`` is the text of the last reply received ('' when none came). The message is
    etclib's own (safe to store and show); ``detail`` holds the redacted provider text."""

    def __init__(self, message: str, raw: str = "", detail: str = ""):
        super().__init__(message)
        self.raw = raw
        self.detail = detail


class AnswerCut(Exception):
    """Internal: the answer stopped at the token limit (``limit``; None when none was sent)."""

    def __init__(self, limit: int | None):
        super().__init__(f"answer cut at {limit} tokens" if limit else "answer cut")
        self.limit = limit


@dataclass(frozen=True)
class Question:
    """One judge question, ready to send: its ``kind``, prompt ``tag``, cache ``key``, the
    ``request`` sent, the ``fields`` the cache row shows, and the ``parser`` of its answer."""

    kind: str
    tag: str
    key: str
    request: dict[str, Any]
    fields: dict[str, Any]
    parser: Callable[[str], Any]


#: the parser of each question kind of the scoring judge
PARSERS: dict[str, Callable[[str], Any]] = {
    "decompose": parse.parse_units,
    "entail": parse.parse_entailment,
}


@dataclass(frozen=True)
class Answer:
    """One answered question: the parsed ``value`` in JSON types (lists, not tuples; the same
    whether it came from a call or the cache), the model's ``raw`` text, and ``cached``: served
    without a call of its own (run memo, a shared in-flight call, or the persistent cache)."""

    value: Any
    raw: str
    cached: bool


def classify(exc: BaseException, where: str = "") -> tuple[str, str, Fault]:
    """``(action, public description, fault)`` for a failed call. Action: ``retry``,
    ``connect`` (cannot reach the endpoint), ``fatal``, ``quota`` (a used-up quota: stop),
    ``cut`` (the token limit stopped the answer), ``bad_request`` or ``item``."""
    if isinstance(exc, parse.AnswerParseError):
        return "retry", f"unparseable answer: {exc}", Fault("malformed", detail=str(exc))
    if isinstance(exc, AnswerCut):
        return "cut", str(exc), Fault("empty", detail=str(exc), what="output_limit")
    fault = llm.classify(exc, where=where)
    if fault.kind == "quota":
        action = "quota"
    elif fault.kind == "empty" and fault.what == "output_limit":
        action = "cut"  # no text: thinking took the whole limit
    elif fault.kind in ("auth", "not_found", "unsupported", "sdk"):
        action = "fatal"
    elif fault.kind == "connect":
        action = "connect"
    elif fault.kind == "bad_request":
        action = "bad_request"
    elif fault.transient or fault.kind == "empty":
        action = "retry"
    else:
        action = "item"  # blocked, other
    return action, fault.public, fault


class Judge:
    """Decompose and entail with one provider, a shared cache and bounded concurrency:
    ``async with Judge(settings) as judge:``. ``model_option`` is the command-line option that
    fatal-error messages point to."""

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
        self._fatal: JudgeError | None = None  # or UnsupportedSettingError
        #: Calls on the wire (sent, their answer not yet stored); set when there is none.
        self._wire = 0
        self._wire_idle: asyncio.Event | None = None
        self._prompts = {k: templates.load(k, self.settings.prompts) for k in templates.KINDS}

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            raise JudgeError("Judge used outside 'async with Judge(...)'.")
        return self._provider

    async def __aenter__(self) -> Judge:
        if self._provider is None:
            s = self.settings
            self._provider = make_provider(
                s.provider,
                s.model,
                timeout=s.timeout,
                thinking=s.thinking,
                max_tokens=s.token_limit(),
                service_tier=s.service_tier,
            )
        self._slots = asyncio.Semaphore(self.settings.concurrency)
        self._wire_idle = asyncio.Event()
        self._wire_idle.set()
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

    def question(self, kind: str, **fields: str) -> Question:
        """The ``decompose`` or ``entail`` question on ``fields`` (as those methods give them),
        with their request and cache key, unasked: the batch path sends these."""
        prompt = self._prompts[kind]
        request = self.provider.request(kind, prompt.messages(**fields))
        key = request_key(self.provider.name, self.provider.model, prompt.tag, request)
        return Question(kind, prompt.tag, key, request, fields, PARSERS[kind])

    async def store(self, question: Question, reply: Any) -> Any:
        """Parse ``reply`` (an answer to ``question`` received another way: a batch) as an
        online answer is parsed, and store it in the cache; the parsed value. A cut answer or
        one that does not parse raises (:class:`AnswerCut`, AnswerParseError): not stored."""
        if reply.cut:
            raise AnswerCut(self._token_limit(question.request))
        value = json.loads(json.dumps(question.parser(reply.text), ensure_ascii=False))
        q = question
        await self._store(q.kind, q.key, q.tag, q.fields, reply, value)
        return value

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
        """Ask ``messages`` with ``kind``'s answer schema and parse the reply with ``parser``
        (AnswerParseError: asked again). ``tag`` identifies the prompt in the cache key,
        ``fields`` is what the cache row shows. :class:`RequestFailed` when no attempt gave a
        usable answer, JudgeError when the run must stop."""
        request = self.provider.request(kind, messages, temperature=temperature)
        key = request_key(self.provider.name, self.provider.model, tag, request)
        if key in self._memo:
            self.usage.cache_hits += 1
            return Answer(*self._memo[key], cached=True)
        pending = self._inflight.get(key)
        if pending is not None:
            self.usage.cache_hits += 1
            return Answer(*await asyncio.shield(pending), cached=True)
        stored = await self.cache.aget(key)
        if stored is not None:
            self.usage.cache_hits += 1
            self._memo[key] = (stored["answer"], stored["raw"])
            return Answer(*self._memo[key], cached=True)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            # asked once across runs, threads and (on PostgreSQL) workers: the first asker
            # claims the key and calls; the others wait for its answer in the cache. A claim is
            # taken with a slot in hand, and that slot makes the first attempt.
            async with self.cache.once(key, gate=self._slots) as stored:
                if stored is None:
                    value, raw = await self._call(
                        kind, key, tag, request, fields or {}, parser, slot_held=True
                    )
            if stored is not None:
                self.usage.cache_hits += 1
                self._memo[key] = (stored["answer"], stored["raw"])
                future.set_result(self._memo[key])
                return Answer(*self._memo[key], cached=True)
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
        *,
        slot_held: bool = False,
    ) -> tuple[Any, str]:
        """Ask until an answer parses; each attempt holds a slot (``slot_held``: the caller
        acquired the first attempt's slot, which is released here like the others). A cut
        answer is asked once more with twice the token limit (an attempt of its own); cut
        again, the request fails."""
        s = self.settings
        last = ""
        raw = ""
        fault: Fault | None = None
        where = getattr(self.provider, "endpoint", "")
        assert self._slots is not None
        budget = s.max_attempts
        widened = False
        attempt = 0
        while attempt < budget:
            attempt += 1
            if attempt > 1:
                self.usage.retries += 1
            answered = on_wire = False
            try:
                async with _Slot(self._slots, held=slot_held and attempt == 1):
                    if self._fatal is not None:  # another call already stopped the run
                        raise self._fatal
                    self._wire_begin()
                    on_wire = True
                    reply = None
                    start = time.monotonic()
                    try:
                        try:
                            reply = await asyncio.wait_for(
                                self.provider.complete(request), s.timeout
                            )
                        except Exception as exc:
                            reply = getattr(exc, "reply", None)  # an empty answer's tokens
                            raise
                        finally:
                            self.usage.add(reply, latency=time.monotonic() - start)
                        raw = reply.text
                        if reply.cut:  # before parsing: a cut answer that parses is still cut
                            raise AnswerCut(self._token_limit(request))
                        # JSON types, as a cached answer comes back
                        value = json.loads(json.dumps(parser(reply.text), ensure_ascii=False))
                    except asyncio.CancelledError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - every failure is classified below
                        action, last, fault = classify(exc, where)
                    else:
                        self._succeeded = answered = True
                if answered:  # stored without holding the slot
                    await self._store(kind, key, tag, fields, reply, value)
                    return value, reply.text
            finally:
                if on_wire:  # answered and stored, or failed
                    self._wire_end()
            if action == "quota":
                if self._fatal is None:
                    self._fatal = self._quota_error(fault)
                raise self._fatal
            if action == "fatal" or (action in ("connect", "bad_request") and not self._succeeded):
                if self._fatal is None:
                    self._fatal = self._fatal_error(fault)
                raise self._fatal
            if action == "cut":
                self.usage.cut_answers += 1
                limit = self._token_limit(request)
                if not widened and limit and hasattr(self.provider, "with_token_limit"):
                    request = self.provider.with_token_limit(request, 2 * limit)
                    widened = True
                    budget = max(budget, attempt + 1)  # the one retry a cut answer gets
                    continue
                last = f"answer cut at {limit} tokens" if limit else "answer cut at its limit"
                break
            if action in ("item", "bad_request"):
                break
            if attempt < budget:
                await asyncio.sleep(self._delay(attempt, fault.retry_after))
        self.usage.failed_requests += 1
        if fault is not None and fault.kind in ("empty", "blocked") and action != "cut":
            self.usage.empty_answers[fault.what or fault.kind] += 1
        llm.log.info("judge %s request failed: %s", kind, fault.detail if fault else last)
        raise RequestFailed(
            f"{kind} request failed after {attempt} attempt(s): {last}",
            raw,
            fault.detail if fault else "",
        )

    def _wire_begin(self) -> None:
        assert self._wire_idle is not None
        self._wire += 1
        self._wire_idle.clear()

    def _wire_end(self) -> None:
        assert self._wire_idle is not None
        self._wire -= 1
        if not self._wire:
            self._wire_idle.set()

    @property
    def stopped(self) -> bool:
        """A used-up quota or a fatal service error stopped the run: no call starts any more."""
        return self._fatal is not None

    async def settle(self) -> None:
        """Wait until no call is on the wire: each one sent has had its answer (stored in the
        cache) or its failure. After a stop, before the run's other tasks are cancelled, so
        that an answer already asked for (and billed) is kept, and no request of this run
        reaches the service after it has returned."""
        if self._wire_idle is not None:
            await self._wire_idle.wait()

    def _token_limit(self, request: dict[str, Any]) -> int | None:
        read = getattr(self.provider, "token_limit", None)
        return read(request) if read is not None else None

    def _quota_error(self, fault: Fault) -> QuotaExhaustedError:
        p = self.provider
        return llm.quota_error(
            fault,
            provider=p.name,
            who=f"The {p.name} judge (model {p.model})",
            resume="Every answer received so far is cached: run the same command again once "
            "the quota allows, and only the questions not yet answered are asked.",
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        return self.settings.policy().delay(attempt, retry_after)

    def _fatal_error(self, fault: Fault) -> JudgeError:
        p = self.provider
        who = f"The {p.name} judge (model {p.model})"
        if fault.kind == "unsupported":
            return llm.failure(fault, provider=p.name, who=who)  # type: ignore[return-value]
        option = self.model_option
        hint = settings_hint(p.name, option)
        err = JudgeServiceError(
            f"{who} failed: {fault.public}. Stopped; {hint}.",
            detail=fault.detail,
            kind=fault.kind,
            status=fault.status,
        )
        llm.log.warning("%s [ref %s]: %s", who, err.ref, fault.detail)
        return err

    async def _store(
        self, kind: str, key: str, tag: str, fields: dict, reply: Any, value: Any
    ) -> None:
        # the row keeps the question's fields, not the whole request: the system prompt is
        # identified by the template tag, and the key already covers every byte sent
        await self.cache.aput(
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


class _Slot:
    """One of the judge's concurrency slots for one attempt: acquired on entry (unless the
    caller ``held`` it already) and released on exit."""

    def __init__(self, slots: asyncio.Semaphore, *, held: bool):
        self.slots, self.held = slots, held

    async def __aenter__(self) -> None:
        if not self.held:
            await self.slots.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self.slots.release()


@dataclass
class ItemResult:
    """One item's judge data (labels and reasons align with units; empty when nothing was
    asked). A reason is the judge's ``reasoning`` for that decision ('' when it gave none)."""

    units: list[str] = field(default_factory=list)
    unit_labels: list[str] = field(default_factory=list)
    unit_reasons: list[str] = field(default_factory=list)
    ref_units: list[str] = field(default_factory=list)
    ref_unit_labels: list[str] = field(default_factory=list)
    ref_unit_reasons: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def every(*aws: Awaitable[T]) -> list[T]:
    """The results of ``aws``, run at once, once every one has finished; then the first
    exception, if any. Unlike a bare ``gather``, a failure leaves no sibling running on after
    the caller has moved on (holding a cache claim, or outliving its judge)."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


async def judge_item(judge: Judge, prediction: str, reference: str) -> ItemResult:
    """Decompose both texts, then label each unit against the other text (docs/judge.md)."""
    out = ItemResult()
    try:
        # the reference first: it is shared by every submission (and worker) judging the item
        out.ref_units, out.units = await every(
            judge.decompose(reference), judge.decompose(prediction)
        )
        if out.ref_units and out.units:
            labels = await every(
                *(judge.entail(u, reference) for u in out.units),
                *(judge.entail(u, prediction) for u in out.ref_units),
            )
            n = len(out.units)
            names, reasons = [label for label, _ in labels], [why for _, why in labels]
            out.unit_labels, out.ref_unit_labels = names[:n], names[n:]
            out.unit_reasons, out.ref_unit_reasons = reasons[:n], reasons[n:]
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
    order, with a progress bar. An exception cancels the rest and propagates; after a stop, once
    the calls already on the wire have finished and their answers are stored."""
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
        if judge.stopped:  # the calls already on the wire finish first (module docstring)
            await judge.settle()
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


def warm(settings: JudgeSettings | None = None) -> None:
    """Pay a judge's one-time costs (SDK import, client, templates, answer cache) now rather than
    in its first run: a scoring worker calls it before it claims a job."""

    async def enter() -> None:
        async with Judge(settings):
            pass

    run_sync(enter)
