"""Shared machinery of the hosted-API backends (openai, gemini): retries and concurrency.

The SDK clients from :mod:`etclib.llm` make one attempt per request; these backends retry
transient failures (rate limits, server errors, timeouts, dropped connections) with exponential
back-off and send up to ``batch_size`` requests at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from ..errors import BackendError
from .base import Progress

T = TypeVar("T")
R = TypeVar("R")


def with_retries(
    call: Callable[[], T],
    *,
    transient: Callable[[BaseException], bool],
    describe: Callable[[BaseException], str],
    retries: int,
    wait_s: float,
) -> T:
    """``call()``, retried up to ``retries`` times on transient errors (waits 1, 2, 4... x wait_s).

    Any other error, or a transient one after the last retry, becomes a ``BackendError`` whose
    message is ``describe(exc)``.
    """
    for attempt in range(retries + 1):
        try:
            return call()
        except Exception as exc:  # classified below; nothing escapes unexplained
            if attempt < retries and transient(exc):
                time.sleep(wait_s * 2**attempt)
                continue
            tries = f" (after {attempt + 1} attempts)" if attempt else ""
            raise BackendError(describe(exc) + tries) from None
    raise AssertionError("unreachable")  # pragma: no cover


def concurrent_map(
    fn: Callable[[T], R], inputs: Sequence[T], workers: int, progress: Progress | None = None
) -> list[R]:
    """``[fn(x) for x in inputs]`` with up to ``workers`` calls in flight, results in order.

    ``progress(1)`` is called as each call finishes. The first error cancels the calls that
    have not started and is raised once the running ones end.
    """
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


def relay_stream(
    chunks: Iterable[Any], text_of: Callable[[Any], str], describe: Callable[[Exception], str]
) -> Iterator[str]:
    """Yield each streamed chunk's text (leading whitespace of the answer dropped).

    A stream that breaks half-way becomes a ``BackendError``; the stream is closed when the
    consumer stops early, which releases the connection.
    """
    started = False
    try:
        for chunk in chunks:
            text = text_of(chunk)
            if not started:
                text = text.lstrip()
                started = bool(text)
            if text:
                yield text
    except BackendError:
        raise
    except Exception as exc:  # noqa: BLE001 - any SDK or network failure mid-stream
        raise BackendError(describe(exc)) from None
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
