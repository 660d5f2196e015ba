"""People label the causes of a drawn sample with their annotator codes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from etclib.core.errors import AnnotationError
from etclib.data.corpus import SPLITS, Corpus
from etclib.studies import db as studiesdb
from etclib.studies.causes.store import _Db, _join, _split
from etclib.studies.causes.typology import (
    CauseSet,
    Key,
    _positions,
    cause_type,
    position,
    turn_role,
)
from etclib.studies.codes import annotator_for_code, require_admin

ANNOTATORS_PER_ITEM = 3


def draw_sample(
    admin_token: str | None,
    corpus: Corpus,
    size: int = 100,
    *,
    split: str = "test",
    seed: int = 0,
    db: str | Path | None = None,
) -> int:
    """Add up to ``size`` items of ``split`` to the cause sample (admin only); returns the
    sample's size. Reproducible from ``seed``; items already in the sample stay."""
    require_admin(admin_token)
    if size < 1:
        raise AnnotationError(f"The sample size must be at least 1, got {size}.")
    if split not in SPLITS:
        raise AnnotationError(f"Unknown split {split!r}. Available: {', '.join(SPLITS)}.")
    pool = [u.key for d in corpus.split(split) for u in d.utterances]
    rng = np.random.default_rng(seed)
    chosen = [pool[i] for i in rng.permutation(len(pool))]
    with _Db(db) as con:
        con.serialize("cause_sample")
        have = {
            tuple(r)
            for r in con.execute("SELECT dialogue_id, turn, role FROM cause_sample").fetchall()
        }
        start = con.execute("SELECT coalesce(max(position), 0) FROM cause_sample").fetchone()[0]
        new = [k for k in chosen if k not in have][: max(size - len(have), 0)]
        for i, k in enumerate(new, start=start + 1):
            con.execute("INSERT INTO cause_sample VALUES (?, ?, ?, ?, ?, ?)", [*k, split, i, seed])
        return int(con.execute("SELECT count(*) FROM cause_sample").fetchone()[0])


def sample_keys(*, db: str | Path | None = None) -> list[Key]:
    """The items of the cause sample, in drawing order."""
    with _Db(db, read_only=True) as con:
        rows = con.execute(
            "SELECT dialogue_id, turn, role FROM cause_sample ORDER BY position"
        ).fetchall()
    return [tuple(r) for r in rows]


def next_item(code: str | None, *, db: str | Path | None = None) -> Key | None:
    """The next item of the sample for this annotator, or None: items with fewer answers
    first, so every item gets its three annotators before more items are started."""
    annotator = annotator_for_code(code, db=db)
    with _Db(db, read_only=True) as con:
        row = con.execute(
            """
            SELECT s.dialogue_id, s.turn, s.role
              FROM cause_sample s
              LEFT JOIN cause_labels l
                ON l.source = 'human' AND l.dialogue_id = s.dialogue_id
               AND l.turn = s.turn AND l.role = s.role
             GROUP BY s.dialogue_id, s.turn, s.role, s.position
            HAVING count(l.source_id) < ? AND count(CASE WHEN l.source_id = ? THEN 1 END) = 0
             ORDER BY count(l.source_id), s.position LIMIT 1
            """,
            [ANNOTATORS_PER_ITEM, annotator],
        ).fetchone()
    return tuple(row) if row else None


def progress(code: str | None, *, db: str | Path | None = None) -> tuple[int, int]:
    """(items this annotator answered, items in the sample)."""
    annotator = annotator_for_code(code, db=db)
    with _Db(db, read_only=True) as con:
        done = con.execute(
            "SELECT count(*) FROM cause_labels WHERE source = 'human' AND source_id = ?",
            [annotator],
        ).fetchone()[0]
        total = con.execute("SELECT count(*) FROM cause_sample").fetchone()[0]
    return int(done), int(total)


def record_causes(
    code: str | None, key: Key, causes: Iterable[Any], *, db: str | Path | None = None
) -> CauseSet:
    """Store an annotator's cause utterances for a sampled item (empty: not in the dialogue).

    ``causes`` holds ``(turn, role)`` pairs or positions up to the target's. Answering again
    replaces the earlier answer. Raises AccessDenied without a valid code.
    """
    annotator = annotator_for_code(code, db=db)
    key = (int(key[0]), int(key[1]), str(key[2]))
    pos = _positions(key, causes)
    with _Db(db) as con:
        known = con.execute(
            "SELECT 1 FROM cause_sample WHERE dialogue_id = ? AND turn = ? AND role = ?", list(key)
        ).fetchone()
        if not known:
            raise AnnotationError(
                f"Item {key[0]}/{key[1]}/{key[2]} is not in the cause sample: answer only items "
                "that next_item() hands out."
            )
        answer = pd.DataFrame(
            [["human", annotator, *key, _join(pos), cause_type(key, pos), "", studiesdb.now()]],
            columns="source source_id dialogue_id turn role causes cause_type raw labelled_at".split(),
        )
        con.upsert("cause_labels", answer, ["source", "source_id", "dialogue_id", "turn", "role"])
    return CauseSet(*key, tuple(turn_role(p) for p in pos), f"human {annotator}")


def human_answers(*, db: str | Path | None = None) -> pd.DataFrame:
    """Every human answer: item key, annotator id, causes (positions), type, time; oldest first."""
    with _Db(db, read_only=True) as con:
        df = con.frame(
            "SELECT dialogue_id, turn, role, source_id AS annotator_id, causes, cause_type, "
            "labelled_at FROM cause_labels WHERE source = 'human' "
            "ORDER BY labelled_at, dialogue_id, turn, role, source_id"
        )
    df["causes"] = df["causes"].map(_split)
    return df


def _majority(answers: Sequence[tuple[int, ...]], target: int) -> tuple[int, ...]:
    """Positions marked by more than half of the answers."""
    votes = Counter(p for a in answers for p in a)
    return tuple(p for p in range(1, target + 1) if votes[p] * 2 > len(answers))


def _human_sets(db: str | Path | None) -> dict[Key, list[tuple[int, ...]]]:
    """Each answered item's answers (cause positions), first :data:`ANNOTATORS_PER_ITEM` only."""
    answers = human_answers(db=db)
    return {
        (int(k[0]), int(k[1]), str(k[2])): g["causes"].tolist()[:ANNOTATORS_PER_ITEM]
        for k, g in answers.groupby(["dialogue_id", "turn", "role"], sort=False)
    }


def human_majority(
    *, min_answers: int = 2, db: str | Path | None = None
) -> dict[Key, tuple[int, ...]]:
    """Each item's human majority cause set, for items with ``min_answers`` answers or more
    (the first :data:`ANNOTATORS_PER_ITEM` answers count)."""
    return {
        k: _majority(sets, position(k[1], k[2]))
        for k, sets in _human_sets(db).items()
        if len(sets) >= min_answers
    }
