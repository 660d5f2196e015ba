"""The categories track: emotion recognition in conversation (ERC) on the ETC items.

A prediction is a ``labels`` list of categories per item (:mod:`.labels`), scored against the
annotators' aggregated label (:mod:`.metric`) and, like for like with the board's "a person"
row (:mod:`.analysis`), against the leave-one-annotator-out references (:mod:`.metric_loo`).
Its backends are in :mod:`.backends`; :mod:`.classifier` is the TF-IDF classifier that the
``tfidf`` backend and the transcription track's ``category`` metric train.
"""

from __future__ import annotations

from typing import Any

from etclib.core.jsonl import shown
from etclib.tracks.base import Track
from etclib.tracks.categories.labels import (
    CSV_SEPARATOR,
    LABEL_SET_VERSION,
    LabelSetError,
    format_label_set,
    parse_csv_cell,
    parse_label_set,
)

_BACKENDS = "etclib.tracks.categories.backends."


class Categories(Track):
    name = "erc"
    title = "categories"
    description = (
        "the emotion categories of each utterance (ERC): the annotators' aggregated label, "
        "multi-label over seven categories"
    )
    heading = "Categories (ERC) track"
    field = "labels"
    example = ["joy", "surprise"]
    help = (
        "joy, sadness, fear, anger, surprise, disgust, or neutral alone (Japanese names 喜び… "
        "too); in CSV, a `labels` column with names joined by `;`."
    )
    reference = "label"
    version = f"labels:{LABEL_SET_VERSION}|aggregation:2-of-3,neutral-alone"
    default_metrics = ("erc", "erc_loo")
    rank_order = ("macro_f1",)
    backends = {
        "majority": _BACKENDS + "majority",
        "prior": _BACKENDS + "prior",
        "tfidf": _BACKENDS + "tfidf",
        "retrieval-labels": _BACKENDS + "retrieval",
        "llm": _BACKENDS + "llm",
    }
    default_backend = "tfidf"
    baselines = {
        "majority": "Majority label set (etclib)",
        "prior": "Label prior, seeded draw (etclib)",
        "tfidf": "TF-IDF + logistic regression (etclib)",
        "retrieval-labels": "Retrieval neighbours' labels (etclib)",
    }
    floors = {
        "majority": "the training set's most frequent label set (neutral) for every item",
        "prior": "a label set drawn from the training distribution, blind to the item",
    }
    flag_floor = "majority"
    noun = "label set"
    blank = ()
    reference_caption = (
        "Reference: each annotator scored against the majority of the other two, averaged over "
        "the three annotators (the Judge-vs-Human yardstick)."
    )
    like_for_like_caption = (
        'Like for like: "a person" is each annotator scored against the majority of the other '
        "two (a category counts when both chose it), averaged over the three annotators. Each "
        "entry here is scored against the same three leave-one-annotator-out references, "
        "averaged; the board's columns above score entries against the 2-of-3 label instead."
    )
    items_caption = (
        "Per-item examples: the predicted categories, the annotators' label and the item's scores."
    )

    def parse(self, value: Any, cell: bool = False) -> tuple[str, ...]:
        try:
            if cell:
                return parse_csv_cell(value)
            if not isinstance(value, (list, tuple)):
                raise LabelSetError(
                    f"'labels' must be a list of category names such as [\"joy\"], found "
                    f"{shown(value)}."
                )
            return parse_label_set(list(value))
        except (LabelSetError, TypeError, AttributeError) as exc:
            raise ValueError(f"labels: {exc}") from None

    # Stored in the CSV form, ``joy;surprise`` (the form boards have always held).
    def encode(self, value: Any) -> str:
        return format_label_set(value)

    def decode(self, stored: str | None) -> tuple[str, ...]:
        return tuple(p for p in (stored or "").split(CSV_SEPARATOR) if p)

    def shown(self, stored: str) -> str:
        labels = self.decode(stored)
        return "(" + ", ".join(labels) + ")" if labels else "(none)"

    def reference_rows(self, split: str) -> Any:
        """ "a person": each annotator against the majority of the other two, averaged
        (:func:`.analysis.human_ceiling`)."""
        from etclib.data.corpus import load_corpus
        from etclib.tracks.categories.analysis import PERSON, human_ceiling

        frame = human_ceiling(load_corpus(), split)
        person = frame[frame["annotator"] == PERSON]
        return person.rename(columns={"annotator": "name"}).assign(kind="reference")

    @property
    def like_for_like(self) -> dict[str, str]:  # type: ignore[override]
        from etclib.tracks.categories.metric_loo import MEASURES, PREFIX

        return {PREFIX + k: k for k in MEASURES}

    def compare_columns(self, a: Any, b: Any) -> dict[str, Any]:
        return {"labels_differ": set(a) != set(b)}


TRACK = Categories()
