"""Leaderboard tracks: tasks on the same ETC items, each one :class:`Track` in its own package:
``transcription`` (the ETC task, a ``prediction`` text per item) and ``erc`` (emotion
recognition in conversation, a ``labels`` list per item). Code that needs a track-specific fact
asks the track; a track from outside the library calls :func:`register` (README, "Adding a
track").
"""

from __future__ import annotations

from etclib.core import registry
from etclib.core.errors import TaskError
from etclib.tracks import categories, transcription
from etclib.tracks.base import MAX_PREDICTION_CHARS, TRACKS, Track

__all__ = ["DEFAULT_TRACK", "MAX_PREDICTION_CHARS", "TRACKS", "Track", "detect", "get"]

TRACKS.update({t.name: t for t in (transcription.TRACK, categories.TRACK)})
#: the track of a file, a stored row or a call that names none
DEFAULT_TRACK = transcription.TRACK.name


def get(name: str | Track | None = None) -> Track:
    """The track ``name`` (the default when ``None``); :class:`TaskError` with a suggestion."""
    if isinstance(name, Track):
        return name
    return registry.lookup(TRACKS, name or DEFAULT_TRACK, kind="track", error=TaskError)


def detect(fields: list[str] | set[str]) -> str | None:
    """The track whose field is among ``fields`` (a file's keys or CSV header), else None
    (none, or more than one)."""
    found = [t.name for t in TRACKS.values() if t.field in fields]
    return found[0] if len(found) == 1 else None


def register(track: Track) -> Track:
    """Add ``track`` (the registries' one collision rule: another track of its name is refused)."""
    return registry.add(TRACKS, track.name, track, kind="track", error=TaskError)


def unregister(name: str) -> None:
    """Remove a track that :func:`register` added (tests)."""
    TRACKS.pop(name, None)
