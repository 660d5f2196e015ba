"""The hosted-API backends: :class:`HostedBackend` is the backend of any registered LLM provider
(:mod:`etclib.llm.providers`), whose spec does the wire work, so a provider needs no backend
module of its own. Calls and streams are retried as the judge's are (a stream before its first
chunk). Failures become :class:`~etclib.core.errors.BackendServiceError` with etclib's own
message (the provider's redacted text is its ``detail``). An empty answer raises
:class:`~etclib.core.errors.EmptyAnswerError` from ``complete`` and ``stream``; ``predict``
writes an empty prediction and counts it in :meth:`HostedBackend.notes`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, ClassVar, TypeVar

from etclib import llm
from etclib.core.config import setting
from etclib.core.errors import BackendError, BackendServiceError, ConfigError, EmptyAnswerError
from etclib.data.task import Item, build_messages
from etclib.llm.chat import Reply, Usage
from etclib.llm.providers import ProviderSpec
from etclib.llm.retry import CallFailed, Fault, RetryPolicy, call_with_retries, stream_with_retries
from etclib.models.base import (
    Backend,
    Progress,
    Shots,
    clean,
    messages_for,
    positive_int,
    retry_count,
)

T = TypeVar("T")
R = TypeVar("R")


def concurrent_map(
    fn: Callable[[T], R], inputs: Sequence[T], workers: int, progress: Progress | None = None
) -> list[R]:
    """``[fn(x) for x in inputs]`` with up to ``workers`` calls in flight, results in order; the
    first error cancels the calls not started and is raised once the running ones end."""
    if workers <= 1 or len(inputs) <= 1:
        out = []
        for x in inputs:
            out.append(fn(x))
            if progress:
                progress(1)
        return out
    results: dict[int, R] = {}
    with ThreadPoolExecutor(max_workers=min(workers, len(inputs))) as pool:
        pending: dict[Future[R], int] = {pool.submit(fn, x): i for i, x in enumerate(inputs)}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    results[i] = fut.result()
                    if progress:
                        progress(1)
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    return [results[i] for i in range(len(inputs))]


class HostedBackend(Backend):
    """The backend of one registered LLM provider, at temperature 0 where the model takes it,
    thinking set explicitly, with streaming. Options: ``model`` (else ``ETC_<PROVIDER>_MODEL``),
    ``max_new_tokens`` (default: the spec's), ``thinking``, ``batch_size`` (requests in flight,
    default 8), ``retries`` (default 4; on 429, 5xx, timeouts, dropped connections),
    ``retry_wait`` (seconds before the first retry, doubled each time; a longer Retry-After
    wins), ``timeout`` (per read: the first token and every gap after it), ``connect_timeout``
    (default ``timeout``), ``base_url`` and ``api_key`` (another server, e.g. a vLLM server).
    """

    uses_prompt = True
    metered = True
    #: the provider whose spec does the wire work, and its registered name
    spec: ClassVar[ProviderSpec]
    provider: ClassVar[str] = ""

    def __init__(
        self,
        model: str | None = None,
        max_new_tokens: int | None = None,
        batch_size: int | None = None,
        retries: int = 4,
        retry_wait: float = 1.0,
        timeout: float = llm.DEFAULT_TIMEOUT,
        thinking: int | str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        """Build the client now; ``BackendError`` if no key is configured."""
        spec = self.spec
        self.model = model or setting(spec.model_setting) or spec.backend_model
        limit = spec.backend_max_tokens if max_new_tokens is None else max_new_tokens
        self.max_new_tokens = (
            None if limit is None else positive_int(limit, "max_new_tokens", self.name)
        )
        self.batch_size = positive_int(
            8 if batch_size is None else batch_size, "batch_size", self.name
        )
        self.retries = retry_count(retries, self.name)
        self.retry_wait = float(retry_wait)
        self.policy = RetryPolicy(attempts=self.retries + 1, backoff=self.retry_wait)
        self.decoding = llm.decoding(
            spec.name, self.model, temperature=0.0, thinking=thinking, where="thinking"
        )
        self.usage = Usage()
        if base_url is not None and not str(base_url).startswith(("http://", "https://")):
            raise ConfigError(
                f"Backend {self.name!r}: option 'base_url' must be an http(s) URL, got "
                f"{base_url!r}."
            )
        self.endpoint = base_url or spec.endpoint()
        try:
            self.client = spec.client(
                timeout=float(timeout),
                base_url=base_url,
                api_key=api_key,
                connect_timeout=None if connect_timeout is None else float(connect_timeout),
            )
        except ConfigError as exc:
            raise BackendError(f"The {self.name} backend is not configured: {exc}") from None

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        spec = cls.spec
        if not spec.configured():
            return False, spec.availability_help
        # the endpoint stays private: this text reaches the site's model picker
        return True, f"ready ({setting(spec.model_setting) or spec.backend_model})"

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        return self.spec.request(
            self.model, messages, self.decoding, max_tokens=self.max_new_tokens
        )

    # -- the call path ----------------------------------------------------------------------
    def _who(self) -> str:
        return f"The {self.name} backend (model {self.model!r})"

    def _fail(self, exc: CallFailed) -> Exception:
        return llm.failure(
            exc.fault,
            provider=self.provider,
            who=self._who(),
            attempts=exc.attempts,
            cls=BackendServiceError,
        )

    def _retried(self, fault: Fault) -> None:
        self.usage.note(retries=1)

    def _attempt(self, messages: list[dict[str, str]]) -> Reply:
        start = time.monotonic()
        try:
            reply = self.spec.send(self.client, self._request(messages))
        except EmptyAnswerError as exc:
            self.usage.add(getattr(exc, "reply", None), latency=time.monotonic() - start)
            raise
        except Exception:
            self.usage.add(latency=time.monotonic() - start)
            raise
        self.usage.add(reply, latency=time.monotonic() - start)
        return reply

    def complete(self, messages: list[dict[str, str]]) -> str:
        """One answer for one conversation; EmptyAnswerError when the model gave no text."""
        try:
            reply = call_with_retries(
                lambda: self._attempt(messages),
                self.policy,
                where=self.endpoint,
                on_retry=self._retried,
            )
        except CallFailed as exc:
            self.usage.note(failed=1)
            raise self._fail(exc) from None
        return clean(reply.text)

    def _answer(self, messages: list[dict[str, str]]) -> str:
        try:
            return self.complete(messages)
        except EmptyAnswerError as exc:
            self.usage.note(empty=exc.reason)
            return ""

    def predict(
        self,
        items: Sequence[Item],
        progress: Progress | None = None,
        shots: Shots | None = None,
    ) -> list[str]:
        """One answer per item; an empty answer is an empty prediction, counted (see notes)."""
        return concurrent_map(self._answer, messages_for(items, shots), self.batch_size, progress)

    def stream(self, item: Item, shots: Sequence[Item] = ()) -> Iterator[str]:
        """Yield the answer's text as the server streams it; a failure before the first chunk
        is retried; EmptyAnswerError when the stream ends without text."""
        messages = build_messages(item, list(shots))
        seen: list[Any] = []

        def opened() -> Iterable[Any]:
            self.usage.add()
            seen.clear()  # a new attempt
            return self.spec.open_stream(self.client, self._request(messages))

        got = False
        try:
            for text in stream_with_retries(
                opened,
                self.spec.chunk_text,
                self.policy,
                where=self.endpoint,
                on_retry=self._retried,
                on_chunk=seen.append,
            ):
                got = True
                yield text
        except CallFailed as exc:
            self.usage.note(failed=1)
            raise self._fail(exc) from None
        reply, reason = self.spec.stream_end(seen)
        self.usage.add(reply, call=False)
        if not got:
            from etclib.llm.chat import empty_answer

            fault = llm.classify(empty_answer(reason or "empty", "stream ended without text"))
            self.usage.note(empty=fault.what)
            raise llm.failure(fault, provider=self.provider, who=self._who())

    # -- reporting --------------------------------------------------------------------------
    def notes(self) -> list[str]:
        """Lines for the user about this backend's run so far: empty answers by reason, the
        model snapshot(s) the server served."""
        out = []
        empties = self.usage.empty_answers
        if empties:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(empties.items()))
            out.append(
                f"{sum(empties.values())} answers were empty and written as empty predictions "
                f"({reasons}); they score 0 (details in the log, logger etclib.llm)."
            )
        return out

    def run_info(self) -> dict[str, Any]:
        """Usage of this backend's calls so far, and the served model snapshot(s)."""
        report = self.usage.report(self.model)
        report["served_models"] = sorted(self.usage.model_versions)
        report["empty_answers"] = dict(self.usage.empty_answers)
        return report

    def signature(self) -> dict[str, Any]:
        sig = super().signature()
        d = self.decoding
        sig.update(
            model=self.model,
            temperature=d.temperature if d.temperature is not None else "default",
            thinking=d.thinking_label(),
        )
        if self.max_new_tokens is not None:
            sig[d.info.token_param] = self.max_new_tokens
        return sig


def hosted_backend(spec: ProviderSpec) -> type[HostedBackend]:
    """The backend class of provider ``spec`` (named after it)."""
    return type(
        f"{spec.name.capitalize()}Backend",
        (HostedBackend,),
        {
            "name": spec.name,
            "provider": spec.name,
            "spec": spec,
            "description": spec.description
            or f"{spec.label} ({spec.package}), temperature 0, streaming.",
            "__doc__": HostedBackend.__doc__,
        },
    )
