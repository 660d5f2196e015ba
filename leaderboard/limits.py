"""Rate limits that count per visitor (or per model) in the board's database.

Each counted event is a row of ``limit_events`` (bucket, the sha256 of the key, when), read over
a sliding window, so a reload, a new session or another replica of the site does not reset it.

>>> take("chat", "address:203.0.113.5", limit=20, window_s=60)   # doctest: +SKIP
0.0
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from .clock import now
from .db import Database, resolve

#: Events older than this are deleted on the next write (the longest window any limit uses).
KEEP = timedelta(days=1)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def recent(bucket: str, key: str, window_s: float, *, db: Database | None = None) -> list:
    """The times (oldest first) of ``key``'s events in ``bucket`` within the last ``window_s``."""
    db = resolve(db)
    since = now() - timedelta(seconds=window_s)
    rows = db.query(
        "SELECT happened_at FROM limit_events WHERE bucket = ? AND key_hash = ? "
        "AND happened_at > ? ORDER BY happened_at",
        [bucket, _hash(key), since],
    )
    return [r[0] for r in rows]


def record(bucket: str, key: str, *, db: Database | None = None) -> None:
    """Count one event of ``key`` in ``bucket`` (and forget events older than :data:`KEEP`)."""
    db = resolve(db)
    at = now()
    with db.write() as cur:
        cur.execute("DELETE FROM limit_events WHERE happened_at < ?", [at - KEEP])
        cur.execute("INSERT INTO limit_events VALUES (?, ?, ?)", [bucket, _hash(key), at])


def take(
    bucket: str, key: str, limit: int, window_s: float, *, db: Database | None = None
) -> float:
    """Count one event if ``key`` has had fewer than ``limit`` in ``bucket`` within the last
    ``window_s`` seconds and return 0; else count nothing and return the seconds to wait. One
    transaction, so two sessions of one visitor never both take the last event."""
    db = resolve(db)
    at = now()
    hashed = _hash(key)
    with db.write() as cur:
        cur.execute("DELETE FROM limit_events WHERE happened_at < ?", [at - KEEP])
        rows = cur.execute(
            "SELECT happened_at FROM limit_events WHERE bucket = ? AND key_hash = ? "
            "AND happened_at > ? ORDER BY happened_at",
            [bucket, hashed, at - timedelta(seconds=window_s)],
        ).fetchall()
        wait = 0.0
        if len(rows) >= limit:  # the oldest event that counts
            wait = max(1.0, window_s - (now() - rows[len(rows) - limit][0]).total_seconds())
        if wait == 0.0:
            cur.execute("INSERT INTO limit_events VALUES (?, ?, ?)", [bucket, hashed, at])
    return wait


def clear(bucket: str, key: str, *, db: Database | None = None) -> None:
    """Forget ``key``'s events in ``bucket`` (a right admin token clears the wrong ones)."""
    db = resolve(db)
    with db.write() as cur:
        cur.execute(
            "DELETE FROM limit_events WHERE bucket = ? AND key_hash = ?", [bucket, _hash(key)]
        )
