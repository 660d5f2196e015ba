"""The few places where the leaderboard's SQL differs between engines, asked of the dialect
that every cursor of the board carries (:mod:`etclib.storage`; ``cur.dialect``).

Queries are written once, with ``?`` placeholders, in SQL every engine accepts. What cannot be:

- :func:`for_update`: row locks on a row a transaction reads to decide what to write (engines
  whose write transactions are exclusive, as SQLite's ``BEGIN IMMEDIATE``, need none);
- :func:`serialize`: a transaction-wide lock on a name, for checks that span rows (the daily
  limits, duplicates, migrating the schema);
- :func:`insert_frame`: a bulk insert of a pandas frame;
- :func:`next_id`: the next value of a sequence of ids.
"""

from __future__ import annotations

from typing import Any

from etclib.storage import dialect_for


def for_update(cur: Any) -> str:
    """The engine's row-lock clause (`` FOR UPDATE``, or nothing)."""
    return dialect_for(cur).for_update


def serialize(cur: Any, name: str) -> None:
    """Hold a lock on ``name`` until the transaction ends (where the engine needs one)."""
    dialect_for(cur).serialize(cur, name)


def insert_frame(cur: Any, table: str, frame) -> None:
    """Insert every row of ``frame`` (its columns named as the table's) into ``table``."""
    dialect_for(cur).insert_rows(
        cur, table, list(frame.columns), frame.itertuples(index=False, name=None)
    )


def next_id(cur: Any, sequence: str) -> int:
    """The next id of ``sequence`` (``job_ids``, ``score_ids``)."""
    return dialect_for(cur).next_id(cur, sequence)
