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
- optionally ``TRACK``: the track it scores (:mod:`etclib.tracks`; ``"transcription"`` when
  absent). ``predictions`` are then that track's values (label tuples on ``"erc"``) and
  ``references`` what the track compares them with; ``ctx.labels`` always holds the items'
  aggregated labels and ``ctx.keys`` their keys.

Adding a metric: one new module here and one line in ``METRICS`` (or :func:`register`).
Each track has its ranking rule (``Track.rank_order``; :data:`RANK_ORDER` is the transcription
track's), read through :func:`ranking_key`. Functions that list metrics take ``track`` (default:
the transcription track).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

import numpy as np

from .. import registry, tracks
from ..errors import MetricError
from ..tokenize import TokenCache

#: metric group name -> module (a dotted path, imported when first used, or a module object)
METRICS: dict[str, str | ModuleType] = {
    "bleu": "etclib.metrics.bleu",
    "rouge": "etclib.metrics.rouge",
    "bertscore": "etclib.metrics.bertscore",
    "judge": "etclib.metrics.judge",
    "category": "etclib.metrics.category",
    "erc": "etclib.metrics.erc",
    "erc_loo": "etclib.metrics.erc_loo",
}
DEFAULT_METRICS: tuple[str, ...] = tracks.TRANSCRIPTION.default_metrics
#: The transcription track's ranking rule: rank by the first of these keys that any entry has.
RANK_ORDER: tuple[str, ...] = tracks.TRANSCRIPTION.rank_order
TrackName = str | tracks.Track | None

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
    #: the track it scores (the module's ``TRACK``); filled by the registry
    track: str = ""
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


def track_of(name: str) -> str:
    """The track metric group ``name`` scores."""
    return getattr(get(name), "TRACK", tracks.DEFAULT_TRACK)


def groups(track: TrackName = None) -> list[str]:
    """The metric groups of ``track`` (default: transcription), in registry order."""
    want = tracks.get(track).name
    return [g for g in METRICS if track_of(g) == want]


def parse_metrics(
    spec: str | list[str] | tuple[str, ...] | None, track: TrackName = None
) -> list[str]:
    """``"bleu,rouge"`` -> ``["bleu", "rouge"]``, with "Did you mean" for unknown names; a
    group of another track than ``track`` (default: transcription) is refused."""
    t = tracks.get(track)
    if spec is None:
        return list(t.default_metrics)
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    names = [n for n in names if n]

    def available() -> str:  # only for a message: listing imports every metric module
        return ", ".join(groups(t))

    if not names:
        raise MetricError(f"No metric given. Available: {available()}.")
    out: list[str] = []
    for n in names:
        if n not in METRICS:
            raise MetricError(registry.unknown("metric", n, METRICS, available=groups(t)))
        other = track_of(n)
        if other != t.name:
            raise MetricError(
                f"Metric '{n}' scores the {other} track, not {t.name}; pass --track {other}, "
                f"or one of: {available()}."
            )
        if n not in out:
            out.append(n)
    return out


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
    tracks.get(getattr(mod, "TRACK", None))  # an unknown track is refused with its name
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
    track = getattr(mod, "TRACK", tracks.DEFAULT_TRACK)
    family = getattr(mod, "FAMILY", "")
    return tuple(
        replace(f, group=name, stage=mod.STAGE, track=track, family=family) for f in mod.FACTS
    )


def facts(names: list[str] | tuple[str, ...] | None = None, track: TrackName = None) -> list[Fact]:
    """Every fact of ``track``'s groups (default: transcription), or of the groups ``names``,
    in registry order."""
    return [f for g in (groups(track) if names is None else names) for f in _facts_of(g)]


def keys(*, ranking: bool | None = None, board: bool = False, track: TrackName = None) -> list[str]:
    """Result keys of ``track`` in registry order; ``ranking=True`` (``False``) for the ranking
    keys (the others) only; ``board=True`` for the leaderboard's columns only."""
    return [
        f.key
        for f in facts(track=track)
        if (ranking is None or f.ranking == ranking) and (not board or f.board or f.ranking)
    ]


def fact(key: str) -> Fact:
    """The fact of one result key (of any track); :class:`MetricError` with a suggestion."""
    for f in facts(list(METRICS)):
        if f.key == key:
            return f
    known = [f.key for f in facts(list(METRICS))]
    raise MetricError(registry.unknown("metric key", key, known))


def heading(key: str) -> str:
    """A column heading for result key ``key`` (:attr:`Fact.heading`, e.g. ``"ROUGE-L ↑"``);
    the key itself when no registered metric produces it."""
    try:
        return fact(key).heading
    except MetricError:
        return key


def stages(track: TrackName = None) -> dict[str, tuple[str, ...]]:
    """Stage -> the metric groups of ``track`` it computes, stages in registry order (the first
    runs first)."""
    out: dict[str, list[str]] = {}
    for name in groups(track):
        out.setdefault(get(name).STAGE, []).append(name)
    return {s: tuple(g) for s, g in out.items()}


def rank_order(track: TrackName = None) -> tuple[str, ...]:
    """``track``'s ranking rule (default: transcription, :data:`RANK_ORDER`)."""
    t = tracks.get(track)
    return RANK_ORDER if t.name == tracks.DEFAULT_TRACK else t.rank_order


def ranking_key(available: list[str] | tuple[str, ...] | set[str], track: TrackName = None) -> str:
    """The ranking rule: the first key of the track's rank order that is ``available``, else
    its last one (the board is then unranked)."""
    order = rank_order(track)
    present = set(available)
    return next((k for k in order if k in present), order[-1])


def ranking_rule(track: TrackName = None) -> str:
    """The ranking rule in words, from the track's rank order and the keys' labels."""
    labels = [fact(k).label for k in rank_order(track)]
    return (
        "Ranked by "
        + ", else ".join(
            f"{lab} when present" if i < len(labels) - 1 else lab for i, lab in enumerate(labels)
        )
        + "."
    )


def display_order(track: TrackName = None) -> list[str]:
    """The ranking keys of ``track``, most preferred first: groups in the order of their best
    place in the track's rank order (groups outside it after, in registry order), within a group
    the keys of the ranking rule first, then the module's own order."""
    order = rank_order(track)

    def place(key: str) -> int:
        return order.index(key) if key in order else len(order)

    names = groups(track)
    best = {g: min((place(f.key) for f in _facts_of(g)), default=len(order)) for g in names}
    out = []
    for g in sorted(names, key=lambda g: (best[g], names.index(g))):
        shown = [f.key for f in _facts_of(g) if f.ranking]
        out += sorted(shown, key=lambda k: (place(k), shown.index(k)))
    return out


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
