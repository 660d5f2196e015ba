"""Trivial entries: the floors each board is read against, and the badge rules, in one place.

*Floors* are the computed baselines that know nothing of the item they answer (one fixed
sentence, the utterance copied, the most frequent label set, a draw from the label
distribution): each track's board draws them as dashed lines and flags an entry scoring below
its :data:`FLAG_FLOOR`. Retrieval is not one: it reads the dialogue and returns what similar
training contexts got, a real (if simple) method, so it is marked "baseline" but is not a floor.

The badge of a row (:func:`badge`) says what it is: "✅ reproduced" (a submission this site
scored), "baseline" / "baseline (floor)" (computed by this project), "📄 reported" (the paper's
number) or "⚠ trivial" (a submission whose predictions :func:`detect` recognises as trivial; it
is never called "reproduced").
"""

from __future__ import annotations

from typing import Any

#: track -> trivial baseline backend -> why it is a floor
FLOORS: dict[str, dict[str, str]] = {
    "transcription": {
        "constant": "one fixed sentence (the training set's medoid transcription) for every item",
        "copy": "the utterance itself, copied as its transcription",
    },
    "erc": {
        "majority": "the training set's most frequent label set (neutral) for every item",
        "prior": "a label set drawn from the training distribution, blind to the item",
    },
}
#: track -> the floor an entry is flagged against when it scores below it on the ranking metric
FLAG_FLOOR: dict[str, str] = {"transcription": "constant", "erc": "majority"}
#: every track's floors together (backend names are unique across tracks)
TRIVIAL_BASELINES: dict[str, str] = {k: v for floors in FLOORS.values() for k, v in floors.items()}


def floors(track: str | None = None) -> dict[str, str]:
    """The floors of ``track`` (default: transcription)."""
    return FLOORS.get(track or "transcription", {})


def flag_floor(track: str | None = None) -> str:
    """The floor of ``track`` an entry is flagged against."""
    return FLAG_FLOOR.get(track or "transcription", "")


def badge(kind: Any, baseline: Any = "", trivial: Any = "") -> str:
    """What a row is, in words (never a medal or a check mark on a baseline or a trivial
    entry): see the module's docstring."""
    kind = str(kind)
    if kind == "baseline":
        return "baseline (floor)" if str(baseline) in TRIVIAL_BASELINES else "baseline"
    if kind == "submission" and trivial:
        return "⚠ trivial"
    return {"submission": "✅ reproduced", "reported": "📄 reported"}.get(kind, kind)
