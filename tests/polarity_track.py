"""A track from outside etclib: the polarity of each item (positive, negative or neutral),
scored against a polarity derived from the corpus's aggregated categories.

This module is the whole plugin: the track (:class:`Polarity`: its field, reader, reference,
backends, baselines and floor), its metric (:class:`PolarityAccuracy`, the group "polarity")
and its one backend (:class:`AlwaysNeutral`). :func:`register` adds them; nothing else in the
repository names the track.
"""

from __future__ import annotations

import numpy as np

from etclib import metrics, tracks
from etclib.metrics import Context, Fact, MeanMetric, MetricData
from etclib.models import Backend

POLARITIES = ("positive", "negative", "neutral")
NEGATIVE = {"sadness", "fear", "anger", "disgust"}


def polarity(label: tuple[str, ...]) -> str:
    """An aggregated label's polarity: joy without a negative category is positive, a negative
    category without joy negative, anything else (neutral, surprise, a mix) neutral."""
    joy, negative = "joy" in label, bool(NEGATIVE & set(label))
    return "positive" if joy and not negative else "negative" if negative and not joy else "neutral"


class Polarity(tracks.Track):
    name = "polarity"
    title = "polarity"
    description = "whether each utterance's feeling is positive, negative or neutral"
    field = "polarity"
    example = "positive"
    help = "positive, negative or neutral."
    default_metrics = ("polarity",)
    rank_order = ("polarity_accuracy",)
    backends = {"always-neutral": f"{__name__}:AlwaysNeutral"}
    default_backend = "always-neutral"
    baselines = {"always-neutral": "Always neutral (polarity)"}
    floors = {"always-neutral": "neutral for every item"}
    flag_floor = "always-neutral"

    def parse(self, value, cell=False):
        if value not in POLARITIES:
            raise ValueError(f"'polarity' must be one of {', '.join(POLARITIES)}, found {value!r}.")
        return value

    def reference_of(self, item):
        return polarity(item.label)


class AlwaysNeutral(Backend):
    name = "always-neutral"
    description = "Neutral for every item."
    in_chat = False

    def answer(self, item, shots=()):
        return "neutral"


class PolarityAccuracy(MeanMetric):
    """The metric group "polarity"."""

    TRACK = Polarity.name
    FACTS = (
        Fact("polarity_accuracy", "Polarity accuracy", "share of items with the right polarity"),
    )

    def signature(self, ctx=None, data=None) -> dict[str, str]:
        return {"polarity": "accuracy|joy+,negative-|v1"}

    def compute(self, predictions, references, ctx: Context) -> MetricData:
        right = [p == r for p, r in zip(predictions, references, strict=True)]
        return MetricData({"polarity_accuracy": np.array(right, dtype=float)})


METRIC = PolarityAccuracy()


TRACK_OBJECT = Polarity()


def register() -> None:
    tracks.register(TRACK_OBJECT)
    metrics.register("polarity", __name__)


def unregister() -> None:
    metrics.unregister("polarity")
    tracks.unregister(Polarity.name)
