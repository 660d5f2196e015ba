"""The leaderboard's clock: one definition of "now" for every table's timestamps."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """The current UTC time, naive (as stored in TIMESTAMP columns)."""
    return datetime.now(UTC).replace(tzinfo=None)
