"""Category agreement of transcriptions: does a predicted transcription express the reference's
emotion categories? (×100; offline, no API key, seconds.)

The classifier of :mod:`etclib.tracks.categories.classifier` (input ``"transcription"``) reads
each predicted transcription; ``category_f1`` is the ERC ``macro_f1`` between its categories and
the item's aggregated label. Its own valid-split macro-F1 (on the references), reported as
``category_classifier_valid_f1``, is roughly the ceiling.
"""

from __future__ import annotations

import numpy as np

from etclib.core.errors import MetricError
from etclib.data.corpus import load_corpus
from etclib.metrics import Context, Fact, Metric, MetricData
from etclib.tracks.categories import classifier
from etclib.tracks.categories import metric as erc


def _model(ctx: Context | None) -> classifier.Classifier:
    corpus = (ctx.corpus if ctx is not None else None) or load_corpus()
    return classifier.cached(corpus, "transcription")


class Category(Metric):
    FAMILY = "classification"
    TOKENS = True
    FACTS = (
        Fact(
            "category_f1",
            "Category F1",
            "macro-F1 over the seven categories between what a trained classifier reads in each "
            "predicted transcription and the item's aggregated label",
        ),
    )

    def warm(self, ctx: Context) -> None:
        """The corpus and its classifier (read from the cache, else trained) and scikit-learn,
        loaded; one text classified."""
        _model(ctx).predict_texts(["準備"], ctx.tokens)

    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        if data is not None and "classifier" in data.extra:
            sig = data.extra["classifier"]
        else:
            sig = _model(ctx).signature
        return {"category": f"{sig}|macro-f1:7-categories|zero_division:0|absent-category:n/a"}

    def compute(self, predictions: list[str], references: list, ctx: Context) -> MetricData:
        """``ctx.labels``: the items' aggregated labels (etclib.tracks.scoring.score sets them)."""
        if ctx.labels is None or len(ctx.labels) != len(predictions):
            raise MetricError(
                "The category metric needs each item's aggregated label (Context.labels); score "
                "through etclib.score, or call score(predictions, labels)."
            )
        model = _model(ctx)
        assigned = model.predict_texts(predictions, ctx.tokens)
        data = erc.METRIC.compute(assigned, ctx.labels, ctx)
        data.details = [{"categories": list(a)} for a in assigned]
        data.extra = {
            "classifier": model.signature,
            "category_classifier_valid_f1": model.valid.get("macro_f1", float("nan")),
        }
        return data

    def statistics(self, data: MetricData) -> np.ndarray:
        return erc.METRIC.statistics(data)

    def from_statistics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        return {"category_f1": erc.METRIC.from_statistics(sums)["macro_f1"]}

    def aggregate(self, data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
        return {"category_f1": erc.METRIC.aggregate(data, idx)["macro_f1"]}

    def item_scores(self, data: MetricData, i: int) -> dict[str, float]:
        return {"category_exact": erc.METRIC.item_scores(data, i)["exact_match"]}

    def score(self, predictions: list[str], labels: list, **options) -> dict[str, float]:
        """``labels``: the aggregated label of each item (tuples of category keys)."""
        return self.aggregate(
            self.compute(predictions, labels, Context(options, labels=list(labels)))
        )


METRIC = Category()
