"""A submitter's own entries: who owns one, what its owner sees and may change.

An entry is its owner's by the signed-in account that submitted it and by its private edit key
(``ID.SECRET``, stored only as the secret's SHA-256). Anyone else gets the not-found answer of an
unknown id, so no one learns of another visitor's entries. Entries the moderators hid or removed
are theirs to change. docs/leaderboard.md, "Your own entries".
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pandas as pd

from . import settings
from .clock import now
from .db import Database, resolve
from .errors import LeaderboardError, MetadataError, NotFoundError
from .metadata import EDITABLE, check_field
from .names import reserved_problem
from .submit import key_digest, own_names, submitter_hash, used_today, utc_midnight

#: What an owner may set the visibility of an entry to, from what.
VISIBILITY_CHANGES: dict[str, tuple[str, ...]] = {
    "private": ("public",),
    "public": ("private",),
    "withdrawn": ("public", "private"),
}


@dataclass(frozen=True)
class Owner:
    """Who asks: a signed-in account's key (``views.identity``), edit keys, or both."""

    account_key: str | None = None
    edit_keys: tuple[str, ...] = ()


def entry_of_key(edit_key: str) -> str:
    """The entry id an edit key names (not checked)."""
    return str(edit_key).strip().partition(".")[0]


def _owns(row: dict[str, Any], owner: Owner) -> bool:
    if owner.account_key and row["owner_hash"]:
        mine = submitter_hash(owner.account_key)
        if hmac.compare_digest(mine.encode(), str(row["owner_hash"]).encode()):
            return True
    for key in owner.edit_keys:
        sid, _, secret = str(key).strip().partition(".")
        if sid == row["id"] and secret and row["edit_key_hash"]:
            if hmac.compare_digest(key_digest(secret).encode(), str(row["edit_key_hash"]).encode()):
                return True
    return False


_FIELDS = (
    "id, kind, track, name, team, created_at, status, visibility, model_url, paper_url, "
    "parameters, open_weights, licence, owner_hash, edit_key_hash"
)
_COLUMNS = [c.strip() for c in _FIELDS.split(",")]


def entries(owner: Owner, *, db: Database | None = None) -> pd.DataFrame:
    """The entries ``owner`` owns, newest first (never a removed one)."""
    db = resolve(db)
    ids = sorted({entry_of_key(k) for k in owner.edit_keys})
    clauses, params = [], []
    if owner.account_key:
        clauses.append("owner_hash = ?")
        params.append(submitter_hash(owner.account_key))
    if ids:
        clauses.append(f"id IN ({', '.join('?' for _ in ids)})")
        params += ids
    if not clauses:
        return pd.DataFrame(columns=_COLUMNS[:-2])
    rows = db.query(
        f"SELECT {_FIELDS} FROM submissions WHERE kind = 'submission' "
        f"AND visibility <> 'deleted' AND ({' OR '.join(clauses)}) ORDER BY created_at DESC, id",
        params,
    )
    found = [dict(zip(_COLUMNS, r)) for r in rows]
    # the columns leave out the two hashes
    return pd.DataFrame([r for r in found if _owns(r, owner)], columns=_COLUMNS[:-2])


def _mine(cur, submission_id: str, owner: Owner) -> dict[str, Any]:
    """The owner's entry ``submission_id`` (its row), or the not-found answer of any other id."""
    row = cur.execute(
        f"SELECT {_FIELDS} FROM submissions WHERE id = ? AND kind = 'submission'",
        [str(submission_id)],
    ).fetchone()
    rec = dict(zip(_COLUMNS, row)) if row else None
    if rec is None or rec["visibility"] == "deleted" or not _owns(rec, owner):
        raise NotFoundError.entry(submission_id)
    return rec


def _owned(cur, submission_id: str, owner: Owner) -> dict[str, Any]:
    """:func:`_mine`, refused when the entry may no longer be changed."""
    rec = _mine(cur, submission_id, owner)
    if rec["visibility"] == "hidden":
        raise LeaderboardError(
            "The moderators have hidden this entry, so it cannot be changed; write to them to "
            "ask why."
        )
    if rec["visibility"] == "withdrawn":
        raise LeaderboardError("This entry was withdrawn; it can no longer be changed.")
    return rec


def _record(cur, submission_id: str, what: str, old: Any, new: Any, owner: Owner, at) -> None:
    by = "signed-in account" if owner.account_key else "edit key"
    cur.execute(
        "INSERT INTO entry_changes VALUES (?, ?, ?, ?, ?, ?)",
        [submission_id, at, what, "" if old is None else str(old), str(new), by],
    )


def update(
    submission_id: str, owner: Owner, changes: dict[str, str], *, db: Database | None = None
) -> list[str]:
    """Set the :data:`EDITABLE` fields in ``changes``; the fields that changed."""
    problems = {k: "cannot be changed after submitting." for k in changes if k not in EDITABLE}
    for key, value in changes.items():
        if key in EDITABLE:
            problem = check_field(key, value if isinstance(value, str) else str(value))
            if problem:
                problems[key] = problem
    db = resolve(db)
    if "name" in changes and "name" not in problems:
        reserved = reserved_problem(changes["name"], own_names(db))  # as at submission
        if reserved:
            problems["name"] = reserved
    if problems:
        raise MetadataError(problems)
    with db.write() as cur:
        rec = _owned(cur, submission_id, owner)
        at = now()
        changed = [k for k, v in changes.items() if (rec[k] or "") != v]
        for key in changed:
            # one statement per field: the column names come from EDITABLE, never the caller
            cur.execute(f"UPDATE submissions SET {key} = ? WHERE id = ?", [changes[key], rec["id"]])
            _record(cur, rec["id"], key, rec[key], changes[key], owner, at)
    if changed:
        db.invalidate()
    return changed


def set_visibility(
    submission_id: str, owner: Owner, visibility: str, *, db: Database | None = None
) -> None:
    """Make the owner's entry ``private``, ``public`` again, or ``withdrawn`` (for good)."""
    if visibility not in VISIBILITY_CHANGES:
        raise LeaderboardError(
            f"An entry can be made {', '.join(VISIBILITY_CHANGES)}; not {visibility!r}."
        )
    db = resolve(db)
    with db.write() as cur:
        rec = _owned(cur, submission_id, owner)
        if rec["visibility"] == visibility:
            return
        if rec["visibility"] not in VISIBILITY_CHANGES[visibility]:
            raise LeaderboardError(f"A {rec['visibility']} entry cannot be made {visibility}.")
        cur.execute("UPDATE submissions SET visibility = ? WHERE id = ?", [visibility, rec["id"]])
        _record(cur, rec["id"], "visibility", rec["visibility"], visibility, owner, now())
    db.invalidate()


def history(submission_id: str, owner: Owner, *, db: Database | None = None) -> pd.DataFrame:
    """Everything that happened to the owner's entry, oldest first (at, what, from, to, by)."""
    db = resolve(db)
    cur = db.cursor()
    rec = _mine(cur, submission_id, owner)
    statuses = [
        {"at": at, "what": "status", "from": "", "to": status, "by": "scoring"}
        for at, status in cur.execute(
            "SELECT happened_at, status FROM status_history WHERE submission_id = ? "
            "ORDER BY happened_at",
            [rec["id"]],
        ).fetchall()
    ]
    changes = [
        {"at": at, "what": what, "from": old or "", "to": new or "", "by": by}
        for at, what, old, new, by in cur.execute(
            "SELECT happened_at, what, old_value, new_value, changed_by FROM entry_changes "
            "WHERE submission_id = ? ORDER BY happened_at",
            [rec["id"]],
        ).fetchall()
    ]
    out = pd.DataFrame(statuses + changes, columns=["at", "what", "from", "to", "by"])
    return out.sort_values("at", kind="stable").reset_index(drop=True)


def quota(submitter_key: str, *, db: Database | None = None) -> dict[str, Any]:
    """Today's submissions of ``submitter_key``: ``used``, ``limit``, ``left``, ``resets``."""
    db = resolve(db)
    at = now()
    used = used_today(db.cursor(), submitter_hash(submitter_key), at)
    limit = settings.daily_limit()
    resets: datetime = utc_midnight(at) + timedelta(days=1)
    return {"used": used, "limit": limit, "left": max(0, limit - used), "resets": resets}
