"""The categories track's scores: multi-label emotion categories against the aggregated label (×100).

Every F1 is scikit-learn's on the items x 7 multilabel indicator matrices, never on one label
per item; a category with no gold and no predicted label is n/a and left out of the macro
average. docs/leaderboard.md ("The categories track's measures") defines each measure. All are
functions of per-item counts that add up, so any subset and every bootstrap resample is scored
from summed statistics (:func:`from_statistics`).
"""

from __future__ import annotations

import numpy as np

from etclib.data.corpus import CATEGORIES
from etclib.metrics import Context, Fact, Metric, MetricData
from etclib.tracks.categories.labels import LABEL_SET_VERSION, indicator

N = len(CATEGORIES)
#: the six non-neutral categories' columns (micro_f1_no_neutral)
EMOTIONS = np.array([j for j, c in enumerate(CATEGORIES) if c != "neutral"])

# statistics columns: tp[7] fp[7] fn[7] exact agree single[7] single_hit[7] one
_TP, _FP, _FN = slice(0, N), slice(N, 2 * N), slice(2 * N, 3 * N)
_EXACT, _AGREE = 3 * N, 3 * N + 1
_SINGLE, _HIT = slice(3 * N + 2, 4 * N + 2), slice(4 * N + 2, 5 * N + 2)
_ONE = 5 * N + 2


def _ratio(num: np.ndarray, den: np.ndarray, empty: float = 0.0) -> np.ndarray:
    """``num / den``, ``empty`` where ``den`` is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), empty)


class ERC(Metric):
    FAMILY = "classification"
    TRACK = "erc"
    FACTS = (
        Fact("macro_f1", "Macro-F1", "mean over the seven categories of each category's F1"),
        Fact("micro_f1", "Micro-F1", "F1 of every (item, category) decision pooled"),
        Fact(
            "weighted_f1",
            "Weighted F1",
            "per-category F1 averaged with each category's gold support as weight (MELD/IEMOCAP "
            "papers: DialogueRNN, COSMIC)",
        ),
        Fact(
            "micro_f1_no_neutral",
            "Micro-F1 w/o neutral",
            "F1 of the (item, category) decisions of the six non-neutral categories pooled "
            "(DailyDialog papers)",
            summary=False,
        ),
        Fact(
            "exact_match", "Exact match", "share of items whose predicted set is the label exactly"
        ),
        Fact("hamming", "Hamming acc.", "share of the items × 7 category decisions that agree"),
        Fact(
            "wa",
            "WA",
            "EmotionLines' weighted accuracy on single-label items (plain accuracy on them)",
            summary=False,
        ),
        Fact(
            "uwa",
            "UWA",
            "EmotionLines' unweighted accuracy: mean over categories of the accuracy on "
            "single-label items",
            summary=False,
        ),
        *(
            Fact(
                f"{what}_{c}",
                f"{label} {c}",
                f"{label.lower()} of the category {c} over items",
                ranking=False,
                board=False,
                summary=False,
            )
            for c in CATEGORIES
            for what, label in (("precision", "Precision"), ("recall", "Recall"), ("f1", "F1"))
        ),
    )

    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        return {
            "erc": f"labels:{LABEL_SET_VERSION}|categories:{N}|zero_division:0"
            "|absent-category:n/a|wa-uwa:single-label-items,exact-set"
        }

    def compute(self, predictions: list, references: list, ctx: Context) -> MetricData:
        """``predictions`` and ``references``: one label set (tuple of category keys) per item."""
        pred = indicator(predictions)
        gold = indicator(references)
        return MetricData({"pred": pred.astype(np.uint8), "gold": gold.astype(np.uint8)})

    def statistics(self, data: MetricData) -> np.ndarray:
        pred = data.arrays["pred"].astype(bool)
        gold = data.arrays["gold"].astype(bool)
        single = gold & (gold.sum(axis=1) == 1)[:, None]
        exact = (pred == gold).all(axis=1)
        cols = [
            pred & gold,
            pred & ~gold,
            ~pred & gold,
            exact[:, None],
            (pred == gold).sum(axis=1)[:, None],
            single,
            single & exact[:, None],
            np.ones((len(pred), 1), dtype=bool),
        ]
        return np.hstack([c.astype(float) for c in cols]).reshape(len(pred), 5 * N + 3)

    def from_statistics(self, sums: np.ndarray, everything: bool = False) -> dict[str, np.ndarray]:
        """Every ranking key (and with ``everything``, the per-category ones) from summed
        statistics, one row per resample; ×100. A category with no gold and no predicted label
        (tp = fp = fn = 0) is n/a (NaN) and left out of the macro average."""
        s = np.atleast_2d(np.asarray(sums, dtype=float))
        tp, fp, fn = s[:, _TP], s[:, _FP], s[:, _FN]
        present = (tp + fp + fn) > 0
        f1 = _ratio(2 * tp, 2 * tp + fp + fn, np.nan)  # NaN exactly for the absent categories
        support = tp + fn
        ttp, tfp, tfn = tp.sum(axis=1), fp.sum(axis=1), fn.sum(axis=1)
        e = EMOTIONS
        etp, efp, efn = tp[:, e].sum(axis=1), fp[:, e].sum(axis=1), fn[:, e].sum(axis=1)
        n = s[:, _ONE]
        single, hit = s[:, _SINGLE], s[:, _HIT]
        per_cat = _ratio(hit, single)
        has_single = single > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            uwa = np.where(
                has_single.any(axis=1),
                (per_cat * has_single).sum(axis=1) / np.maximum(has_single.sum(axis=1), 1),
                np.nan,
            )
            wa = _ratio(hit.sum(axis=1), single.sum(axis=1), np.nan)
            macro = np.where(
                present.any(axis=1),
                np.where(present, f1, 0.0).sum(axis=1) / np.maximum(present.sum(axis=1), 1),
                np.nan,
            )
            weighted = _ratio(
                (support * np.where(present, f1, 0.0)).sum(axis=1), support.sum(axis=1), np.nan
            )
            out = {
                "macro_f1": macro * 100,
                "micro_f1": _ratio(2 * ttp, 2 * ttp + tfp + tfn) * 100,
                "weighted_f1": weighted * 100,
                "micro_f1_no_neutral": _ratio(2 * etp, 2 * etp + efp + efn, np.nan) * 100,
                "exact_match": _ratio(s[:, _EXACT], n, np.nan) * 100,
                "hamming": _ratio(s[:, _AGREE], n * N, np.nan) * 100,
                "wa": wa * 100,
                "uwa": uwa * 100,
            }
        if everything:
            precision = np.where(present, _ratio(tp, tp + fp), np.nan)
            recall = np.where(present, _ratio(tp, tp + fn), np.nan)
            for j, c in enumerate(CATEGORIES):
                out[f"precision_{c}"] = precision[:, j] * 100
                out[f"recall_{c}"] = recall[:, j] * 100
                out[f"f1_{c}"] = f1[:, j] * 100
        return out

    def aggregate(self, data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
        stats = self.statistics(data)
        sub = stats if idx is None else stats[idx]
        if len(sub) == 0:
            return {k: float("nan") for k in self.KEYS}
        got = self.from_statistics(sub.sum(axis=0), everything=True)
        return {k: float(got[k][0]) for k in self.KEYS}

    def undefined(self, data: MetricData) -> dict[str, str]:
        """The per-category keys that have no value on ``data``'s items, and why (the scores
        hold 0 there, by the ``zero_division`` convention of the signature)."""
        sums = self.statistics(data).sum(axis=0)
        tp, fp, fn = sums[_TP], sums[_FP], sums[_FN]
        out = {}
        for j, c in enumerate(CATEGORIES):
            if tp[j] + fp[j] == 0:
                out[f"precision_{c}"] = f"never predicts {c}"
            if tp[j] + fn[j] == 0:
                out[f"recall_{c}"] = f"no item is labelled {c}"
        return out

    def item_scores(self, data: MetricData, i: int) -> dict[str, float]:
        pred = data.arrays["pred"][i].astype(bool)
        gold = data.arrays["gold"][i].astype(bool)
        return {
            "exact_match": 100.0 if (pred == gold).all() else 0.0,
            "hamming": round(float((pred == gold).mean()) * 100, 4),
        }


METRIC = ERC()
