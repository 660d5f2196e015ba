"""The transcription track: the ETC task (SPEC), a ``prediction`` text per item scored against
the participant's own transcription.

Its backends are etclib's model backends (:data:`etclib.models.REGISTRY`), its metrics every
metric module that names no other track (bleu, rouge, bertscore, judge and :mod:`.category`).
"""

from __future__ import annotations

from etclib import metrics
from etclib.tracks.base import Track


class Transcription(Track):
    name = "transcription"
    title = "transcriptions"
    description = "the emotion transcription the author of each utterance wrote (SPEC)"
    field = "prediction"
    example = "相手の話に共感して、嬉しい気持ちになった。"
    help = "fill in `prediction`, keep everything else."
    default_metrics = ("bleu", "rouge")
    rank_order = ("f1", "bertscore", "rougeL")
    baselines = {
        "retrieval": "Retrieval baseline (etclib)",
        "constant": "Constant transcription (etclib)",
        "copy": "Copy of the utterance (etclib)",
    }
    floors = {
        "constant": "one fixed sentence (the training set's medoid transcription) for every item",
        "copy": "the utterance itself, copied as its transcription",
    }
    flag_floor = "constant"
    max_distinct = 5
    noun = "text"
    free_text = True
    reported = True
    items_caption = (
        "Per-item examples: prediction, the participant's reference and the item's scores "
        "(with the judge's atomic units when judged)."
    )
    # The first track: its keys, files and signatures predate tracks and carry no tag.
    tag = ""
    signature = ""

    @property
    def backends(self):  # type: ignore[override]
        from etclib import models as backends  # read when asked: a plugin's register() is seen

        return backends.REGISTRY

    @property
    def default_backend(self) -> str:  # type: ignore[override]
        from etclib.models import DEFAULT_BACKEND

        return DEFAULT_BACKEND

    def owns(self, group: str) -> bool:
        """Its metric groups, and every group that names no track."""
        return metrics.track_of(group) in (None, self.name)


TRACK = Transcription()
