"""Study 2 of docs/judge_vs_human.md: people re-check the LLM judge's atomic-unit decisions.

The judge of SPEC.md decides, for one atomic unit and one target transcription, Supported /
Neutral / Not Supported. This module stores such decisions, lets people with an annotator code
give their own answer to a stratified sample of them, and compares the two.

Storage is the studies database (``ETC_STUDIES_DB``: a DuckDB file, default
``data/studies.duckdb``, or a ``postgresql://`` URL; :mod:`etclib.studiesdb`), shared with study 1
(:mod:`etclib.labeljudge`):

- ``judge_decisions``: one row per (submission, item, side, unit, target) with the judge's
  label. ``side`` is ``precision`` (a prediction unit judged against the reference) or
  ``recall`` (a reference unit judged against the prediction). Filled by :func:`feed` (the
  leaderboard calls it after each judge run, :func:`judge_decisions` turning the judge's
  per-item details into rows) or :func:`add_decisions`.
- ``annotators``: codes issued by an admin (``ETC_ADMIN_TOKEN``); only a SHA-256 hash of each
  code is stored, so a leaked database does not leak codes.
- ``annotation_sample``: the decisions chosen for re-checking. :func:`feed` draws it
  automatically, seeded, up to :data:`AUTO_PER_STRATUM` per (judge label, side) stratum; an
  admin can draw more per label with :func:`draw_sample`.
- ``annotation_answers``: one answer per (decision, annotator); answering again replaces it.

Every write that comes from a person needs a valid, unrevoked code: there are no anonymous
answers. Every query is parameterised.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import random
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import config, studiesdb
from .agreement import confusion_matrix, fleiss_kappa, kappa_with_ci, krippendorff_alpha
from .corpus import ROLES
from .errors import AccessDenied, AnnotationError

#: Judge labels (SPEC.md, "Entail"), in display order.
LABELS: tuple[str, ...] = ("Supported", "Neutral", "Not Supported")
SIDES: tuple[str, ...] = ("precision", "recall")
#: When human answers to one decision tie, the less supportive label wins (in this order).
_TIE_ORDER = ("Not Supported", "Neutral", "Supported")


# --- the studies database ----------------------------------------------------------------------


def studies_path(explicit: str | Path | None = None) -> Path | str:
    """The studies database: a DuckDB file path or a ``postgresql://`` URL (see
    ``etclib.config.studies_db``)."""
    return config.studies_db(explicit)


@contextmanager
def connect_studies(
    db: str | Path | None = None, *, read_only: bool = False
) -> Iterator[studiesdb.StudiesConnection]:
    """A connection to the studies database, closed on exit (:func:`etclib.studiesdb.connect`).

    A DuckDB file and its folder are created on first write. ``read_only`` on a file that does
    not exist yet gives an in-memory database (every table empty), so reading never creates files.
    """
    with studiesdb.connect(db, read_only=read_only) as con:
        yield con


_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_decisions (
    decision_id VARCHAR PRIMARY KEY,
    submission_id VARCHAR NOT NULL,
    dialogue_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    side VARCHAR NOT NULL,
    unit VARCHAR NOT NULL,
    target VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    added_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS annotators (
    annotator_id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    code_hash VARCHAR NOT NULL UNIQUE,
    issued_at TIMESTAMP NOT NULL,
    revoked BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS annotation_sample (
    decision_id VARCHAR PRIMARY KEY,
    submission_id VARCHAR NOT NULL,
    stratum VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    seed INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS annotation_answers (
    decision_id VARCHAR NOT NULL,
    annotator_id VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    answered_at TIMESTAMP NOT NULL,
    PRIMARY KEY (decision_id, annotator_id)
);
"""


@contextmanager
def _db(db: str | Path | None, *, read_only: bool = False) -> Iterator[Any]:
    with connect_studies(db, read_only=read_only) as con:
        con.schema("annotation", _SCHEMA)
        yield con


def _frame(con, sql: str, params: list | None = None) -> pd.DataFrame:
    return con.frame(sql, params or [])


# --- decisions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """One judge decision: is ``unit`` supported by ``target``? The judge said ``label``."""

    decision_id: str
    submission_id: str
    dialogue_id: int
    turn: int
    role: str
    side: str
    unit: str
    target: str
    label: str

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.dialogue_id, self.turn, self.role)


_DECISION_FIELDS = (
    "submission_id",
    "dialogue_id",
    "turn",
    "role",
    "side",
    "unit",
    "target",
    "label",
)


def decision_id(row: Mapping[str, Any]) -> str:
    """A stable id for a decision: a hash of its submission, item key, side, unit and target."""
    parts = [
        row["submission_id"],
        row["dialogue_id"],
        row["turn"],
        row["role"],
        row["side"],
        row["unit"],
        row["target"],
    ]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:20]


def _check_row(i: int, row: Mapping[str, Any]) -> dict[str, Any]:
    where = f"decision row {i}"
    if not isinstance(row, Mapping):
        raise AnnotationError(f"{where}: expected a mapping with {', '.join(_DECISION_FIELDS)}.")
    missing = [f for f in _DECISION_FIELDS if f not in row]
    if missing:
        raise AnnotationError(f"{where}: missing field(s) {', '.join(missing)}.")
    out = {f: row[f] for f in _DECISION_FIELDS}
    for f in ("dialogue_id", "turn"):
        if isinstance(out[f], bool) or not isinstance(out[f], int):
            raise AnnotationError(f"{where}: '{f}' must be an integer, got {out[f]!r}.")
    if out["role"] not in ROLES:
        raise AnnotationError(f"{where}: role {out['role']!r} is not one of {', '.join(ROLES)}.")
    if out["side"] not in SIDES:
        raise AnnotationError(
            f"{where}: side {out['side']!r} is not one of {', '.join(SIDES)} ('precision': a "
            "prediction unit judged against the reference; 'recall': a reference unit judged "
            "against the prediction)."
        )
    if out["label"] not in LABELS:
        raise AnnotationError(f"{where}: label {out['label']!r} is not one of {', '.join(LABELS)}.")
    for f in ("submission_id", "unit", "target"):
        if not isinstance(out[f], str) or (f != "target" and not out[f].strip()):
            raise AnnotationError(f"{where}: '{f}' must be a non-empty string.")
    out["submission_id"] = str(out["submission_id"])
    out["decision_id"] = decision_id(out)
    return out


def add_decisions(rows: Iterable[Mapping[str, Any]], *, db: str | Path | None = None) -> int:
    """Store judged per-item details (all rows are checked first; nothing is stored on error).

    Each row has ``submission_id, dialogue_id, turn, role, side, unit, target, label``. A row
    that was stored before (same submission, item, side, unit and target) gets the new label.
    Returns the number of rows stored.
    """
    checked = [_check_row(i, r) for i, r in enumerate(rows, start=1)]
    if not checked:
        return 0
    df = pd.DataFrame(checked).drop_duplicates("decision_id", keep="last")
    df["added_at"] = studiesdb.now()
    cols = ("decision_id", *_DECISION_FIELDS, "added_at")
    with _db(db) as con:
        con.upsert("judge_decisions", df[list(cols)], ["decision_id"])
    return len(df)


def submissions(*, db: str | Path | None = None) -> pd.DataFrame:
    """Submissions with stored decisions: id, decisions, sampled, answers (newest first)."""
    with _db(db, read_only=True) as con:
        return _frame(
            con,
            """
            SELECT d.submission_id, count(*) AS decisions,
                   count(s.decision_id) AS sampled,
                   (SELECT count(*) FROM annotation_answers a
                      JOIN judge_decisions d2 USING (decision_id)
                     WHERE d2.submission_id = d.submission_id) AS answers,
                   max(d.added_at) AS added_at
              FROM judge_decisions d LEFT JOIN annotation_sample s USING (decision_id)
             GROUP BY d.submission_id ORDER BY added_at DESC, d.submission_id
            """,
        )


# --- admin: codes and samples ----------------------------------------------------------------


def _check_admin(token: str | None) -> None:
    """The admin token's check (:mod:`etclib.admintoken`: strength, rate limit, logging)."""
    from . import admintoken

    admintoken.verify(token, "judge-vs-human admin")


def _hash_code(code: str) -> str:
    return hashlib.sha256(f"etc-annotator-code:{code.strip()}".encode()).hexdigest()


@dataclass(frozen=True)
class IssuedCode:
    """A new annotator code: show ``code`` once to the annotator; only its hash is stored."""

    annotator_id: str
    name: str
    code: str


def issue_code(
    admin_token: str | None, name: str = "", *, db: str | Path | None = None
) -> IssuedCode:
    """Issue a new annotator code (needs the admin token). ``name`` is a note for the admin."""
    _check_admin(admin_token)
    code = secrets.token_urlsafe(12)
    annotator_id = f"ann-{secrets.token_hex(4)}"
    with _db(db) as con:
        con.execute(
            "INSERT INTO annotators VALUES (?, ?, ?, ?, false)",
            [annotator_id, name.strip(), _hash_code(code), studiesdb.now()],
        )
    return IssuedCode(annotator_id, name.strip(), code)


def revoke_code(
    admin_token: str | None, annotator_id: str, *, db: str | Path | None = None
) -> None:
    """Revoke an annotator's code (needs the admin token); their past answers are kept."""
    _check_admin(admin_token)
    with _db(db) as con:
        found = con.execute(
            "UPDATE annotators SET revoked = true WHERE annotator_id = ? RETURNING annotator_id",
            [annotator_id],
        ).fetchall()
    if not found:
        raise AnnotationError(f"No annotator {annotator_id!r}: see annotators() for the ids.")


def annotators(*, db: str | Path | None = None) -> pd.DataFrame:
    """Issued annotators (id, name, issued_at, revoked, answers); never the codes."""
    with _db(db, read_only=True) as con:
        return _frame(
            con,
            """
            SELECT a.annotator_id, a.name, a.issued_at, a.revoked, count(x.decision_id) AS answers
              FROM annotators a LEFT JOIN annotation_answers x USING (annotator_id)
             GROUP BY a.annotator_id, a.name, a.issued_at, a.revoked ORDER BY a.issued_at
            """,
        )


def _annotator(con, code: str | None) -> str:
    if not code or not str(code).strip():
        raise AccessDenied("An annotator code is needed to answer: ask the study's admin for one.")
    row = con.execute(
        "SELECT annotator_id, revoked FROM annotators WHERE code_hash = ?", [_hash_code(str(code))]
    ).fetchone()
    if row is None:
        raise AccessDenied("Unknown annotator code: check it for typos or ask the admin for one.")
    if row[1]:
        raise AccessDenied("This annotator code was revoked: ask the admin for a new one.")
    return row[0]


def annotator_for_code(code: str | None, *, db: str | Path | None = None) -> str:
    """The annotator id that ``code`` belongs to; raises AccessDenied for a bad code."""
    with _db(db, read_only=True) as con:
        return _annotator(con, code)


def draw_sample(
    admin_token: str | None,
    submission_id: str,
    per_label: int = 20,
    *,
    seed: int = 0,
    db: str | Path | None = None,
) -> dict[str, int]:
    """Sample up to ``per_label`` decisions of each judge label for re-checking (admin only).

    Stratified by the judge's label so that rare labels (often Neutral) are checked too. The
    draw is reproducible from ``seed``; decisions already in the sample stay, and are counted
    towards ``per_label``. Returns the sample size per label after drawing.
    """
    _check_admin(admin_token)
    if per_label < 1:
        raise AnnotationError(f"per_label must be at least 1, got {per_label}.")
    with _db(db) as con:
        con.serialize("annotation_sample")
        sizes = _draw(con, submission_id, per_label, seed, by_side=False)
    return {label: sum(n for (lab, _), n in sizes.items() if lab == label) for label in LABELS}


def _draw(
    con, submission_id: str, per_stratum: int, seed: int, *, by_side: bool
) -> dict[tuple[str, str], int]:
    """Add up to ``per_stratum`` decisions of each stratum to the sample; the size per stratum.

    Strata are the judge's labels, crossed with the side (precision / recall) when ``by_side``.
    Decisions already sampled stay and count towards their stratum. Seeded by ``seed`` and the
    submission id, so one submission's draw never depends on another's.
    """
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
#: Answers wanted per sampled decision: two people per decision give the human yardstick.
ANSWERS_PER_DECISION = 2


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
    """The decision rows of one judge run, from the judge's per-item details.

    Each detail is ``etclib.metrics.judge``'s (``units`` / ``unit_labels``: the prediction's
    units judged against the reference, the ``precision`` side; ``ref_units`` /
    ``ref_unit_labels``: the reference's units judged against the prediction, the ``recall``
    side). Items that failed or have no labels give no row.
    """
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
    """Store one judge run's decisions and draw Study 2's automatic sample from them.

    The sample is balanced over the judge's three labels and the two sides: up to
    ``per_stratum`` decisions of each (label, side) stratum, drawn with ``seed`` (defaults:
    :func:`auto_sample_settings`). Returns ``{"stored": n, "sampled": n}`` (sampled: the
    submissions' sample size after drawing); nothing is sampled when ``per_stratum`` is 0.
    """
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


# --- annotating ----------------------------------------------------------------------------


def _decision(row) -> Decision:
    return Decision(*row)


_DECISION_COLUMNS = "d.decision_id, d.submission_id, d.dialogue_id, d.turn, d.role, d.side, d.unit, d.target, d.label"


def next_decision(
    code: str | None, submission_id: str | None = None, *, db: str | Path | None = None
) -> Decision | None:
    """The next sampled decision this annotator has not answered yet, or None when done.

    Balanced across annotators: first a decision someone else answered but that still lacks
    :data:`ANSWERS_PER_DECISION` answers (so pairs complete and people can be compared), then
    one nobody answered, then those with the fewest answers; within each, the sample's order.
    The returned decision carries the judge's label: a page must hide it until the annotator has
    answered (see docs/judge_vs_human.md).
    """
    with _db(db, read_only=True) as con:
        annotator_id = _annotator(con, code)
        row = con.execute(
            f"""
            WITH n AS (
                SELECT decision_id, count(*) AS answers FROM annotation_answers
                 GROUP BY decision_id)
            SELECT {_DECISION_COLUMNS}
              FROM annotation_sample s JOIN judge_decisions d USING (decision_id)
              LEFT JOIN n USING (decision_id)
             WHERE (CAST(? AS VARCHAR) IS NULL OR s.submission_id = ?)
               AND s.decision_id NOT IN (
                   SELECT decision_id FROM annotation_answers WHERE annotator_id = ?)
             ORDER BY coalesce(n.answers, 0) >= ?,
                      CASE WHEN coalesce(n.answers, 0) < ? THEN -coalesce(n.answers, 0)
                           ELSE coalesce(n.answers, 0) END,
                      s.position
             LIMIT 1
            """,
            [
                submission_id,
                submission_id,
                annotator_id,
                ANSWERS_PER_DECISION,
                ANSWERS_PER_DECISION,
            ],
        ).fetchone()
    return _decision(row) if row else None


def progress(
    code: str | None, submission_id: str | None = None, *, db: str | Path | None = None
) -> tuple[int, int]:
    """(answered, sampled) for this annotator, over one submission's sample or all samples."""
    with _db(db, read_only=True) as con:
        annotator_id = _annotator(con, code)
        total, done = con.execute(
            """
            SELECT count(*), count(a.decision_id)
              FROM annotation_sample s
              LEFT JOIN annotation_answers a
                ON a.decision_id = s.decision_id AND a.annotator_id = ?
             WHERE (CAST(? AS VARCHAR) IS NULL OR s.submission_id = ?)
            """,
            [annotator_id, submission_id, submission_id],
        ).fetchone()
    return int(done), int(total)


def record_answer(
    code: str | None, decision: str, label: str, *, db: str | Path | None = None
) -> Decision:
    """Store an annotator's answer to a sampled decision and return the decision (with the
    judge's label, to reveal now). Raises AccessDenied without a valid code."""
    if label not in LABELS:
        raise AnnotationError(f"Answer {label!r} is not one of {', '.join(LABELS)}.")
    with _db(db) as con:
        annotator_id = _annotator(con, code)
        row = con.execute(
            f"""
            SELECT {_DECISION_COLUMNS}
              FROM judge_decisions d JOIN annotation_sample s USING (decision_id)
             WHERE d.decision_id = ?
            """,
            [decision],
        ).fetchone()
        if row is None:
            raise AnnotationError(
                f"Decision {decision!r} is not in the annotation sample: answer only decisions "
                "that next_decision() hands out."
            )
        answer = pd.DataFrame(
            [[decision, annotator_id, label, studiesdb.now()]],
            columns=["decision_id", "annotator_id", "label", "answered_at"],
        )
        con.upsert("annotation_answers", answer, ["decision_id", "annotator_id"])
    return _decision(row)


# --- results -------------------------------------------------------------------------------


def human_label(answers: Iterable[str]) -> str | None:
    """The people's label for one decision: the most frequent answer; ties go to the less
    supportive label (Not Supported, then Neutral, then Supported). None without answers."""
    answers = list(answers)
    if not answers:
        return None
    top = max(answers.count(x) for x in set(answers))
    return next(x for x in _TIE_ORDER if answers.count(x) == top)


def submission_metrics(decisions: pd.DataFrame, label_column: str = "label") -> dict[str, float]:
    """SPEC precision / recall / f1 (x100) of one submission from its unit decisions.

    Items are those with at least one reference unit (a ``recall`` row); an item without
    prediction units has precision = recall = 0 as its reference units are then unsupported.
    Neutral counts as not supported.
    """
    if decisions.empty:
        return {"precision": math.nan, "recall": math.nan, "f1": math.nan, "items": 0}
    d = decisions.assign(ok=decisions[label_column].eq("Supported"))
    key = ["dialogue_id", "turn", "role"]
    by = d.groupby([*key, "side"])["ok"].mean().unstack("side")
    by = by.reindex(columns=list(SIDES))
    by = by[by["recall"].notna()]
    if by.empty:
        return {"precision": math.nan, "recall": math.nan, "f1": math.nan, "items": 0}
    p = by["precision"].fillna(0.0)
    r = by["recall"]
    f1 = (2 * p * r / (p + r)).where(p + r > 0, 0.0)
    return {
        "precision": 100 * float(p.mean()),
        "recall": 100 * float(r.mean()),
        "f1": 100 * float(f1.mean()),
        "items": int(len(by)),
    }


@dataclass(frozen=True)
class AnnotationResults:
    """Study 2 results for one submission (or all). NaN where there are too few answers."""

    submission_id: str | None
    n_answers: int
    n_decisions: int
    n_annotators: int
    judge_human_kappa: float
    judge_human_low: float
    judge_human_high: float
    human_human_kappa: float
    human_human_alpha: float
    n_double: int
    confusion: pd.DataFrame
    metrics: pd.DataFrame

    @property
    def empty(self) -> bool:
        return self.n_answers == 0


def answers_frame(
    submission_id: str | None = None, *, db: str | Path | None = None
) -> pd.DataFrame:
    """Every answer with its decision: one row per (decision, annotator), oldest first."""
    with _db(db, read_only=True) as con:
        return _frame(
            con,
            f"""
            SELECT {_DECISION_COLUMNS}, s.stratum, a.annotator_id, a.label AS human_label,
                   a.answered_at
              FROM annotation_answers a
              JOIN judge_decisions d USING (decision_id)
              LEFT JOIN annotation_sample s USING (decision_id)
             WHERE (CAST(? AS VARCHAR) IS NULL OR d.submission_id = ?)
             ORDER BY a.answered_at, d.decision_id, a.annotator_id
            """,
            [submission_id, submission_id],
        )


def results(
    submission_id: str | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    db: str | Path | None = None,
) -> AnnotationResults:
    """Judge-human agreement, human-human agreement, the confusion matrix, and how the
    submission's precision / recall / f1 change when people's labels replace the judge's.

    - judge-human kappa: Cohen's kappa over every (judge label, one person's answer) pair, with a
      seeded bootstrap interval over answers;
    - human-human: Fleiss' kappa over decisions with two or more answers (their first two
      answers), and Krippendorff's alpha (nominal) over all answers;
    - metrics: per submission, SPEC's precision / recall / f1 from all its stored decisions,
      with the judge's labels and with people's labels (:func:`human_label`) on re-checked ones.
    """
    answers = answers_frame(submission_id, db=db)
    labels = list(LABELS)
    if answers.empty:
        confusion = pd.DataFrame(
            0,
            index=pd.Index(labels, name="judge"),
            columns=pd.Index(labels, name="human"),
        )
        return AnnotationResults(
            submission_id,
            0,
            0,
            0,
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            0,
            confusion,
            pd.DataFrame(
                columns=[
                    "submission_id",
                    "metric",
                    "judge",
                    "with_humans",
                    "change",
                    "items",
                    "relabelled",
                ]
            ),
        )
    judge = answers["label"].tolist()
    human = answers["human_label"].tolist()
    kappa, low, high = kappa_with_ci(judge, human, labels, n_resamples=n_resamples, seed=seed)
    confusion = confusion_matrix(judge, human, labels, rows="judge", columns="human")

    per_decision = answers.groupby("decision_id")["human_label"].apply(list)
    double = per_decision[per_decision.map(len) >= 2]
    hh_kappa = math.nan
    if len(double):
        counts = [[first_two[:2].count(x) for x in labels] for first_two in double]
        hh_kappa = fleiss_kappa(counts)
    annotator_ids = sorted(answers["annotator_id"].unique())
    table = answers.pivot_table(
        index="annotator_id", columns="decision_id", values="human_label", aggfunc="first"
    ).reindex(annotator_ids)
    alpha = math.nan
    if len(double):
        alpha = krippendorff_alpha(
            [[None if pd.isna(v) else v for v in row] for row in table.to_numpy().tolist()]
        )

    people = per_decision.map(human_label)
    rows = []
    with _db(db, read_only=True) as con:
        for sid in sorted(answers["submission_id"].unique()):
            decisions = _frame(
                con,
                "SELECT decision_id, dialogue_id, turn, role, side, label FROM judge_decisions "
                "WHERE submission_id = ?",
                [sid],
            )
            replaced = decisions["decision_id"].map(people)
            decisions["with_humans"] = replaced.fillna(decisions["label"])
            before = submission_metrics(decisions, "label")
            after = submission_metrics(decisions, "with_humans")
            relabelled = int((decisions["with_humans"] != decisions["label"]).sum())
            for metric in ("precision", "recall", "f1"):
                rows.append(
                    {
                        "submission_id": sid,
                        "metric": metric,
                        "judge": before[metric],
                        "with_humans": after[metric],
                        "change": after[metric] - before[metric],
                        "items": before["items"],
                        "relabelled": relabelled,
                    }
                )
    return AnnotationResults(
        submission_id=submission_id,
        n_answers=len(answers),
        n_decisions=int(answers["decision_id"].nunique()),
        n_annotators=len(annotator_ids),
        judge_human_kappa=kappa,
        judge_human_low=low,
        judge_human_high=high,
        human_human_kappa=hh_kappa,
        human_human_alpha=alpha,
        n_double=len(double),
        confusion=confusion,
        metrics=pd.DataFrame(rows),
    )


EXPORT_COLUMNS = (
    "submission_id",
    "dialogue_id",
    "turn",
    "role",
    "side",
    "unit",
    "target",
    "judge_label",
    "stratum",
    "annotator_id",
    "human_label",
    "answered_at",
    "decision_id",
)


def export_csv(submission_id: str | None = None, *, db: str | Path | None = None) -> str:
    """Every answer as CSV text (UTF-8, header row): decision, judge label, annotator, answer."""
    answers = answers_frame(submission_id, db=db).rename(columns={"label": "judge_label"})
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # "\r\n": a lone "\r" in a cell is quoted
    writer.writerow(EXPORT_COLUMNS)
    for row in answers.itertuples(index=False):
        rec = row._asdict()
        writer.writerow(["" if pd.isna(rec[c]) else rec[c] for c in EXPORT_COLUMNS])
    return buffer.getvalue()


def require_admin(token: str | None) -> None:
    """Raise AccessDenied unless ``token`` is the admin token (``ETC_ADMIN_TOKEN``); for the
    other studies that reuse this module's codes (:mod:`etclib.causes`)."""
    _check_admin(token)
