"""RECCON's cause types of a cause set, and the positions of a dialogue's utterances."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from etclib.core.errors import AnnotationError
from etclib.data.corpus import ROLES, TURNS_PER_DIALOGUE

#: RECCON's cause types, in its order (type 1..5).
CAUSE_TYPES: tuple[str, ...] = (
    "no-context",
    "inter-personal",
    "self-contagion",
    "hybrid",
    "latent",
)
#: The proxy's two classes (it cannot tell the other four types apart).
PROXY_TYPES: tuple[str, ...] = ("inter-personal", "other")
#: Share (%) of each type label in RECCON's Table 2 (RECCON.pdf in declare-lab/RECCON, commit
#: 579ea8a): DailyDialog part (RECCON-DD, 5,861 annotated utterances) and IEMOCAP part (RECCON-IE,
#: 494). The shares are over type labels, one label per cause (see the module docstring); they
#: equal the label counts of the released data/original_annotation/*.json files.
RECCON_SHARES: dict[str, dict[str, float]] = {
    "RECCON-DD": {
        "no-context": 43.0,
        "inter-personal": 32.0,
        "self-contagion": 9.0,
        "hybrid": 11.0,
        "latent": 5.0,
    },
    "RECCON-IE": {
        "no-context": 35.0,
        "inter-personal": 19.0,
        "self-contagion": 20.0,
        "hybrid": 17.0,
        "latent": 10.0,
    },
}
Key = tuple[int, int, str]


def position(turn: int, role: str) -> int:
    """1-based position of ``(turn, role)`` in a dialogue: turn 1 speaker is 1, listener 2."""
    if role not in ROLES:
        raise AnnotationError(f"Role {role!r} is not one of {', '.join(ROLES)}.")
    if isinstance(turn, bool) or not isinstance(turn, int | np.integer):
        raise AnnotationError(f"Turn must be an integer, got {turn!r}.")
    if not 1 <= turn <= TURNS_PER_DIALOGUE:
        raise AnnotationError(f"Turn {turn} is outside 1..{TURNS_PER_DIALOGUE}.")
    return 2 * (int(turn) - 1) + (1 if role == "speaker" else 2)


def turn_role(pos: int) -> tuple[int, str]:
    """``(turn, role)`` of a 1-based position (the inverse of :func:`position`)."""
    if isinstance(pos, bool) or not 1 <= int(pos) <= 2 * TURNS_PER_DIALOGUE:
        raise AnnotationError(f"Position {pos!r} is outside 1..{2 * TURNS_PER_DIALOGUE}.")
    pos = int(pos)
    return (pos + 1) // 2, ("speaker" if pos % 2 == 1 else "listener")


def _positions(key: Key, causes: Iterable[Any]) -> tuple[int, ...]:
    """Cause positions from ``(turn, role)`` pairs or positions, checked against the target."""
    target = position(key[1], key[2])
    out = set()
    for c in causes:
        p = position(*c) if isinstance(c, tuple | list) else int(c)
        if not 1 <= p <= target:
            raise AnnotationError(
                f"Item {key[0]}/{key[1]}/{key[2]}: cause at position {p} is not among the "
                f"utterances up to the target (1..{target}); later turns are never causes."
            )
        out.add(p)
    return tuple(sorted(out))


def cause_type(key: Key, causes: Iterable[Any]) -> str:
    """The one RECCON type of a cause set (see the module docstring). ``causes`` holds
    ``(turn, role)`` pairs or positions 1..10; the target is ``key = (dialogue, turn, role)``."""
    target = position(key[1], key[2])
    pos = _positions(key, causes)
    if not pos:
        return "latent"
    own = key[2]
    partner = any(turn_role(p)[1] != own for p in pos)
    earlier_own = any(turn_role(p)[1] == own and p < target for p in pos)
    if partner and earlier_own:
        return "hybrid"
    if partner:
        return "inter-personal"
    if earlier_own:
        return "self-contagion"
    return "no-context"


def reccon_labels(key: Key, causes: Iterable[Any]) -> tuple[str, ...]:
    """RECCON's type labels of a cause set: ``no-context`` when the target is a cause, plus the
    context part's type (``inter-personal`` / ``self-contagion`` / ``hybrid``); ``latent``
    for the empty set."""
    target = position(key[1], key[2])
    pos = _positions(key, causes)
    if not pos:
        return ("latent",)
    labels = ["no-context"] if target in pos else []
    context = cause_type(key, [p for p in pos if p != target])
    if context != "latent":
        labels.append(context)
    return tuple(labels)


@dataclass(frozen=True)
class CauseSet:
    """One item's cause utterances from one source, and the type derived from them.

    ``causes`` are ``(turn, role)`` pairs in dialogue order; ``source`` names where they come
    from: ``human majority (n answers)``, ``llm run <id>``, ``human <annotator id>``.
    """

    dialogue_id: int
    turn: int
    role: str
    causes: tuple[tuple[int, str], ...]
    source: str

    @property
    def key(self) -> Key:
        return (self.dialogue_id, self.turn, self.role)

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(position(t, r) for t, r in self.causes)

    @property
    def cause_type(self) -> str:
        return cause_type(self.key, self.positions)

    @property
    def reccon_labels(self) -> tuple[str, ...]:
        return reccon_labels(self.key, self.positions)
