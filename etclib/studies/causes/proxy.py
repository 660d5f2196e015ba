"""The lexical proxy: does a transcription refer to the partner? (needs no labels)"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from etclib.data.corpus import ROLES, Utterance

#: Compounds of 相手 that name a third party, not the partner (相談相手 "someone to confide
#: in", 対戦相手 "opponent", 結婚相手 "spouse", ...). 話相手 and 話し相手 are the partner.
THIRD_PARTY_COMPOUNDS = ("相談", "対戦", "結婚", "交際", "取引", "競争", "恋愛", "浮気", "喧嘩")
#: Words that refer to the partner, with why (docs/causes.md has the corpus counts):
#: - 相手 (also お相手, 相手方, 話し相手, 話相手) except in :data:`THIRD_PARTY_COMPOUNDS` compounds:
#:   the prompt-style name of the other participant; 4,025 of the corpus's 9,970 transcriptions
#:   use it;
#: - あいて in kana before a particle or さん (the one kana use in the corpus is the partner; the
#:   particle guard keeps out 空いて "vacant", also written あいて);
#: - あなた / 貴方: the transcription addresses the partner directly (all three uses do);
#: - the partner's role noun: 聞き手 in a speaker's transcription, 話し手 in a listener's.
#: Not counted: 彼 / 彼女 / その人 / その方 / この方 (in the corpus they name people in the
#: narrated story: 坂本龍馬, 息子さんの彼女), 皆さん (people in general), 向こう ("over there";
#: never used for the partner in the corpus).
PARTNER_PATTERNS: dict[str, str] = {
    "相手": "".join(f"(?<!{w})" for w in THIRD_PARTY_COMPOUNDS) + "相手",
    "あいて": r"あいて(?=[のにがはをもとへ]|さん)",
    "あなた": r"あなた|貴方",
}
ROLE_NOUNS = {"speaker": "聞き手", "listener": "話し手"}  # the partner's role, by the author's


def partner_mentions(transcription: str, role: str | None = None) -> list[str]:
    """The words of :data:`PARTNER_PATTERNS` (and the partner's role noun when ``role`` is
    given) found in ``transcription``, in text order."""
    text = transcription or ""
    found: list[tuple[int, str]] = []
    for pattern in PARTNER_PATTERNS.values():
        found += [(m.start(), m.group(0)) for m in re.finditer(pattern, text)]
    if role in ROLE_NOUNS:
        found += [(m.start(), m.group(0)) for m in re.finditer(ROLE_NOUNS[role], text)]
    return [w for _, w in sorted(found)]


def partner_reference(transcription: str, role: str | None = None) -> bool:
    """The lexical proxy: does the transcription refer to the partner? A first, clearly
    approximate stand-in for a partner-caused (inter-personal or hybrid) state."""
    return bool(partner_mentions(transcription, role))


def proxy_type(transcription: str, role: str | None = None) -> str:
    """``inter-personal`` when the transcription refers to the partner, else ``other``."""
    return "inter-personal" if partner_reference(transcription, role) else "other"


def proxy_share(utterances: Iterable[Utterance]) -> dict[str, Any]:
    """The proxy's inter-personal share (%) over ``utterances``: all, per role, and counts."""
    rows = [(u.role, partner_reference(u.transcription, u.role)) for u in utterances]
    out: dict[str, Any] = {"items": len(rows), "inter_personal": sum(y for _, y in rows)}
    out["share"] = 100 * out["inter_personal"] / len(rows) if rows else math.nan
    for r in ROLES:
        sub = [y for role, y in rows if role == r]
        out[r] = 100 * sum(sub) / len(sub) if sub else math.nan
    return out
