"""Emotion-category label sets: the categories track's prediction, read, checked and written.

Rules, as the aggregated label has them: known names only (English keys or the corpus's
Japanese names), each at most once, ``neutral`` alone or not at all, never empty. A checked set
is a tuple of keys in :data:`CATEGORIES` order.

>>> parse_label_set(["驚き", "joy"])
('joy', 'surprise')
>>> format_label_set(("joy", "surprise"))
'joy;surprise'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from etclib.core import registry
from etclib.core.errors import JudgeError
from etclib.data.corpus import CATEGORIES, CATEGORY_TO_JA, JA_TO_CATEGORY

#: The separator of label names in a CSV cell.
CSV_SEPARATOR = ";"
#: Version of the label set and its rules (part of the ERC track's signature).
LABEL_SET_VERSION = "etc-7cat-v1"

LabelSet = tuple[str, ...]


class LabelSetError(ValueError):
    """A label set that breaks a rule; the message says which and what to write instead."""


def _key(name: str) -> str | None:
    text = name.strip()
    if text in JA_TO_CATEGORY:
        return JA_TO_CATEGORY[text]
    low = text.lower()
    return low if low in CATEGORIES else None


def _suggest(name: str) -> str:
    names = list(CATEGORIES) + list(JA_TO_CATEGORY)
    return registry.suggest(name.strip().lower(), names, cutoff=0.5)


def parse_label_set(names: Sequence[object]) -> LabelSet:
    """Check a list of category names and return the keys in :data:`CATEGORIES` order;
    :class:`LabelSetError` says what is wrong."""
    if len(names) == 0:
        raise LabelSetError(
            'the label list is empty; give at least one category, or ["neutral"] when none applies.'
        )
    if len(names) > 2 * len(CATEGORIES):
        raise LabelSetError(
            f"the label list has {len(names):,} entries; there are only {len(CATEGORIES)} categories."
        )
    keys: list[str] = []
    for n in names:
        if not isinstance(n, str):
            raise LabelSetError(
                f"labels must be category names (strings), found {type(n).__name__}."
            )
        key = _key(n)
        if key is None:
            shown = n if len(n) <= 30 else n[:30] + "…"
            raise LabelSetError(
                f"unknown category {shown!r}.{_suggest(n)} Known: {', '.join(CATEGORIES)} "
                f"(or {', '.join(JA_TO_CATEGORY)})."
            )
        if key in keys:
            raise LabelSetError(f"the category {key!r} is named twice; name each category once.")
        keys.append(key)
    if "neutral" in keys and len(keys) > 1:
        raise LabelSetError(
            "'neutral' is combined with other categories; neutral means none of the others "
            "applies, so give it alone or drop it."
        )
    return tuple(c for c in CATEGORIES if c in keys)


def parse_csv_cell(cell: str) -> LabelSet:
    """A CSV ``labels`` cell: names separated by ``;`` (spaces around them ignored)."""
    parts = [p for p in (s.strip() for s in cell.split(CSV_SEPARATOR)) if p]
    return parse_label_set(parts)


def format_label_set(labels: Iterable[str]) -> str:
    """The CSV (and storage) form: keys joined by ``;``."""
    return CSV_SEPARATOR.join(labels)


def japanese(labels: Iterable[str]) -> str:
    """``喜び・驚き``: a label set as the corpus names it."""
    return "・".join(CATEGORY_TO_JA[c] for c in labels)


def indicator(label_sets: Sequence[Iterable[str]]) -> np.ndarray:
    """Items x 7 boolean matrix: column ``j`` is ``CATEGORIES[j]``."""
    index = {c: j for j, c in enumerate(CATEGORIES)}
    out = np.zeros((len(label_sets), len(CATEGORIES)), dtype=bool)
    for i, labels in enumerate(label_sets):
        for c in labels:
            out[i, index[c]] = True
    return out


def from_indicator(row: Sequence[bool]) -> LabelSet:
    """A boolean row back to a label set; an empty row (or neutral with others) is neutral
    alone, as in the aggregated label."""
    chosen = tuple(c for c, on in zip(CATEGORIES, row) if on and c != "neutral")
    return chosen or ("neutral",)


#: Annotators per utterance in the corpus.
ANNOTATORS = 3


def pair_consensus(votes: np.ndarray) -> list[np.ndarray]:
    """For annotator i: the other two's choices, a category counting only when both chose it
    (the human yardstick); ``votes``: items x annotators (x categories)."""
    others = [[j for j in range(ANNOTATORS) if j != i] for i in range(ANNOTATORS)]
    return [votes[:, a] & votes[:, b] for a, b in others]


def normalise(labels: Sequence[str]) -> tuple[str, ...]:
    """Category keys in CATEGORIES order; neutral only when nothing else is chosen."""
    chosen = {c for c in labels if c != "neutral"}
    return tuple(c for c in CATEGORIES if c in chosen) or ("neutral",)


def parse_labels(text: str) -> tuple[str, ...]:
    """The categories (Japanese or English keys) in a judge answer ``{"labels": [...]}``; an
    empty list means neutral; JudgeError for an unusable answer."""
    from etclib.llm.chat import answer_object  # the LLM stack only where an answer is read

    obj = answer_object(text, "The judge's answer")
    labels = obj.get("labels") if isinstance(obj, dict) else None
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise JudgeError(f'The judge\'s answer lacks a "labels" list of strings: {text[:80]!r}.')
    keys = []
    for x in labels:
        key = JA_TO_CATEGORY.get(x.strip(), x.strip().lower())
        if key not in CATEGORIES:
            raise JudgeError(
                f"The judge answered an unknown category {x!r}; expected one of "
                f"{', '.join(JA_TO_CATEGORY)}."
            )
        keys.append(key)
    return normalise(keys)
