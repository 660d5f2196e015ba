"""The site's admin forms: a wrong admin token counts against this visitor in the board's database
(:mod:`leaderboard.limits`), so no reload, session or replica resets the guesses; in this process
when the board is down."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from etclib.core import admintoken

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)
BUCKET = "admin-failure"


class BoardFailures:
    """Wrong admin tokens counted in the board's database; in memory when it is down."""

    def failures(self, key: str, window_s: float) -> list[float]:
        from leaderboard import LeaderboardError, limits
        from leaderboard.clock import now

        try:
            times = limits.recent(BUCKET, key, window_s)
        except LeaderboardError as exc:
            log.warning("admin guesses counted in memory: the board is unavailable (%s)", exc)
            return _FALLBACK.failures(key, window_s)
        at = now()
        return [(at - t).total_seconds() for t in times]

    def add(self, key: str) -> None:
        from leaderboard import LeaderboardError, limits

        try:
            limits.record(BUCKET, key)
        except LeaderboardError:
            _FALLBACK.add(key)

    def clear(self, key: str) -> None:
        from leaderboard import LeaderboardError, limits

        _FALLBACK.clear(key)
        try:
            limits.clear(BUCKET, key)
        except LeaderboardError:
            pass


_FALLBACK = admintoken.MemoryFailures()


def session_key() -> str:
    """This visitor's key for admin attempts (the same in every session of theirs)."""
    from views.identity import limit_key

    return "admin:" + limit_key()


@contextmanager
def admin_session() -> Iterator[None]:
    """Count the admin attempts made in the block against this visitor."""
    with admintoken.session(session_key(), BoardFailures()):
        yield


#: What the operator page lists of each submission (``leaderboard.admin_submissions``), in order.
MODERATION_COLUMNS = (
    "id",
    "name",
    "team",
    "contact",
    "account",
    "kind",
    "status",
    "visibility",
    "created_at",
    "failure_detail",
)


def moderation_table(submissions: pd.DataFrame) -> pd.DataFrame:
    """The operator's list of submissions: who, what state, why a job failed."""
    return submissions[[c for c in MODERATION_COLUMNS if c in submissions.columns]]
