"""``copy``: answer with the target utterance itself (a sanity baseline).

Shows how much of a score comes from merely overlapping with what was said. Needs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from etclib.data.task import Item
from etclib.models.base import Backend


class CopyBackend(Backend):
    """The prediction is the item's own (last) utterance."""

    name = "copy"
    description = "Copies the target utterance (sanity baseline)."
    in_chat = False  # echoes what the visitor just typed

    def __init__(self) -> None:
        """Takes no options."""

    def answer(self, item: Item, shots: Sequence[Item] = ()) -> str:
        return item.utterance


BACKEND = CopyBackend
