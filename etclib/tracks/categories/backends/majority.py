"""``majority`` (ERC): every item gets the train split's most frequent label set (neutral)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from etclib.data.corpus import Corpus
from etclib.data.task import Item
from etclib.data.task import items as split_items
from etclib.models.retrieval import corpus_availability, load_corpus_option
from etclib.tracks.categories.backends import CategoryBackend


def majority_label(corpus: Corpus) -> tuple[str, ...]:
    """The most frequent aggregated label set of the train split (ties: the first seen)."""
    counts = Counter(it.label for it in split_items(corpus, "train"))
    return counts.most_common(1)[0][0] if counts else ("neutral",)


class MajorityBackend(CategoryBackend):
    """The train split's most frequent label set for every item (a sanity baseline)."""

    name = "majority"
    description = "The train split's most frequent label set (neutral) for every item."

    def __init__(self, corpus: Corpus | None = None, data: str | None = None) -> None:
        self.corpus = load_corpus_option(corpus, data)
        self.label = majority_label(self.corpus)

    availability = staticmethod(corpus_availability)

    def answer(self, item: Item, shots: Sequence[Item] = ()) -> tuple[str, ...]:
        return self.label

    def signature(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "label": list(self.label),
            "train": self.corpus.content_hash[:12],
        }


BACKEND = MajorityBackend
