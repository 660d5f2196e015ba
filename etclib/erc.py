"""The ERC track beyond scoring: the human ceiling, categories for a chat, the classifier's
confusion against the annotators.

- :func:`human_ceiling`: every ERC metric for each annotator against the majority of the other
  two (a category is the others' when **both** chose it, neutral alone when none is: the
  yardstick of the Judge-vs-Human page, :func:`etclib.labeljudge.pair_consensus`), and their
  mean, the board's reference row "a person";
- :func:`chat_categories`: the categories an ERC backend predicts for the last utterance of a
  free conversation (the chat page shows them under each utterance);
- :func:`classifier_confusion`: how the transcription classifier of the ``category`` metric
  reads the reference transcriptions, against the annotators' aggregated labels (the corpus
  statistics page).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .categories import LabelSet, from_indicator, indicator
from .corpus import CATEGORIES, Corpus
from .metrics import erc as erc_metric
from .task import items as split_items

#: the name of the reference row on the categories board
PERSON = "a person"


def annotator_sets(corpus: Corpus, split: str = "test") -> list[tuple[list, list]]:
    """For each annotator: (their label sets, the other two's majority label sets), in item
    order."""
    from .labeljudge import ANNOTATORS, pair_consensus

    utterances = [_utterance(corpus, it.key) for it in split_items(corpus, split)]
    votes = np.stack([indicator(u.annotations) for u in utterances])  # items x raters x cats
    if votes.shape[1] != ANNOTATORS:
        raise ValueError(f"expected {ANNOTATORS} annotators, found {votes.shape[1]}")
    out = []
    for i, others in enumerate(pair_consensus(votes)):
        own = [from_indicator(row) for row in votes[:, i, :]]
        out.append((own, [from_indicator(row) for row in others]))
    return out


def _utterance(corpus: Corpus, key):
    d = corpus.by_id[key[0]]
    return next(u for u in d.utterances if u.key == key)


def human_ceiling(corpus: Corpus, split: str = "test") -> pd.DataFrame:
    """One row per annotator (``annotator`` 1..3) and the row ``a person`` (their mean): every
    ERC metric key (×100) of that annotator against the other two's majority."""
    rows: list[dict[str, Any]] = []
    for i, (own, others) in enumerate(annotator_sets(corpus, split)):
        rows.append({"annotator": str(i + 1), **erc_metric.score(own, others)})
    frame = pd.DataFrame(rows)
    mean = frame.drop(columns="annotator").mean(numeric_only=True)
    person = {"annotator": PERSON, **{k: float(v) for k, v in mean.items()}}
    return pd.concat([frame, pd.DataFrame([person])], ignore_index=True)


def chat_categories(
    lines: list[tuple[str, str]], backend: str = "tfidf", corpus: Corpus | None = None, **options
) -> LabelSet:
    """The categories ERC backend ``backend`` predicts for the last utterance of ``lines``
    (``[("A", "..."), ("B", "...")]``, as :func:`etclib.task.chat_item` takes them)."""
    from .backends import get_backend, options_of
    from .task import chat_item

    if corpus is not None and "corpus" in options_of(backend, "erc"):
        options["corpus"] = corpus
    model = get_backend(backend, track="erc", **options)
    return model.predict([chat_item(lines)])[0]


def classifier_confusion(corpus: Corpus, split: str = "test") -> pd.DataFrame:
    """Items counted by aggregated category (rows, "annotators") and by the category the
    transcription classifier reads in the reference transcription (columns, "classifier"),
    multi-label: an item counts once in every (row, column) pair of its two label sets, as
    the Judge-vs-Human page's confusion does."""
    from .classifier import cached

    its = split_items(corpus, split)
    read = cached(corpus, "transcription").predict_texts([it.reference for it in its])
    counts = np.zeros((len(CATEGORIES), len(CATEGORIES)), dtype=int)
    index = {c: j for j, c in enumerate(CATEGORIES)}
    for it, got in zip(its, read, strict=True):
        for h in it.label:
            for g in got:
                counts[index[h], index[g]] += 1
    return pd.DataFrame(
        counts,
        index=pd.Index(CATEGORIES, name="annotators"),
        columns=pd.Index(CATEGORIES, name="classifier"),
    )
