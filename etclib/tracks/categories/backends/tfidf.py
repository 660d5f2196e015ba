"""``tfidf`` (ERC): MeCab TF-IDF of the dialogue prefix + one-vs-rest logistic regression.

The classifier of :mod:`etclib.tracks.categories.classifier` with input ``"dialogue"`` (the target utterance, the
two before it and the role), trained on the train split and tuned on the valid split, in
seconds on a CPU; saved with its version and data hash and reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from etclib.data.corpus import Corpus
from etclib.data.task import Item
from etclib.models.base import Progress, Shots
from etclib.models.retrieval import corpus_availability, load_corpus_option
from etclib.tracks.categories import classifier
from etclib.tracks.categories.backends import CategoryBackend


class TfidfBackend(CategoryBackend):
    """Trained TF-IDF + logistic regression over the dialogue prefix (CPU, seconds)."""

    name = "tfidf"
    description = "TF-IDF (MeCab tokens) + one-vs-rest logistic regression on the dialogue prefix."
    in_chat = True  # reads the dialogue: the chat shows its categories

    def __init__(self, corpus: Corpus | None = None, data: str | None = None) -> None:
        self.corpus = load_corpus_option(corpus, data)
        self.model = classifier.cached(self.corpus, "dialogue")

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        missing = classifier.sklearn_missing()
        if missing:
            return False, missing
        return corpus_availability()

    def predict(
        self, items: Sequence[Item], progress: Progress | None = None, shots: Shots | None = None
    ) -> list[tuple[str, ...]]:
        out = self.model.predict_items(items)
        if progress and items:
            progress(len(items))
        return out

    def signature(self) -> dict[str, Any]:
        return {"backend": self.name, "classifier": self.model.signature}


BACKEND = TfidfBackend
