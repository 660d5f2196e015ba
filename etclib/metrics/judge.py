"""LLM-judge atomic-unit precision, recall and F1 (FActScore-style).

An LLM decomposes each prediction and reference into units of inner state and labels every unit
against the other text as Supported / Neutral / Not Supported (:func:`item_prf`: Neutral counts
as not supported; an item whose reference has no unit is left out). An item whose requests
failed after every retry makes the run *incomplete*. The rules, options and cache: docs/judge.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from etclib.metrics import Context, Fact, MeanMetric, MetricData


def item_prf(
    n_units: int, n_supported: int, n_ref_units: int, n_ref_supported: int
) -> tuple[float, float, float]:
    """One item's (precision, recall, F1) in 0..1, NaN when the reference has no unit."""
    if n_ref_units == 0:
        return math.nan, math.nan, math.nan
    if n_units == 0:
        return 0.0, 0.0, 0.0
    p = n_supported / n_units
    r = n_ref_supported / n_ref_units
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


def _item_name(keys: Sequence[Any] | None, i: int) -> str:
    if keys is None or i >= len(keys):
        return f"item {i + 1}"
    key = keys[i]
    if isinstance(key, tuple) and len(key) == 3:
        return f"dialogue {key[0]} turn {key[1]} {key[2]}"
    return f"item {key}"


def _mean_sd(values: np.ndarray) -> tuple[float, float]:
    v = values[~np.isnan(values)]
    if not len(v):
        return math.nan, math.nan
    return float(v.mean()), float(v.std())


def _count(key: str, label: str, definition: str, board=False, summary=False) -> Fact:
    """A count's fact: no ranking key, off the board and the summaries unless asked."""
    return Fact(key, label, definition, unit="count", ranking=False, board=board, summary=summary)


class JudgeMetric(MeanMetric):
    STAGE = "judge"
    FAMILY = "judge"
    FACTS = (
        Fact(
            "precision",
            "Judge precision",
            "share of the prediction's atomic units of inner state that the LLM judge finds "
            "supported by the reference, mean over items whose reference has units",
        ),
        Fact(
            "recall",
            "Judge recall",
            "share of the reference's atomic units supported by the prediction, mean over items "
            "whose reference has units",
        ),
        Fact(
            "f1",
            "Judge F1",
            "harmonic mean of an item's judge precision and recall, mean over items (so it can be "
            "lower than both means)",
        ),
        _count(
            "units_mean", "Units", "atomic units per prediction, mean", board=True, summary=True
        ),
        _count(
            "units_sd", "Units SD", "atomic units per prediction, standard deviation", board=True
        ),
        _count("ref_units_mean", "Reference units", "atomic units per reference, mean"),
        _count(
            "ref_units_sd", "Reference units SD", "atomic units per reference, standard deviation"
        ),
        _count(
            "n_judged",
            "Items judged",
            "items whose reference has units and whose judge calls succeeded",
        ),
    )

    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        """``{"judge": "provider:..|model:..|temperature:0|thinking:..|prompts:..|etclib-judge"}``,
        with ``|served:SNAPSHOT`` when ``data`` (a finished run) says which snapshots answered."""
        from etclib.judge.runner import JudgeSettings

        settings = JudgeSettings.resolve(ctx.get if ctx is not None else None)
        served = data.extra.get("judge_model_versions", ()) if data is not None else ()
        return {"judge": settings.signature(served)}

    def compute(self, predictions: list[str], references: list[str], ctx: Context) -> MetricData:
        """Judge every item (concurrently, cached); per-item arrays, details and run usage."""
        # imported here: listing the metrics (every `etclib score`) need not load the judge's stack
        from etclib.judge.parse import SUPPORTED
        from etclib.judge.runner import Judge, JudgeSettings, judge_items, run_sync

        settings = JudgeSettings.resolve(ctx.get)

        async def run():
            async with Judge(settings) as judge:
                batch = None
                if settings.batch:  # the uncached questions through the batch interface first
                    from etclib.judge.batch import prefill

                    batch = await prefill(judge, predictions, references)
                results = await judge_items(judge, predictions, references)
                return results, judge.usage, batch

        results, usage, batch = run_sync(run)
        n = len(results)
        arrays = {
            k: np.full(n, np.nan) for k in ("precision", "recall", "f1", "units", "ref_units")
        }
        for i, res in enumerate(results):
            if res.error is not None:
                continue
            arrays["units"][i] = len(res.units)
            arrays["ref_units"][i] = len(res.ref_units)
            p, r, f = item_prf(
                len(res.units),
                sum(label == SUPPORTED for label in res.unit_labels),
                len(res.ref_units),
                sum(label == SUPPORTED for label in res.ref_unit_labels),
            )
            arrays["precision"][i], arrays["recall"][i], arrays["f1"][i] = p, r, f
        extra = {
            "judge_errors": sum(res.error is not None for res in results),
            "judge_usage": usage.report(settings.model),
            "judge_model_versions": sorted(usage.model_versions),
            "judge_run": settings.record(),
        }
        if batch is not None:
            extra["judge_batch"] = batch.as_dict()
        return MetricData(arrays, details=[res.as_dict() for res in results], extra=extra)

    def aggregate(self, data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
        """precision, recall, f1 (x100, means over included items), unit counts, n_judged."""
        a = data.arrays
        units = a["units"] if idx is None else a["units"][idx]
        ref_units = a["ref_units"] if idx is None else a["ref_units"][idx]
        known = ~np.isnan(units) & ~np.isnan(ref_units)
        units_mean, units_sd = _mean_sd(units[known])
        ref_mean, ref_sd = _mean_sd(ref_units[known])
        f1 = a["f1"] if idx is None else a["f1"][idx]
        return {
            **super().aggregate(data, idx),
            "units_mean": units_mean,
            "units_sd": units_sd,
            "ref_units_mean": ref_mean,
            "ref_units_sd": ref_sd,
            "n_judged": float(np.count_nonzero(~np.isnan(f1))),
        }

    def item_scores(self, data: MetricData, i: int) -> dict:
        """One item: precision / recall / f1 x100 (None when excluded), unit counts
        (``n_units``, ``n_ref_units``) and ``judge_error`` when the item failed."""

        def count(key: str) -> int | None:
            v = float(data.arrays[key][i])
            return None if math.isnan(v) else int(v)

        out = super().item_scores(data, i)
        # counts as n_units / n_ref_units: "units" / "ref_units" are the unit lists in details
        out["n_units"] = count("units")
        out["n_ref_units"] = count("ref_units")
        if data.details is not None and data.details[i].get("error"):
            out["judge_error"] = data.details[i]["error"]
        return out

    def failures(self, data: MetricData, keys: Sequence[Any] | None = None) -> list[str]:
        """One line per failed item, in item order: ``dialogue 945 turn 3 listener: <reason>``
        (``item 17: <reason>`` without ``keys``)."""
        return [
            f"{_item_name(keys, i)}: {detail['error']}"
            for i, detail in enumerate(data.details or [])
            if detail.get("error")
        ]

    def incomplete(
        self, data: MetricData, keys: Sequence[Any] | None = None, shown: int = 1
    ) -> str | None:
        """``judge incomplete: K of N items failed (first reason: ...)`` when an item's judge
        requests failed, else None; ``shown`` reasons are quoted (the first ones)."""
        failed = self.failures(data, keys)
        if not failed:
            return None
        n = len(data.details or [])
        head = "; ".join(failed[:shown])
        label = "first reason" if shown == 1 else f"first {min(shown, len(failed))} reasons"
        more = f"; {len(failed) - shown} more" if len(failed) > shown > 1 else ""
        return f"judge incomplete: {len(failed)} of {n} items failed ({label}: {head}{more})"


METRIC = JudgeMetric()
