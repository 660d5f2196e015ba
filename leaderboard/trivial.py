"""Trivial entries: the floors each board is read against, and the badge rules, in one place.

*Floors* are the computed baselines that know nothing of the item they answer (``Track.floors``).
:func:`badge` says what a row is; :func:`reasons` why an entry's predictions are trivial.
docs/leaderboard.md, "Trivial entries", states the same rules for readers.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from etclib import tracks


def trivial_baselines() -> set[str]:
    """Every track's floors (backend names are unique across tracks)."""
    return {name for t in tracks.TRACKS.values() for name in t.floors}


def badge(kind: Any, baseline: Any = "", trivial: Any = "") -> str:
    """What a row is, in words (never a check mark on a baseline or a trivial entry)."""
    kind = str(kind)
    if kind == "baseline":
        return "baseline (floor)" if str(baseline) in trivial_baselines() else "baseline"
    if kind == "submission" and trivial:
        return "⚠ trivial"
    return {"submission": SCORED_HERE, "reported": "📄 reported"}.get(kind, kind)


#: A submission's badge: its predictions were scored here (the site did not run the system).
SCORED_HERE = "✅ scored here"


#: one prediction on at least this share of the items: near-constant
TOP_SHARE = 0.9
#: the utterance itself as the prediction on at least this share of the items: a copy
COPY_SHARE = 0.5
#: the same prediction as one baseline entry on at least this share of the items
BASELINE_SHARE = 0.9


@dataclass(frozen=True)
class Profile:
    """What the rules read of one entry's predictions (computed once per content)."""

    n: int
    distinct: int
    top: str
    top_share: float
    copy_share: float
    #: per item (in item order), a code of its prediction: equal predictions, equal codes
    codes: np.ndarray


#: content_sha256 (the predictions' identity) -> profile; a submission's predictions never change
_PROFILES: OrderedDict[str, Profile] = OrderedDict()
_KEEP = 2048


def _code(text: str) -> int:
    """A stable 64-bit code of a text (equal texts, equal codes, in any process)."""
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True
    )


def profile(predictions: list[str], utterances: list[str]) -> Profile:
    """The profile of ``predictions`` (stored form) against the items' ``utterances``."""
    preds = [p.strip() for p in predictions]
    counts = Counter(preds)
    top, top_n = counts.most_common(1)[0] if counts else ("", 0)
    copies = sum(1 for p, u in zip(preds, utterances) if p and p == u.strip())
    n = len(preds)
    codes = {text: _code(text) for text in counts}
    return Profile(
        n=n,
        distinct=len(counts),
        top=top,
        top_share=top_n / n if n else 0.0,
        copy_share=copies / n if n else 0.0,
        codes=np.array([codes[p] for p in preds], dtype=np.int64),
    )


def _profiles(db: Any, ids: list[str], split: str) -> dict[str, Profile]:
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    keys = {
        sid: sha or sid
        for sid, sha in db.query(
            f"SELECT id, content_sha256 FROM submissions WHERE id IN ({marks})", ids
        )
    }
    missing = [sid for sid in ids if keys.get(sid) not in _PROFILES]
    if missing:
        from etclib.data.corpus import load_corpus
        from etclib.data.task import items

        utterances = [it.utterance for it in items(load_corpus(), split)]
        frame = db.query_df(
            "SELECT submission_id, item_index, prediction FROM predictions WHERE submission_id "
            f"IN ({', '.join('?' for _ in missing)}) ORDER BY submission_id, item_index",
            missing,
        )
        for sid, rows in frame.groupby("submission_id"):
            texts = rows["prediction"].fillna("").astype(str).tolist()
            index = rows["item_index"].astype(int).tolist()
            targets = [utterances[i] if 0 <= i < len(utterances) else "" for i in index]
            _PROFILES[keys[str(sid)]] = profile(texts, targets)
            while len(_PROFILES) > _KEEP:
                _PROFILES.popitem(last=False)
    return {sid: _PROFILES[keys[sid]] for sid in ids if keys.get(sid) in _PROFILES}


def reason(p: Profile, track: Any, baselines: dict[str, Profile] | None = None) -> str:
    """Why a profile is trivial, in words (blank when it is not): the first rule that holds."""
    t = tracks.get(track)
    what = t.noun
    if p.n == 0:
        return ""
    if p.distinct == 1:
        return f"one {what} {t.shown(p.top)} for every item"
    if p.distinct <= t.max_distinct:
        return f"near-constant: {p.distinct} distinct {what}s for {p.n:,} items"
    if p.top_share >= TOP_SHARE:
        return f"near-constant: one {what} {t.shown(p.top)} on {p.top_share:.0%} of items"
    if p.copy_share >= COPY_SHARE:
        return f"the utterance itself copied on {p.copy_share:.0%} of items"
    for name, b in (baselines or {}).items():
        if b.n == p.n:
            share = float(np.mean(p.codes == b.codes))
            if share >= BASELINE_SHARE:
                return f"the same as the baseline “{name}” on {share:.0%} of items"
    return ""


def reasons(db: Any, entries: pd.DataFrame, track: str | None, split: str = "test") -> list[str]:
    """Each row of ``entries`` (``id``, ``kind``, ``name``) -> why it is trivial (blank when it
    is not, and always for baselines and reported rows: they say what they are)."""
    if entries.empty:
        return []
    ids = [str(i) for i in entries["id"]]
    got = _profiles(db, ids, split)
    kinds = dict(zip(ids, entries["kind"]))
    names = dict(zip(ids, entries["name"]))
    baselines = {names[sid]: got[sid] for sid in ids if kinds[sid] == "baseline" and sid in got}
    return [
        reason(got[sid], track, baselines) if kinds[sid] == "submission" and sid in got else ""
        for sid in ids
    ]


def ranking_warning(frame: pd.DataFrame) -> str | None:
    """A warning naming the trivial submissions ranked above a real entry, else None."""
    if frame.empty or "trivial" not in frame.columns:
        return None
    flagged = frame["trivial"].fillna("").astype(str) != ""
    floor = frame.get("baseline", pd.Series([""] * len(frame))).isin(trivial_baselines())
    real = ~flagged & ~floor & frame["rank"].astype(int).gt(0)
    if not real.any():
        return None
    last_real = int(np.flatnonzero(real.to_numpy())[-1])
    above = frame.iloc[:last_real][flagged.iloc[:last_real].to_numpy()]
    if above.empty:
        return None
    names = "; ".join(f"{n} ({r})" for n, r in zip(above["name"], above["trivial"]))
    return (
        f"{len(above)} trivial {'entry ranks' if len(above) == 1 else 'entries rank'} above "
        f"entries that predict something real: {names}. Trivial output is badged ⚠ trivial; "
        "read the ranking below it."
    )
