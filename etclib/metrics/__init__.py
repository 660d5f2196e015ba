"""Metric registry: one module per metric group, naming its :class:`Metric` instance ``METRIC``;
every fact about a metric lives in its module. Adding a metric: one new module and one line in
``METRICS`` (or :func:`register`). This registry knows metrics, not tracks.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

from etclib.core import registry
from etclib.core.errors import MetricError
from etclib.metrics.base import FAMILIES, UNITS, Context, Fact, Metric

# re-exported: what metric modules and the scoring code import from here
from etclib.metrics.base import MeanMetric as MeanMetric
from etclib.metrics.base import MetricData as MetricData

#: metric group name -> the module naming its ``METRIC`` (a dotted path, imported when first
#: used) or a :class:`Metric` instance
METRICS: dict[str, str | Metric] = {
    "bleu": "etclib.metrics.bleu",
    "rouge": "etclib.metrics.rouge",
    "bertscore": "etclib.metrics.bertscore",
    "judge": "etclib.metrics.judge",
    "category": "etclib.tracks.transcription.category",
    "erc": "etclib.tracks.categories.metric",
    "erc_loo": "etclib.tracks.categories.metric_loo",
}


def track_of(name: str) -> str | None:
    """The name of the track metric group ``name`` scores (its ``TRACK``; None when it names
    none: the default track's)."""
    return get(name).TRACK


def get(name: str) -> Metric:
    """The metric of group ``name`` (its module imported on first use)."""
    entry = registry.lookup(METRICS, name, kind="metric", error=MetricError)
    return importlib.import_module(entry).METRIC if isinstance(entry, str) else entry


def register(name: str, metric: Metric | str, *, replace_existing: bool = False) -> None:
    """Add a metric group (a :class:`Metric` or the path of a module naming one ``METRIC``) to
    the registry. A key another group produces, an unknown unit or family, or a name taken by
    another metric (unless ``replace_existing``) is refused with a :class:`MetricError`."""
    found = metric
    if isinstance(metric, str):
        found = getattr(importlib.import_module(metric), "METRIC", None)
    if not isinstance(found, Metric):
        raise MetricError(
            f"Metric {name!r}: {metric!r} is not an etclib.metrics.Metric instance, nor a "
            "module naming one METRIC; see etclib/metrics/base.py."
        )
    if found.FAMILY and found.FAMILY not in FAMILIES:
        raise MetricError(
            f"Metric {name!r}: unknown FAMILY {found.FAMILY!r} (use one of: {', '.join(FAMILIES)})."
        )
    taken = {f.key: f.group for g in METRICS if g != name for f in _facts_of(g)}
    for fact in found.FACTS:
        if fact.key in taken:
            raise MetricError(
                f"Metric {name!r} declares key {fact.key!r}, which group {taken[fact.key]!r} "
                "already produces; result keys must be unique."
            )
        if fact.unit not in UNITS:
            raise MetricError(
                f"Metric {name!r}, key {fact.key!r}: unknown unit {fact.unit!r} "
                f"(use one of: {', '.join(UNITS)})."
            )
    if replace_existing:
        METRICS[name] = metric
    else:
        registry.add(METRICS, name, metric, kind="metric group", error=MetricError)
    _facts_of.cache_clear()


def unregister(name: str) -> None:
    """Remove a metric group that :func:`register` added (tests)."""
    METRICS.pop(name, None)
    _facts_of.cache_clear()


def _cache(fn):
    """A cache of ``fn(name)`` keyed on the registry entry too (tests patch ``METRICS``)."""
    memo: dict[tuple[str, int], Any] = {}

    def wrapper(name: str):
        key = (name, id(METRICS.get(name)))
        if key not in memo:
            memo[key] = fn(name)
        return memo[key]

    wrapper.cache_clear = memo.clear  # type: ignore[attr-defined]
    return wrapper


@_cache
def _facts_of(name: str) -> tuple[Fact, ...]:
    m = get(name)
    return tuple(replace(f, group=name, stage=m.STAGE, family=m.FAMILY) for f in m.FACTS)


def facts(names: list[str] | tuple[str, ...] | None = None) -> list[Fact]:
    """Every fact of the groups ``names`` (default: every group), in registry order."""
    return [f for g in (METRICS if names is None else names) for f in _facts_of(g)]


def fact(key: str) -> Fact:
    """The fact of one result key (of any track); :class:`MetricError` with a suggestion."""
    for f in facts():
        if f.key == key:
            return f
    known = [f.key for f in facts()]
    raise MetricError(registry.unknown("metric key", key, known))


def heading(key: str) -> str:
    """A column heading for result key ``key`` (:attr:`Fact.heading`, e.g. ``"ROUGE-L ↑"``);
    the key itself when no registered metric produces it."""
    try:
        return fact(key).heading
    except MetricError:
        return key


def warm(names: list[str] | tuple[str, ...], corpus: Any = None) -> list[str]:
    """Call the optional ``warm(ctx)`` of each metric group of ``names`` (a worker does it before
    its first claim; ``ctx.corpus``: ``corpus``, else ``ETC_DATA_DIR``'s); the groups warmed."""
    ctx = Context(corpus=corpus)
    done = []
    for name in names:
        fn = getattr(get(name), "warm", None)
        if fn is None:
            continue
        if ctx.corpus is None:
            from etclib.data.corpus import load_corpus

            ctx.corpus = load_corpus()
        fn(ctx)
        done.append(name)
    return done
