"""Study 2's samples: the decisions people re-check, drawn by an admin or fed by the leaderboard."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from etclib.core import config
from etclib.core.errors import AnnotationError
from etclib.studies.annotation.store import ANSWERS_PER_DECISION, LABELS, SIDES, _db, add_decisions
from etclib.studies.codes import require_admin


def draw_sample(
    admin_token: str | None,
    submission_id: str,
    per_label: int = 20,
    *,
    seed: int = 0,
    db: str | Path | None = None,
) -> dict[str, int]:
    """Sample up to ``per_label`` decisions of each judge label for re-checking (admin only),
    so that rare labels (often Neutral) are checked too; the sample size per label."""
    require_admin(admin_token)
    if per_label < 1:
        raise AnnotationError(f"per_label must be at least 1, got {per_label}.")
    with _db(db) as con:
        con.serialize("annotation_sample")
        sizes = _draw(con, submission_id, per_label, seed, by_side=False)
    return {label: sum(n for (lab, _), n in sizes.items() if lab == label) for label in LABELS}


def _draw(
    con, submission_id: str, per_stratum: int, seed: int, *, by_side: bool
) -> dict[tuple[str, str], int]:
    """Add up to ``per_stratum`` decisions of each stratum (label, and side when ``by_side``) to
    the sample; the size per stratum. Decisions already sampled count. Seeded with the
    submission id too, so one submission's draw never depends on another's."""
    rows = con.execute(
        """
        SELECT d.decision_id, d.label, d.side, s.decision_id IS NOT NULL AS sampled
          FROM judge_decisions d LEFT JOIN annotation_sample s USING (decision_id)
         WHERE d.submission_id = ? ORDER BY d.decision_id
        """,
        [submission_id],
    ).fetchall()
    if not rows:
        raise AnnotationError(
            f"No judge decisions for submission {submission_id!r}: they are stored when the "
            "leaderboard judges a submission (or by add_decisions())."
        )
    start = con.execute("SELECT coalesce(max(position), 0) FROM annotation_sample").fetchone()[0]
    rng = random.Random(f"{seed}:{submission_id}")
    strata = [(label, side) for label in LABELS for side in (SIDES if by_side else ("",))]
    new: list[tuple[str, str]] = []
    sizes: dict[tuple[str, str], int] = {}
    for label, side in strata:
        mine = [r for r in rows if r[1] == label and (not side or r[2] == side)]
        have = [r[0] for r in mine if r[3]]
        pool = [r[0] for r in mine if not r[3]]
        take = min(max(per_stratum - len(have), 0), len(pool))
        name = f"{label} · {side}" if side else label
        new += [(d, name) for d in rng.sample(pool, take)]
        sizes[(label, side)] = len(have) + take
    rng.shuffle(new)  # annotators see labels and sides mixed, not in blocks
    for i, (d, stratum) in enumerate(new, start=start + 1):
        con.execute(
            "INSERT INTO annotation_sample VALUES (?, ?, ?, ?, ?)",
            [d, submission_id, stratum, i, seed],
        )
    return sizes


#: Study 2's automatic sample: decisions per (judge label, side) stratum drawn from every judged
#: submission (``ETC_STUDY2_PER_STRATUM`` overrides; 0 switches the feed off), and its seed
#: (``ETC_STUDY2_SEED``).
AUTO_PER_STRATUM = 10
AUTO_SEED = 0


def auto_sample_settings() -> tuple[int, int]:
    """(decisions per stratum, seed) of the automatic sample, from the settings."""

    def number(name: str, default: int) -> int:
        raw = config.setting(name)
        if raw in (None, ""):
            return default
        try:
            value = int(str(raw).strip())
        except ValueError:
            raise AnnotationError(
                f"{name}={raw!r} is not a whole number: unset it or fix it."
            ) from None
        if value < 0:
            raise AnnotationError(f"{name}={raw!r} is negative: give 0 or more.")
        return value

    return number("ETC_STUDY2_PER_STRATUM", AUTO_PER_STRATUM), number("ETC_STUDY2_SEED", AUTO_SEED)


def judge_decisions(
    submission_id: str,
    keys: Iterable[tuple[int, int, str]],
    predictions: Iterable[str],
    references: Iterable[str],
    details: Iterable[Mapping[str, Any] | None],
) -> list[dict[str, Any]]:
    """The decision rows of one judge run, from ``etclib.metrics.judge``'s per-item details
    (prediction units: the ``precision`` side; reference units: ``recall``)."""
    rows = []
    for key, pred, ref, detail in zip(keys, predictions, references, details, strict=True):
        if not detail or detail.get("error"):
            continue
        for side, units, labels, target in (
            ("precision", detail.get("units"), detail.get("unit_labels"), ref),
            ("recall", detail.get("ref_units"), detail.get("ref_unit_labels"), pred),
        ):
            for unit, label in zip(units or [], labels or []):
                if label in LABELS and isinstance(unit, str) and unit.strip():
                    rows.append(
                        {
                            "submission_id": str(submission_id),
                            "dialogue_id": int(key[0]),
                            "turn": int(key[1]),
                            "role": str(key[2]),
                            "side": side,
                            "unit": unit,
                            "target": target,
                            "label": label,
                        }
                    )
    return rows


def feed(
    rows: Iterable[Mapping[str, Any]],
    *,
    per_stratum: int | None = None,
    seed: int | None = None,
    db: str | Path | None = None,
) -> dict[str, int]:
    """Store one judge run's decisions and draw Study 2's automatic sample from them: up to
    ``per_stratum`` of each (label, side) stratum (defaults: :func:`auto_sample_settings`;
    0: none). ``{"stored": n, "sampled": n}``."""
    auto_n, auto_seed = auto_sample_settings()
    per_stratum = auto_n if per_stratum is None else per_stratum
    seed = auto_seed if seed is None else seed
    rows = list(rows)
    stored = add_decisions(rows, db=db)
    sampled = 0
    if stored and per_stratum > 0:
        with _db(db) as con:
            con.serialize("annotation_sample")  # positions follow on across writers
            for sid in sorted({str(r["submission_id"]) for r in rows}):
                sampled += sum(_draw(con, sid, per_stratum, seed, by_side=True).values())
    return {"stored": stored, "sampled": sampled}


def pool(*, db: str | Path | None = None) -> dict[str, int]:
    """The annotation pool: ``sampled`` decisions, ``waiting`` (fewer than
    :data:`ANSWERS_PER_DECISION` answers), ``answers`` and ``annotators`` who answered."""
    with _db(db, read_only=True) as con:
        sampled, waiting, answers, people = con.execute(
            """
            WITH n AS (
                SELECT s.decision_id, count(a.annotator_id) AS answers
                  FROM annotation_sample s LEFT JOIN annotation_answers a USING (decision_id)
                 GROUP BY s.decision_id)
            SELECT count(*), count(*) FILTER (WHERE answers < ?), coalesce(sum(answers), 0),
                   (SELECT count(DISTINCT annotator_id) FROM annotation_answers)
              FROM n
            """,
            [ANSWERS_PER_DECISION],
        ).fetchone()
    return {
        "sampled": int(sampled),
        "waiting": int(waiting),
        "answers": int(answers),
        "annotators": int(people),
    }
