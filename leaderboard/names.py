"""Names the board keeps for its own rows: a visitor's entry may not be called like one.

The board's own rows are its computed baselines (every name ends in "(etclib)") and the paper's
published results. An entry whose name is one of them, or reads as one, would pass for the
board's own row: so a name is refused when it ends in "(etclib)", or when its *skeleton*
equals one of those rows' skeletons. A skeleton (after Unicode's UTS #39) is the text under
NFKC, case-folded, its runs of spaces as one, and each character that Unicode's confusables list
pairs with others replaced by the lowest of them (``confusable_homoglyphs``, which carries that
list): "Retrieval baseline (etclib)" with a Cyrillic "е", with "l" written "I", or in full-width
letters, has the same skeleton as the real one. docs/leaderboard.md says why.
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
    """Why ``name`` may not be an entry's name (None when it may): it reads as one of the
    ``reserved`` names of the board's own rows, or carries their mark."""
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
