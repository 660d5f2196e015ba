"""``retrieval-labels`` (ERC): the aggregated labels of the most similar train utterances.

The ``retrieval`` backend's neighbours (same role; utterance, context and turn similarity; exact
matches when there are any) vote: a category is predicted when neighbours holding at least half
of the candidates' weight have it in their aggregated label; neutral alone when none is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from etclib.data.corpus import Corpus
from etclib.data.task import Item
from etclib.data.task import items as split_items
from etclib.models.retrieval import RetrievalBackend, corpus_availability, load_corpus_option
from etclib.tracks.categories.backends import CategoryBackend
from etclib.tracks.categories.labels import from_indicator, indicator


class RetrievalLabelsBackend(CategoryBackend):
    """A weighted vote of the nearest train items' labels."""

    name = "retrieval-labels"
    description = "Weighted vote of the labels of the most similar train utterances (CPU)."

    def __init__(
        self, corpus: Corpus | None = None, data: str | None = None, neighbours: int = 20
    ) -> None:
        self.corpus = load_corpus_option(corpus, data)
        self.retrieval = RetrievalBackend(corpus=self.corpus, neighbours=neighbours)
        by_key = {it.key: it.label for it in split_items(self.corpus, "train")}
        self.labels = indicator([by_key[k] for k in self.retrieval.index.keys]).astype(float)

    availability = staticmethod(corpus_availability)

    def predict(self, items, progress=None, shots=None):
        with self.retrieval.batch(items):
            return super().predict(items, progress, shots)

    def answer(self, item: Item, shots: Sequence[Item] = ()) -> tuple[str, ...]:
        idx, weights = self.retrieval.candidates(item)
        w = weights if weights.sum() > 0 else np.ones(len(idx))
        share = (w @ self.labels[idx]) / w.sum()
        return from_indicator(share >= 0.5)

    def signature(self) -> dict[str, Any]:
        sig = self.retrieval.signature()
        sig["backend"] = self.name
        sig["vote"] = "weighted>=0.5"
        return sig


BACKEND = RetrievalLabelsBackend
