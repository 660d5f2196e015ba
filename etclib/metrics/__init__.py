"""Metric registry. One module per metric group; every fact about a metric lives in its module.

A metric module defines:

- ``STAGE``: the leaderboard stage that computes it (``"lexical"``, ``"bertscore"``,
  ``"judge"``, or a new name: see docs/leaderboard.md, "How to add a stage");
- ``FACTS``: one :class:`Fact` per result key (label, one-line definition, direction, unit,
  whether it ranks); ``KEYS`` is the tuple of their keys, in the order they are shown;
- ``signature(ctx, data=None) -> dict[str, str]``: everything the numbers depend on (``data``,
  the finished run's :class:`MetricData`, adds what only the run knows, e.g. the judge's served
  model snapshot);
- ``compute(predictions, references, ctx) -> MetricData``: per-item data, computed once;
- ``aggregate(data, idx=None) -> dict[str, float]``: the scores over the items ``idx`` (all
  items when ``None``). Breakdowns call this on subsets, so a corpus-level metric such as BLEU
  keeps its per-item sufficient statistics in ``data.arrays``;
- ``statistics(data) -> np.ndarray`` (items x k) and ``from_statistics(sums) ->
  dict[str, np.ndarray]``: as in sacrebleu, per-item sufficient statistics that add up, and
  every ranking key from their sums (one row per bootstrap resample). With them
  :mod:`etclib.significance` scores every resample of every entry with one matrix product.
  Optional: a module may instead define ``resample(data, resamples)`` (its own vectorised
  form; ``resamples.weights[r, i]`` counts item ``i`` in resample ``r``, ``resamples.idx``
  holds the drawn indices), and without either, ``aggregate`` is called once per resample.
  These functions read only ``data.arrays`` (the leaderboard stores nothing else);
- ``item_scores(data, i) -> dict``: one item's scores for ``--per-item`` output;
- ``score(predictions, references, **options) -> dict[str, float]``: the pure one-call form;
- optionally ``TOKENS = True`` when it scores etclib's MeCab tokens (the tokenizer then joins
  the run's signature);
- optionally ``warm(ctx)``: pays its one-time costs (imports, tokenizer, a trained model) so that
  a scoring worker's first job does not (:func:`warm`; ``ctx.corpus`` is the corpus scored);
- optionally ``FAMILY``: what kind of measure it is, one of :data:`FAMILIES` (``lexical``:
  n-gram overlap; ``similarity``: embedding similarity; ``judge``: an LLM judge's decisions;
  ``classification``: predicted categories against labels); every fact carries it;
- optionally ``TRACK``: the name of the track it scores (:mod:`etclib.tracks`; the default
  track when absent). ``predictions`` are then that track's values and ``references`` what the
  track compares them with; ``ctx.labels`` always holds the items' aggregated labels and
  ``ctx.keys`` their keys.

Adding a metric: one new module here and one line in ``METRICS`` (or :func:`register`). What a
track's metrics are, its ranking rule and its columns are the track's to say (``Track.groups``,
``Track.rank_order``); this registry knows metrics, not tracks.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

import numpy as np

from .. import registry
from ..errors import MetricError
from ..tokenize import TokenCache

#: metric group name -> module (a dotted path, imported when first used, or a module object)
METRICS: dict[str, str | ModuleType] = {
    "bleu": "etclib.metrics.bleu",
    "rouge": "etclib.metrics.rouge",
    "bertscore": "etclib.metrics.bertscore",
    "judge": "etclib.metrics.judge",
    "category": "etclib.tracks.transcription.category",
    "erc": "etclib.tracks.categories.metric",
    "erc_loo": "etclib.tracks.categories.metric_loo",
}

UNITS = ("×100", "count")
#: What kind of measure a metric is (a module's optional ``FAMILY``).
FAMILIES = ("lexical", "similarity", "judge", "classification")


@dataclass(frozen=True)
class Fact:
    """What every consumer needs to know about one result key of a metric."""

    key: str
    #: short label, e.g. "BLEU-4"
    label: str
    #: one line: what the number is
    definition: str
    higher_is_better: bool = True
    #: "×100" (a share or score, 0..100) or "count" (a plain number, e.g. units per text)
    unit: str = "×100"
    #: a ranking column: bootstrap interval, rank bands, ``sort_by``
    ranking: bool = True
    #: shown as a leaderboard column (ranking keys always are)
    board: bool = True
    #: shown in compact tables (``python -m leaderboard show``)
    summary: bool = True
    #: the metric group (module name in the registry); filled by the registry
    group: str = ""
    #: the stage that computes it (the module's ``STAGE``); filled by the registry
    stage: str = ""
    #: what kind of measure it is (the module's ``FAMILY``, one of :data:`FAMILIES`; "" when
    #: the module names none); filled by the registry
    family: str = ""

    @property
    def arrow(self) -> str:
        """``"↑"`` (higher is better) or ``"↓"``; blank for a count (not a score)."""
        if self.unit == "count":
            return ""
        return "↑" if self.higher_is_better else "↓"

    @property
    def heading(self) -> str:
        """How a column of this key is headed for a reader: ``"ROUGE-L ↑"`` (label and
        direction), never the internal key."""
        return f"{self.label} {self.arrow}".strip()


@dataclass
class MetricData:
    """What ``compute`` returns: per-item arrays, optional per-item details, run-level extras."""

    arrays: dict[str, np.ndarray]
    details: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(next(iter(self.arrays.values()))) if self.arrays else 0


@dataclass
class Context:
    """Options shared by the metrics of one run, and the run's token cache."""

    options: dict[str, Any] = field(default_factory=dict)
    tokens: TokenCache = field(default_factory=TokenCache)
    #: the aggregated label of each scored item, in item order (set by etclib.scoring.score)
    labels: list[tuple[str, ...]] | None = None
    #: the corpus scored (metrics that train on its train split use it; default: ETC_DATA_DIR)
    corpus: Any = None
    #: the key ``(dialogue_id, turn, role)`` of each scored item, in item order (set by
    #: etclib.scoring.score; metrics that read the items' annotations use it)
    keys: list[tuple[int, int, str]] | None = None

    def get(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value


def track_of(name: str) -> str | None:
    """The name of the track metric group ``name`` scores (its ``TRACK``; None when it names
    none: the default track's)."""
    return getattr(get(name), "TRACK", None)


def get(name: str) -> ModuleType:
    """The module of metric group ``name`` (imported on first use)."""
    module = registry.lookup(METRICS, name, kind="metric", error=MetricError)
    return importlib.import_module(module) if isinstance(module, str) else module


_REQUIRED = ("STAGE", "FACTS", "signature", "compute", "aggregate", "item_scores")


def register(name: str, module: ModuleType | str, *, replace_existing: bool = False) -> None:
    """Add a metric group to the registry (what one line in :data:`METRICS` does).

    ``module`` is a module object or a dotted path. Its interface and facts are checked now:
    a missing attribute, a key another group already produces, or an unknown unit is refused
    with a :class:`MetricError` that says which; so is a name registered to another module
    (the registries' one collision rule, :func:`etclib.registry.add`) unless
    ``replace_existing``.
    """
    mod = importlib.import_module(module) if isinstance(module, str) else module
    missing = [a for a in _REQUIRED if not hasattr(mod, a)]
    if missing:
        raise MetricError(
            f"Metric module {mod.__name__!r} lacks {', '.join(missing)}; see "
            "etclib/metrics/__init__.py for the interface a metric module defines."
        )
    if getattr(mod, "FAMILY", FAMILIES[0]) not in FAMILIES:
        raise MetricError(
            f"Metric {name!r}: unknown FAMILY {mod.FAMILY!r} (use one of: {', '.join(FAMILIES)})."
        )
    taken = {f.key: f.group for g in METRICS if g != name for f in _facts_of(g)}
    for fact in mod.FACTS:
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
        METRICS[name] = module
    else:
        registry.add(METRICS, name, module, kind="metric group", error=MetricError)
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
    mod = get(name)
    family = getattr(mod, "FAMILY", "")
    return tuple(replace(f, group=name, stage=mod.STAGE, family=family) for f in mod.FACTS)


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


def subset_mean(values: np.ndarray, idx: np.ndarray | None) -> float:
    """Mean x100 of per-item values over ``idx`` (NaN when empty); NaN items are excluded."""
    v = values if idx is None else values[idx]
    v = v[~np.isnan(v)]
    return float(v.mean() * 100) if len(v) else float("nan")


def mean_statistics(*values: np.ndarray) -> np.ndarray:
    """Sufficient statistics of means over items (NaN items left out), for each array: the
    value (0 when NaN) and 1 when known. Items x 2 per array."""
    cols = []
    for v in values:
        v = np.asarray(v, dtype=float)
        known = ~np.isnan(v)
        cols += [np.where(known, v, 0.0), known.astype(float)]
    return np.column_stack(cols)


def means_from_statistics(sums: np.ndarray, keys: tuple[str, ...] | list[str]) -> dict:
    """:func:`subset_mean` from summed :func:`mean_statistics` (rows: resamples): key ->
    mean x100, NaN where no known item was drawn."""
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for j, key in enumerate(keys):
            num, den = sums[:, 2 * j], sums[:, 2 * j + 1]
            out[key] = np.where(den > 0, num / den * 100.0, np.nan)
    return out


def resampled_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`subset_mean` on every resample at once: ``weights`` is resamples x items (how
    often each item was drawn); NaN items are left out; NaN where none is left."""
    return means_from_statistics(weights @ mean_statistics(values), ["x"])["x"]


def warm(names: list[str] | tuple[str, ...], corpus: Any = None) -> list[str]:
    """Call the optional ``warm(ctx)`` of each metric group of ``names`` (a worker does it before
    its first claim); the groups warmed. ``ctx.corpus`` is ``corpus``, else the corpus of
    ``ETC_DATA_DIR``, loaded once a group has a ``warm`` (the scoring run reads it too). An
    error is raised (the caller decides what it costs)."""
    ctx = Context(corpus=corpus)
    done = []
    for name in names:
        fn = getattr(get(name), "warm", None)
        if fn is None:
            continue
        if ctx.corpus is None:
            from ..corpus import load_corpus

            ctx.corpus = load_corpus()
        fn(ctx)
        done.append(name)
    return done


def signature_of(
    module: ModuleType, ctx: Context | None, data: MetricData | None
) -> dict[str, str]:
    """``module.signature(ctx, data)``; a module whose ``signature`` takes only ``ctx`` (the
    first form of the interface) is called with ``ctx`` alone."""
    import inspect

    if len(inspect.signature(module.signature).parameters) >= 2:
        return module.signature(ctx, data)
    return module.signature(ctx)
