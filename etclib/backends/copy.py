"""``copy``: answer with the target utterance itself (a sanity baseline).

Shows how much of a score comes from merely overlapping with what was said. Needs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..task import Item
from .base import Backend, Progress, Shots


class CopyBackend(Backend):
    """The prediction is the item's own (last) utterance."""

    name = "copy"
    description = "Copies the target utterance (sanity baseline)."
    in_chat = False  # echoes what the visitor just typed

    def __init__(self) -> None:
        """Takes no options."""

    def predict(
        self,
        items: Sequence[Item],
        progress: Progress | None = None,
        shots: Shots | None = None,
    ) -> list[str]:
        if progress and items:
            progress(len(items))
        return [it.utterance for it in items]


BACKEND = CopyBackend
