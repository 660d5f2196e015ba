"""Metric registry. One module per metric group, each exposing the same small interface.

A metric module defines:

- ``KEYS``: the result keys it produces (e.g. ``("rouge1", "rouge2", "rougeL")``);
- ``signature(ctx) -> dict[str, str]``: everything the numbers depend on;
- ``compute(predictions, references, ctx) -> MetricData``: per-item data, computed once;
- ``aggregate(data, idx=None) -> dict[str, float]``: the scores (x100) over the items ``idx``
  (all items when ``None``). Breakdowns and bootstrap intervals call this on subsets and
  resamples, so a corpus-level metric such as BLEU keeps its per-item sufficient statistics;
- ``item_scores(data, i) -> dict``: one item's scores for ``--per-item`` output;
- ``score(predictions, references, **options) -> dict[str, float]``: the pure one-call form.

Adding a metric: one new module here and one line in ``METRICS``.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import MetricError
from ..tokenize import TokenCache

#: metric group name -> module
METRICS: dict[str, str] = {
    "bleu": "etclib.metrics.bleu",
    "rouge": "etclib.metrics.rouge",
    "bertscore": "etclib.metrics.bertscore",
    "judge": "etclib.metrics.judge",
}
DEFAULT_METRICS: tuple[str, ...] = ("bleu", "rouge")


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

    def get(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value


def parse_metrics(spec: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """``"bleu,rouge"`` -> ``["bleu", "rouge"]``, with "Did you mean" for unknown names."""
    if spec is None:
        return list(DEFAULT_METRICS)
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    names = [n for n in names if n]
    if not names:
        raise MetricError(f"No metric given. Available: {', '.join(METRICS)}.")
    out: list[str] = []
    for n in names:
        if n not in METRICS:
            close = difflib.get_close_matches(n, METRICS, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise MetricError(f"Unknown metric '{n}'.{hint} Available: {', '.join(METRICS)}.")
        if n not in out:
            out.append(n)
    return out


def get(name: str) -> ModuleType:
    parse_metrics([name])
    return importlib.import_module(METRICS[name])


def subset_mean(values: np.ndarray, idx: np.ndarray | None) -> float:
    """Mean x100 of per-item values over ``idx`` (NaN when empty); NaN items are excluded."""
    v = values if idx is None else values[idx]
    v = v[~np.isnan(v)]
    return float(v.mean() * 100) if len(v) else float("nan")
