"""``prior`` (ERC): a label set drawn from the train split's distribution of label sets.

Each item's draw is seeded by the ``seed`` option and the item's key, so a file is reproducible
and does not depend on the order of items (scikit-learn's ``DummyClassifier(strategy=
"stratified")``, per item). It knows the label frequencies and nothing of the dialogue.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from etclib.data.corpus import Corpus
from etclib.data.task import Item
from etclib.data.task import items as split_items
from etclib.models.retrieval import corpus_availability, load_corpus_option
from etclib.tracks.categories.backends import CategoryBackend


class PriorBackend(CategoryBackend):
    """A label set drawn from the train distribution, seeded per item."""

    name = "prior"
    description = "A label set drawn from the train split's label distribution (seeded per item)."

    def __init__(
        self, corpus: Corpus | None = None, data: str | None = None, seed: int = 0
    ) -> None:
        self.corpus = load_corpus_option(corpus, data)
        self.seed = int(seed)
        counts = Counter(it.label for it in split_items(self.corpus, "train"))
        ordered = sorted(counts, key=lambda s: (-counts[s], s))
        self.sets = ordered or [("neutral",)]
        total = sum(counts.values()) or 1
        self.cumulative = np.cumsum([counts[s] / total for s in ordered] or [1.0])

    availability = staticmethod(corpus_availability)

    def answer(self, item: Item, shots: Sequence[Item] = ()) -> tuple[str, ...]:
        text = f"{self.seed}:{item.dialogue_id}:{item.turn}:{item.role}"
        u = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64
        j = int(np.searchsorted(self.cumulative, u, side="right"))
        return self.sets[min(j, len(self.sets) - 1)]

    def signature(self) -> dict[str, Any]:
        return {"backend": self.name, "seed": self.seed, "train": self.corpus.content_hash[:12]}


BACKEND = PriorBackend
