"""Study 2's tables and its judge decisions: what people re-check (see the package docstring)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from etclib.core.errors import AnnotationError
from etclib.data.corpus import ROLES
from etclib.studies import db as studiesdb
from etclib.studies.codes import SCHEMA as SCHEMA_CODES

LABELS: tuple[str, ...] = ("Supported", "Neutral", "Not Supported")
SIDES: tuple[str, ...] = ("precision", "recall")
#: Answers wanted per sampled decision: two people per decision give the human yardstick.
ANSWERS_PER_DECISION = 2
#: When human answers to one decision tie, the less supportive label wins (in this order).
_TIE_ORDER = ("Not Supported", "Neutral", "Supported")


#: the studies database (:func:`etclib.studies.db.target`) and a connection to it for one block
studies_path = studiesdb.target
connect_studies = studiesdb.connect


_SCHEMA = studiesdb.register(
    "annotation",
    """
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
""",
)


@contextmanager
def _db(db: str | Path | None, *, read_only: bool = False) -> Iterator[Any]:
    with studiesdb.connect(db, read_only=read_only) as con:
        con.schema("codes", SCHEMA_CODES)
        con.schema("annotation", _SCHEMA)
        yield con


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
    parts = [row[f] for f in _DECISION_FIELDS if f != "label"]
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
    """Store judge decisions, all checked first (nothing is stored on error); a row stored
    before gets the new label. The number of rows stored."""
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
        return con.frame(
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
