"""What a metric is made of: the facts of its result keys, its per-item data, the options of a
run, and :class:`Metric`, the base class of every metric group (:class:`MeanMetric` for the
means over items). The registry of metric groups is :mod:`etclib.metrics`.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from etclib.data.tokenize import TokenCache

UNITS = ("×100", "count")
#: What kind of measure a metric is (its ``FAMILY``).
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
    #: the metric group (its name in the registry); filled by the registry
    group: str = ""
    #: the stage that computes it (the metric's ``STAGE``); filled by the registry
    stage: str = ""
    #: what kind of measure it is (the metric's ``FAMILY``, one of :data:`FAMILIES`; "" when
    #: it names none); filled by the registry
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
    #: the aggregated label of each scored item, in item order (set by etclib.tracks.scoring.score)
    labels: list[tuple[str, ...]] | None = None
    #: the corpus scored (metrics that train on its train split use it; default: ETC_DATA_DIR)
    corpus: Any = None
    #: the key ``(dialogue_id, turn, role)`` of each scored item, in item order (set by
    #: etclib.tracks.scoring.score; metrics that read the items' annotations use it)
    keys: list[tuple[int, int, str]] | None = None

    def get(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value


class Metric(abc.ABC):
    """A metric group, as sacrebleu's ``Metric``: a subclass declares its ``FACTS`` and writes
    :meth:`signature`, :meth:`compute` and :meth:`aggregate`; its module names one ``METRIC``.

    Optional methods: ``statistics(data)`` and ``from_statistics(sums)`` (per-item sufficient
    statistics that add up, read from ``data.arrays`` only: all resamples in one matrix
    product), else ``resample(data, resamples)``; ``warm(ctx)`` (one-time costs before a
    worker's first job); ``incomplete`` and ``failures`` (a metric whose items can fail);
    ``undefined(data)`` (keys with no value on the items, shown as "n/a").
    """

    #: the leaderboard stage that computes it: "lexical" (the first), "bertscore", "judge", or
    #: a new name (docs/leaderboard.md, "How to add a stage")
    STAGE: ClassVar[str] = "lexical"
    #: one :class:`Fact` per result key, in the order they are shown
    FACTS: ClassVar[tuple[Fact, ...]] = ()
    #: the keys of ``FACTS``, in their order
    KEYS: ClassVar[tuple[str, ...]] = ()
    #: what kind of measure it is, one of :data:`FAMILIES` (``lexical``: n-gram overlap;
    #: ``similarity``: embeddings; ``judge``: an LLM judge; ``classification``: categories)
    FAMILY: ClassVar[str] = ""
    #: the name of the track it scores (None: the default track); ``predictions`` are that
    #: track's values, ``references`` what the track compares them with
    TRACK: ClassVar[str | None] = None
    #: whether it scores etclib's MeCab tokens (the tokenizer then joins the run's signature)
    TOKENS: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.KEYS = tuple(f.key for f in cls.FACTS)

    @abc.abstractmethod
    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        """Everything the numbers depend on; ``data``, a finished run's, adds what only the run
        knows (e.g. the judge's served model snapshot)."""

    @abc.abstractmethod
    def compute(self, predictions: list, references: list, ctx: Context) -> MetricData:
        """Per-item data, computed once."""

    @abc.abstractmethod
    def aggregate(self, data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
        """The scores over the items ``idx`` (all when None). Breakdowns call it on subsets, so
        a corpus-level metric (BLEU) keeps per-item sufficient statistics."""

    def item_scores(self, data: MetricData, i: int) -> dict[str, Any]:
        """One item's scores, for ``--per-item`` output."""
        return {}

    def score(self, predictions: list, references: list, **options: Any) -> dict[str, float]:
        """The pure one-call form: the scores of ``predictions`` against ``references``."""
        return self.aggregate(self.compute(predictions, references, Context(options)))


class MeanMetric(Metric):
    """A metric whose ×100 keys are means over items: ``compute`` puts each item's value (0..1;
    NaN leaves the item out) in ``data.arrays[key]``. Keys of another unit (counts) are the
    subclass's to add to :meth:`aggregate`."""

    #: the ×100 keys, the means
    MEANS: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.MEANS = tuple(f.key for f in cls.FACTS if f.unit == "×100")

    def aggregate(self, data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
        out = {}
        for k in self.MEANS:
            v = data.arrays[k] if idx is None else data.arrays[k][idx]
            v = v[~np.isnan(v)]
            out[k] = float(v.mean() * 100) if len(v) else float("nan")
        return out

    def statistics(self, data: MetricData) -> np.ndarray:
        """Per item and mean: its value (0 when NaN) and 1 when known."""
        cols = []
        for k in self.MEANS:
            v = np.asarray(data.arrays[k], dtype=float)
            known = ~np.isnan(v)
            cols += [np.where(known, v, 0.0), known.astype(float)]
        return np.column_stack(cols)

    def from_statistics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        """Each mean from summed statistics (rows: resamples), NaN where no known item was
        drawn."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return {
                k: np.where(den > 0, num / den * 100.0, np.nan)
                for k, num, den in zip(self.MEANS, sums[:, ::2].T, sums[:, 1::2].T, strict=True)
            }

    def item_scores(self, data: MetricData, i: int) -> dict[str, Any]:
        """Each mean's value for item ``i``, ×100 (None when the item is left out)."""
        values = {k: float(data.arrays[k][i]) for k in self.MEANS}
        return {k: None if math.isnan(v) else round(v * 100, 4) for k, v in values.items()}
