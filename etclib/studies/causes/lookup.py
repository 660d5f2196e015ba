"""The cause sets and types the site and the leaderboard ask for, from the best source."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from etclib.core.errors import ConfigError
from etclib.data.corpus import Utterance
from etclib.studies.causes.human import _human_sets, _majority, human_majority
from etclib.studies.causes.llm import _latest_run, run_causes
from etclib.studies.causes.proxy import proxy_type
from etclib.studies.causes.typology import (
    CAUSE_TYPES,
    CauseSet,
    Key,
    cause_type,
    position,
    reccon_labels,
    turn_role,
)

SOURCES: tuple[str, ...] = ("auto", "human", "llm", "proxy")


def cause_utterances(
    dialogue_id: int,
    turn: int,
    role: str,
    *,
    source: str = "auto",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> CauseSet | None:
    """The cause utterances of one item, for highlighting, or None where none are stored.

    ``source``: ``auto`` (the human majority of 2+ answers, else the LLM run ``run_id``, default
    the newest), ``human`` or ``llm``; the proxy gives no utterances.
    """
    key = (int(dialogue_id), int(turn), str(role))
    return cause_utterances_of([key], source=source, run_id=run_id, db=db).get(key)


def cause_utterances_of(
    keys: Iterable[Key],
    *,
    source: str = "auto",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> dict[Key, CauseSet]:
    """:func:`cause_utterances` of many items (a dialogue's, say), reading the human answers
    and the LLM run once: item key -> its ``CauseSet``, for the items that have one."""
    if source not in ("auto", "human", "llm"):
        raise ConfigError(f"Unknown cause source {source!r} here. Use auto, human or llm.")
    keys = [(int(d), int(t), str(r)) for d, t, r in keys]
    out: dict[Key, CauseSet] = {}
    left = keys
    if source in ("auto", "human"):
        sets = _human_sets(db)
        left = []
        for key in keys:
            answers = sets.get(key, [])
            if len(answers) >= 2:
                majority = _majority(answers, position(key[1], key[2]))
                out[key] = CauseSet(
                    *key,
                    tuple(turn_role(p) for p in majority),
                    f"human majority ({len(answers)} answers)",
                )
            else:
                left.append(key)
        if source == "human":
            return out
    run = (run_id or _latest_run(db)) if left else None
    if run is None:
        return out
    found = run_causes(run, db=db)
    for key in left:
        if key in found:
            out[key] = CauseSet(*key, tuple(turn_role(p) for p in found[key]), f"llm run {run}")
    return out


def cause_types_for_items(
    items: Iterable[Utterance],
    source: str = "auto",
    *,
    run_id: str | None = None,
    db: str | Path | None = None,
) -> pd.DataFrame:
    """One cause type per item, with where it comes from: the leaderboard's breakdown.

    ``auto``: the human majority (2+ answers), else the LLM run (``run_id``, default the
    newest), else the lexical proxy; ``human``, ``llm``, ``proxy``: that source only.
    """
    if source not in SOURCES:
        raise ConfigError(f"Unknown cause source {source!r}. Available: {', '.join(SOURCES)}.")
    items = list(items)
    human = human_majority(db=db) if source in ("auto", "human") else {}
    run = None
    llm_sets: dict[Key, tuple[int, ...]] = {}
    if source in ("auto", "llm"):
        run = run_id or _latest_run(db)
        llm_sets = run_causes(run, db=db) if run else {}
    rows = []
    for u in items:
        kind, kind_source = None, None
        if u.key in human:
            kind, kind_source = cause_type(u.key, human[u.key]), "human"
        elif u.key in llm_sets:
            kind, kind_source = cause_type(u.key, llm_sets[u.key]), f"llm:{run}"
        elif source in ("auto", "proxy"):
            kind, kind_source = proxy_type(u.transcription, u.role), "proxy"
        rows.append(
            {
                "dialogue_id": u.dialogue_id,
                "turn": u.turn,
                "role": u.role,
                "cause_type": kind,
                "source": kind_source,
            }
        )
    return pd.DataFrame(rows, columns=["dialogue_id", "turn", "role", "cause_type", "source"])


def type_distribution(
    source: str, *, run_id: str | None = None, db: str | Path | None = None
) -> dict[str, Any] | None:
    """Cause-type shares (%) of ``llm`` or ``human``, or None when it has no labels: ``types``
    one per item, ``reccon`` counted RECCON's way (over labels, like :data:`RECCON_SHARES`)."""
    if source == "llm":
        run = run_id or _latest_run(db)
        if run is None:
            return None
        sets, name = run_causes(run, db=db), f"llm:{run}"
    elif source == "human":
        sets, name = human_majority(db=db), "human"
    else:
        raise ConfigError(f"Unknown cause source {source!r}: use llm or human.")
    if not sets:
        return None
    types = Counter(cause_type(k, v) for k, v in sets.items())
    labels = Counter(x for k, v in sets.items() for x in reccon_labels(k, v))
    n_labels = sum(labels.values())
    return {
        "source": name,
        "items": len(sets),
        "types": {t: 100 * types[t] / len(sets) for t in CAUSE_TYPES},
        "reccon": {t: 100 * labels[t] / n_labels for t in CAUSE_TYPES},
    }
