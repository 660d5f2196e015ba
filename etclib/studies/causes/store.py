"""The cause layer's tables in the studies database."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from etclib.studies import db as studiesdb
from etclib.studies import labelling

SCHEMA = studiesdb.register(
    "causes",
    labelling.runs_table("cause_runs")
    + """
CREATE TABLE IF NOT EXISTS cause_labels (
    source VARCHAR NOT NULL,
    source_id VARCHAR NOT NULL,
    dialogue_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    causes VARCHAR,
    cause_type VARCHAR,
    raw VARCHAR NOT NULL,
    labelled_at TIMESTAMP NOT NULL,
    PRIMARY KEY (source, source_id, dialogue_id, turn, role)
);
CREATE TABLE IF NOT EXISTS cause_sample (
    dialogue_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    PRIMARY KEY (dialogue_id, turn, role)
);
""",
)


@contextmanager
def _Db(db: str | Path | None, read_only: bool = False) -> Iterator[Any]:
    """``with _Db(db) as con``: the studies database with the cause tables."""
    with studiesdb.connect(db, read_only=read_only) as con:
        con.schema("causes", SCHEMA)
        yield con


def _join(pos: Sequence[int]) -> str:
    return ",".join(str(p) for p in pos)


def _split(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in (text or "").split(",") if x)
