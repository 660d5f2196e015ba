"""Every exception the leaderboard raises on purpose (all ``etclib.core.errors.EtcError``)."""

from __future__ import annotations

from etclib.core.errors import EtcError, Problem


class LeaderboardError(EtcError):
    """Base class of the leaderboard's errors."""


class SubmissionError(LeaderboardError):
    """A submission was refused and nothing was stored; ``problems`` lists why (line-level)."""

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        self.problems: list[Problem] = list(problems or [])
        super().__init__(message)


class MetadataError(SubmissionError):
    """The submission's metadata is invalid; ``fields`` maps each bad field to what is wrong."""

    def __init__(self, fields: dict[str, str]) -> None:
        self.fields = dict(fields)
        lines = "\n".join(f"  {k}: {v}" for k, v in self.fields.items())
        noun = "problem" if len(self.fields) == 1 else "problems"
        super().__init__(
            f"Submission details refused, {len(self.fields)} {noun}; nothing was stored:\n{lines}",
            [Problem(0, f"{k}: {v}") for k, v in self.fields.items()],
        )


class LimitError(LeaderboardError):
    """A daily, queue or size limit refuses the submission for now; nothing was stored."""

    exit_code = 3


class NotFoundError(LeaderboardError):
    """No submission has the given id (or it was deleted)."""

    exit_code = 5

    @classmethod
    def entry(cls, submission_id: object) -> NotFoundError:
        """The one message for an id that names no entry one may see (unknown, removed, or
        another visitor's private one: all read the same)."""
        text = str(submission_id)  # ids are 12 characters; a link can carry anything
        shown = text if len(text) <= 24 else text[:23] + "…"
        return cls(f"No entry {shown!r} was found: check the id.")


class AdminError(LeaderboardError):
    """An admin operation was refused: admin disabled, or a wrong token."""

    exit_code = 6


class ReferenceDataError(LeaderboardError):
    """The published reference results (paper_baselines.json) cannot be found or read."""


class StoredPredictionsError(LeaderboardError):
    """A stored submission's rows no longer match the content hash they were stored with."""

    def __init__(self, submission_id: str, found: int, expected: int) -> None:
        self.submission_id = submission_id
        super().__init__(
            f"The stored predictions of submission {submission_id} do not match what was "
            f"accepted ({found:,} rows stored, the split has {expected:,} items, and their "
            "content hash differs): the board's rows were changed after it was submitted. "
            "Restore the board from a backup, or delete the entry and submit the file again; "
            "it was not scored."
        )


class StorageError(LeaderboardError):
    """The leaderboard database cannot be used: missing, unwritable, or damaged."""

    exit_code = 7

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(message)


class DatabaseMissingError(StorageError):
    """No database file at the configured path, and creating one was not asked for."""

    def __init__(self, path: str, source: str) -> None:
        super().__init__(
            path,
            f"No leaderboard database at {path} ({source}). Check the path for a typo; to "
            "start a new, empty board there, run the command again with --create (the site "
            "and `python -m leaderboard seed-baselines` create it; in Python: "
            "open_db(path, create=True)).",
        )


class DatabaseUnwritableError(StorageError):
    """The database file or its folder cannot be written (permissions, read-only disk)."""

    def __init__(self, path: str, folder: str, reason: str) -> None:
        if "no space" in reason.lower():  # ENOSPC: permissions are not the cause
            super().__init__(
                path,
                f"Cannot write the leaderboard database {path} (no space left on device). Free "
                f"space on the disk that holds {folder} (the database and its write-ahead "
                "log grow there), or point ETC_LEADERBOARD_DB at a disk with room; nothing "
                "was lost: the write was rolled back.",
            )
            return
        super().__init__(
            path,
            f"Cannot write the leaderboard database {path} ({reason}). This process needs "
            f"write access to the file and to its folder {folder}, where the lock file and "
            "its write-ahead log live: make the folder writable for the user running "
            "this command or the site (chown/chmod), or point ETC_LEADERBOARD_DB at a "
            "writable place.",
        )


class DatabaseCorruptError(StorageError):
    """The database file is damaged (truncated, bit flips) or not a leaderboard database at all."""

    def __init__(self, path: str, reason: str) -> None:
        reason = " ".join(reason.split())[:200]
        super().__init__(
            path,
            f"The leaderboard database {path} is damaged or is not a leaderboard database "
            f"({reason}); nothing was written to it. Restore it from a backup (a copy of the "
            "file, or the board exported to the Hub), or move it aside and start a new board "
            "with `python -m leaderboard seed-baselines`.",
        )


class DatabaseServerError(StorageError):
    """The PostgreSQL server holding the leaderboard cannot be reached or refuses to write."""

    def __init__(self, url: str, reason: str) -> None:
        reason = " ".join(reason.split())[:300]
        super().__init__(
            url,
            f"The leaderboard database {url} (PostgreSQL) cannot be used: {reason}. Check that "
            "the server runs and that ETC_LEADERBOARD_DB names it with the right user, password "
            "and database (the user needs to create tables on first use, then to read and "
            "write them); nothing was changed.",
        )


class WorkerStoppedError(LeaderboardError):
    """The scoring worker stopped before the queue was empty (timeout, repeated errors)."""

    exit_code = 8
