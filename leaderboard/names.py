"""Names the board keeps for its own rows (baselines, published results): no entry may pass for one.

A name is refused when it ends in "(etclib)", or when its *skeleton* (after Unicode's UTS #39:
NFKC, case-folded, spaces folded, each confusable character replaced by the lowest of its
``confusable_homoglyphs``) equals one of those rows' skeletons: a Cyrillic "е", an "I" for "l"
or full-width letters do not make another name. docs/leaderboard.md says why.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

#: The mark of the board's computed rows (leaderboard.baselines).
OWN_MARK = "(etclib)"


@functools.lru_cache(maxsize=4096)
def _character(ch: str) -> str:
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(ch, greedy=True, preferred_aliases=[]) or []
    return min([ch, *(h["c"] for f in found for h in f["homoglyphs"])])


def skeleton(text: str) -> str:
    """``text`` as it reads: two names with one skeleton look alike."""
    folded = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return "".join(_character(ch) for ch in folded)


def reserved_problem(name: str, reserved: Iterable[str]) -> str | None:
    """Why ``name`` may not be an entry's name (None when it may)."""
    mine = skeleton(name)
    if mine.endswith(skeleton(OWN_MARK)):
        return f'ends in "{OWN_MARK}", which marks the board\'s own computed rows; choose another name.'
    for other in reserved:
        if skeleton(other) == mine:
            return (
                f"reads as “{other}”, a row of the board's own (a baseline or a published "
                "result); choose another name."
            )
    return None
