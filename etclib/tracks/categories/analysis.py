"""The categories track beyond scoring: the human reference row "a person"
(:func:`human_ceiling`), categories for a chat (:func:`chat_categories`), and how the
transcription classifier reads the references (:func:`classifier_confusion`,
:func:`classifier_per_category`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from etclib.data.corpus import CATEGORIES, Corpus
from etclib.data.task import items as split_items
from etclib.tracks.categories import metric as erc_metric
from etclib.tracks.categories import metric_loo as erc_loo
from etclib.tracks.categories.labels import LabelSet, from_indicator, indicator

#: the name of the reference row on the categories board
PERSON = "a person"


def annotator_sets(corpus: Corpus, split: str = "test") -> list[tuple[list, list]]:
    """For each annotator: (their label sets, the other two's majority label sets), in item
    order."""
    from etclib.tracks.categories.labels import ANNOTATORS, pair_consensus

    by_key = {u.key: u for d in corpus.split(split) for u in d.utterances}  # this split only
    utterances = [by_key[it.key] for it in split_items(corpus, split)]
    votes = np.stack([indicator(u.annotations) for u in utterances])  # items x raters x cats
    if votes.shape[1] != ANNOTATORS:
        raise ValueError(f"expected {ANNOTATORS} annotators, found {votes.shape[1]}")
    out = []
    for i, others in enumerate(pair_consensus(votes)):
        own = [from_indicator(row) for row in votes[:, i, :]]
        out.append((own, [from_indicator(row) for row in others]))
    return out


def human_ceiling(corpus: Corpus, split: str = "test") -> pd.DataFrame:
    """One row per annotator (1..3) and the row ``a person`` (their mean): every ERC key of that
    annotator against the other two's majority, also under the like-for-like keys ``loo_*``
    (a person's reference *is* the leave-one-annotator-out one)."""
    rows: list[dict[str, Any]] = []
    for i, (own, others) in enumerate(annotator_sets(corpus, split)):
        got = erc_metric.METRIC.score(own, others)
        loo = {erc_loo.PREFIX + k: got[k] for k in erc_loo.MEASURES}
        rows.append({"annotator": str(i + 1), **got, **loo})
    frame = pd.DataFrame(rows)
    mean = frame.drop(columns="annotator").mean(numeric_only=True)
    person = {"annotator": PERSON, **{k: float(v) for k, v in mean.items()}}
    return pd.concat([frame, pd.DataFrame([person])], ignore_index=True)


def chat_categories(
    lines: list[tuple[str, str]],
    backend: Any = "tfidf",
    corpus: Corpus | None = None,
    **options,
) -> LabelSet:
    """The categories ERC backend ``backend`` (a name, created here with ``options``, or a
    backend already created) predicts for the last utterance of ``lines``
    (:func:`etclib.data.task.chat_item`)."""
    from etclib.data.task import chat_item

    if isinstance(backend, str):
        from etclib.models import options_of
        from etclib.tracks.categories import TRACK

        if corpus is not None and "corpus" in options_of(backend, TRACK.backends):
            options["corpus"] = corpus
        model = TRACK.backend(backend, **options)
    else:
        model = backend
    return model.predict([chat_item(lines)])[0]


def classifier_confusion(corpus: Corpus, split: str = "test") -> pd.DataFrame:
    """Items counted by aggregated category (rows) and the category the classifier reads in
    the reference (columns); an item counts once in every (row, column) pair of its sets."""
    gold, read = _classifier_reads(corpus, split)
    counts = np.zeros((len(CATEGORIES), len(CATEGORIES)), dtype=int)
    index = {c: j for j, c in enumerate(CATEGORIES)}
    for labels, got in zip(gold, read, strict=True):
        for h in labels:
            for g in got:
                counts[index[h], index[g]] += 1
    return pd.DataFrame(
        counts,
        index=pd.Index(CATEGORIES, name="annotators"),
        columns=pd.Index(CATEGORIES, name="classifier"),
    )


def _classifier_reads(corpus: Corpus, split: str) -> tuple[list[LabelSet], list[LabelSet]]:
    """The split's aggregated label sets and the transcription classifier's reading of each
    reference transcription, in item order."""
    from etclib.tracks.categories.classifier import cached

    its = split_items(corpus, split)
    read = cached(corpus, "transcription").predict_texts([it.reference for it in its])
    return [tuple(it.label) for it in its], list(read)


def classifier_per_category(corpus: Corpus, split: str = "test") -> pd.DataFrame:
    """One row per category: the classifier's 2x2 confusion against the aggregated label
    (``tp``, ``fp``, ``fn``, ``tn``), ``precision``, ``recall`` and ``f1`` (×100, 0 where
    undefined) and ``support``."""
    gold, read = _classifier_reads(corpus, split)  # says what to install without scikit-learn
    from sklearn.metrics import multilabel_confusion_matrix

    matrices = multilabel_confusion_matrix(indicator(gold), indicator(read))
    rows = []
    for c, m in zip(CATEGORIES, matrices, strict=True):
        tn, fp, fn, tp = (int(v) for v in m.ravel())
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        scores = {"precision": 100 * p, "recall": 100 * r, "f1": 100 * f, "support": tp + fn}
        rows.append({"category": c, "tp": tp, "fp": fp, "fn": fn, "tn": tn, **scores})
    return pd.DataFrame(rows)


def classifier_summary(corpus: Corpus) -> dict[str, Any]:
    """The transcription classifier's signature and valid-split scores (the corpus page)."""
    from etclib.tracks.categories.classifier import cached, describe

    return describe(cached(corpus, "transcription"))
