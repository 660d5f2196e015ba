"""The categories track, like for like with the board's "a person" row (×100).

"a person" (:func:`.analysis.human_ceiling`) scores each annotator against the other two's
consensus, a stricter reference than the 2-of-3 label. Here a system gets the same references:
every measure of :mod:`.metric` against each leave-one-annotator-out reference, averaged.
"""

from __future__ import annotations

import warnings

import numpy as np

from etclib.core.errors import MetricError
from etclib.metrics import Context, Fact, Metric, MetricData
from etclib.tracks.categories import metric as erc_metric

#: the ERC measures scored against the leave-one-annotator-out references
MEASURES = tuple(
    "macro_f1 weighted_f1 micro_f1 micro_f1_no_neutral exact_match hamming wa uwa".split()
)
PREFIX = "loo_"
ANNOTATORS = 3


def _fact(key: str) -> Fact:
    base = next(f for f in erc_metric.ERC.FACTS if f.key == key)
    return Fact(
        PREFIX + key,
        f"{base.label} (vs 2 annotators)",
        f"{base.label} against each annotator-left-out pair's consensus (the references of "
        "'a person'), averaged over the three",
        ranking=False,
        board=True,
        summary=False,
    )


def references(corpus, keys) -> np.ndarray:
    """Items x 3 x 7 booleans: for annotator ``i``, the consensus of the other two (both chose
    the category; ``neutral`` alone when they share none), as label-set indicator rows."""
    from etclib.tracks.categories.labels import from_indicator, indicator, pair_consensus

    votes = []
    for d, t, r in keys:
        dialogue = corpus.by_id[d]
        u = next(u for u in dialogue.utterances if u.key == (d, t, r))
        if len(u.annotations) != ANNOTATORS:
            raise MetricError(
                f"Item {d}/{t}/{r} has {len(u.annotations)} annotators; the leave-one-out "
                f"references need {ANNOTATORS}."
            )
        votes.append(indicator(u.annotations))
    stacked = np.stack(votes) if votes else np.zeros((0, ANNOTATORS, len(erc_metric.CATEGORIES)))
    out = np.zeros(stacked.shape, dtype=bool)
    for i, others in enumerate(pair_consensus(stacked.astype(bool))):
        out[:, i, :] = indicator([from_indicator(row) for row in others])
    return out


class ERCLeaveOneOut(Metric):
    FAMILY = "classification"
    TRACK = "erc"
    FACTS = tuple(_fact(k) for k in MEASURES)

    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        return {
            "erc_loo": f"references:leave-one-annotator-out,both-of-two|annotators:{ANNOTATORS}"
        }

    def compute(self, predictions: list, references_: list, ctx: Context) -> MetricData:
        """``predictions``: one label set per item; the items' keys come from ``ctx.keys`` or
        the option ``keys``, their annotations from the corpus of ``ctx`` (or ``ETC_DATA_DIR``)."""
        from etclib.tracks.categories.labels import indicator

        keys = ctx.keys if ctx.keys is not None else ctx.get("keys")
        if keys is None or len(keys) != len(predictions):
            raise MetricError(
                "erc_loo needs the items' keys (dialogue_id, turn, role) to find their annotators; "
                "score through etclib.tracks.scoring.score, or pass keys=[...] in the item order."
            )
        corpus = ctx.corpus if ctx.corpus is not None else ctx.get("corpus")
        if corpus is None:
            from etclib.data.corpus import load_corpus

            corpus = load_corpus()
        return MetricData(
            {
                "pred": indicator(predictions).astype(np.uint8),
                "refs": references(corpus, [tuple(k) for k in keys]).astype(np.uint8),
            }
        )

    def aggregate(self, data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
        pred = data.arrays["pred"]
        refs = data.arrays["refs"]
        if idx is not None:
            pred, refs = pred[idx], refs[idx]
        if len(pred) == 0:
            return {k: float("nan") for k in self.KEYS}
        per_ref = []
        for i in range(refs.shape[1]):
            one = MetricData({"pred": pred, "gold": refs[:, i, :]})
            got = erc_metric.METRIC.from_statistics(erc_metric.METRIC.statistics(one).sum(axis=0))
            per_ref.append([float(got[k][0]) for k in MEASURES])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a measure n/a on every reference
            mean = np.nanmean(np.array(per_ref), axis=0)
        return {PREFIX + k: float(v) for k, v in zip(MEASURES, mean, strict=True)}


METRIC = ERCLeaveOneOut()
