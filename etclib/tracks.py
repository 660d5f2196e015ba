"""Leaderboard tracks: tasks on the same ETC items, each with its own predictions and metrics.

A track is data: its name, the field a predictions file holds per item and that field's kind
(its schema), what a prediction is compared with (the item's reference transcription, or its
aggregated label), the metric groups it is scored with by default and its ranking rule. A
metric module says which track it belongs to (``TRACK``; transcription when absent), so the
registry (:mod:`etclib.metrics`) lists each track's metrics; backends do the same.

- ``transcription``: the ETC task (SPEC): a ``prediction`` string per item.
- ``erc``: emotion recognition in conversation on the same items: a ``labels`` list of
  categories per item (:mod:`etclib.categories`), scored against the aggregated label.

Adding a track: one :class:`Track` in :data:`TRACKS`, its metric modules (``TRACK = name``) and,
if its field is of a new kind, that kind's reader in :mod:`etclib.predictions` and its stored
form in :data:`CODECS` (:meth:`Track.encode` / :meth:`Track.decode`, the one place a
prediction changes form between a validated file and the leaderboard's rows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import registry
from .categories import CSV_SEPARATOR, LABEL_SET_VERSION, format_label_set
from .errors import TaskError


def _text_decode(stored: str | None) -> str:
    return "" if stored is None else stored


def _labels_decode(stored: str | None) -> tuple[str, ...]:
    return tuple(p for p in (stored or "").split(CSV_SEPARATOR) if p)


#: a field kind -> (encode, decode): a validated prediction to the one text the leaderboard
#: stores per item, and back. Label sets are stored in their CSV form, ``joy;surprise`` (the
#: form boards have always held, so no stored row needs rewriting).
CODECS: dict[str, tuple[Any, Any]] = {
    "text": (str, _text_decode),
    "labels": (format_label_set, _labels_decode),
}


@dataclass(frozen=True)
class Track:
    """One leaderboard track."""

    name: str
    #: how selectors name its board, e.g. "transcriptions"
    title: str
    #: one line: the task
    description: str
    #: the predictions file's field per item
    field: str
    #: the field's kind: "text" (a string) or "labels" (a list of category names)
    kind: str
    #: what a prediction is scored against: an item attribute ("reference" or "label")
    reference: str
    #: metric groups scored when none are named
    default_metrics: tuple[str, ...]
    #: rank by the first of these keys that any entry has
    rank_order: tuple[str, ...]
    #: an example value of ``field`` (docs, the submit page)
    example: Any
    #: what its scores depend on besides the metrics (the signature's ``track`` entry)
    version: str = ""

    def reference_of(self, item: Any) -> Any:
        """What ``item``'s prediction is compared with."""
        return getattr(item, self.reference)

    def encode(self, value: Any) -> str:
        """A validated prediction (a string, or a label tuple) as stored: one text per item."""
        return CODECS[self.kind][0](value)

    def decode(self, stored: str | None) -> Any:
        """What :meth:`encode` stored, back as the prediction it was (no validation: a stored
        prediction was validated on its way in; the leaderboard checks a whole submission
        against its content hash instead)."""
        return CODECS[self.kind][1](stored)

    @property
    def signature(self) -> str:
        return f"{self.name}" + (f"|{self.version}" if self.version else "")

    def example_record(self) -> str:
        """One JSON Lines record of this track."""
        rec = {"dialogue_id": 945, "turn": 3, "role": "listener", self.field: self.example}
        return json.dumps(rec, ensure_ascii=False)


TRANSCRIPTION = Track(
    name="transcription",
    title="transcriptions",
    description="the emotion transcription the author of each utterance wrote (SPEC)",
    field="prediction",
    kind="text",
    reference="reference",
    default_metrics=("bleu", "rouge"),
    rank_order=("f1", "bertscore", "rougeL"),
    example="相手の話に共感して、嬉しい気持ちになった。",
)
ERC = Track(
    name="erc",
    title="categories",
    description=(
        "the emotion categories of each utterance (ERC): the annotators' aggregated label, "
        "multi-label over seven categories"
    ),
    field="labels",
    kind="labels",
    reference="label",
    default_metrics=("erc", "erc_loo"),
    rank_order=("macro_f1",),
    example=["joy", "surprise"],
    version=f"labels:{LABEL_SET_VERSION}|aggregation:2-of-3,neutral-alone",
)

#: name -> track; the first is the default everywhere a track is not named.
TRACKS: dict[str, Track] = {t.name: t for t in (TRANSCRIPTION, ERC)}
DEFAULT_TRACK = TRANSCRIPTION.name


def get(name: str | Track | None = None) -> Track:
    """The track ``name`` (the default when ``None``); :class:`TaskError` with a suggestion."""
    if isinstance(name, Track):
        return name
    if name is None:
        return TRACKS[DEFAULT_TRACK]
    return registry.lookup(TRACKS, name, kind="track", error=TaskError)


def names() -> list[str]:
    return list(TRACKS)


def detect(fields: list[str] | set[str]) -> str | None:
    """The track whose field is among ``fields`` (a file's keys or CSV header), else None
    (none, or more than one)."""
    found = [t.name for t in TRACKS.values() if t.field in fields]
    return found[0] if len(found) == 1 else None
