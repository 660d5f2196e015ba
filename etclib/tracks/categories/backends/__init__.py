"""The categories track's backends: each predicts a label set per item.

One module per backend, each defining ``BACKEND``, listed in the track's ``backends``
(:mod:`etclib.tracks.categories`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from etclib.data.task import Item
from etclib.models.base import Backend


class CategoryBackend(Backend):
    """A model that predicts the emotion categories of task items (the ERC track): label sets,
    tuples of category keys in ``CATEGORIES`` order."""

    in_chat: ClassVar[bool] = False  # the chat's transcription picker does not offer it

    def stream(self, item: Item, shots: Sequence[Item] = ()) -> Iterator[str]:
        """The item's categories as ``joy;surprise``."""
        yield ";".join(self.predict([item], shots=[list(shots)])[0])
