"""The ETC leaderboard: submissions, a scoring queue, bootstrap intervals, rank bands, export.

Every function takes an optional ``db=`` and otherwise uses :func:`open_db` (a SQLite file or a
PostgreSQL URL). The Python API and the errors: docs/leaderboard.md; the command line:
``python -m leaderboard --help``.
"""

from __future__ import annotations

from .admin import (
    admin_submissions,
    delete,
    hide,
    rerun_failed,
    rescore,
    rescore_all,
    unhide,
)
from .baselines import seed_baselines
from .board import (
    board_version,
    entry_scores,
    metric_columns,
    other_scores,
    ranking,
    ranking_rule,
    reference_rows,
    reported,
    tracks,
)
from .db import Database, close_all, open_db
from .entry import breakdown, detail, per_item, standing, status
from .errors import (
    AdminError,
    DatabaseCorruptError,
    DatabaseMissingError,
    DatabaseUnwritableError,
    LeaderboardError,
    LimitError,
    MetadataError,
    NotFoundError,
    ReferenceDataError,
    StorageError,
    SubmissionError,
    WorkerStoppedError,
)
from .export import export_csv, export_json, push_to_hub
from .metadata import EDITABLE, OPEN_WEIGHTS, SAW_TEST, SETTINGS, Metadata
from .owners import Owner, quota
from .owners import entries as owned_entries
from .owners import history as entry_history
from .owners import set_visibility as set_entry_visibility
from .owners import update as update_entry
from .stages import all_stages, configured_stages
from .statuses import STATUSES
from .submit import Receipt, submit
from .worker import WorkerPool, process_jobs, start_workers, stop_workers

__all__ = [
    "board_version",
    "breakdown",
    "entry_scores",
    "AdminError",
    "Database",
    "DatabaseCorruptError",
    "DatabaseMissingError",
    "DatabaseUnwritableError",
    "LeaderboardError",
    "LimitError",
    "Metadata",
    "MetadataError",
    "NotFoundError",
    "Receipt",
    "ReferenceDataError",
    "EDITABLE",
    "OPEN_WEIGHTS",
    "Owner",
    "SAW_TEST",
    "SETTINGS",
    "STATUSES",
    "StorageError",
    "SubmissionError",
    "WorkerStoppedError",
    "WorkerPool",
    "admin_submissions",
    "all_stages",
    "close_all",
    "configured_stages",
    "delete",
    "detail",
    "entry_history",
    "export_csv",
    "export_json",
    "hide",
    "metric_columns",
    "open_db",
    "owned_entries",
    "other_scores",
    "reference_rows",
    "tracks",
    "per_item",
    "process_jobs",
    "push_to_hub",
    "quota",
    "ranking",
    "ranking_rule",
    "reported",
    "rerun_failed",
    "rescore",
    "rescore_all",
    "seed_baselines",
    "set_entry_visibility",
    "standing",
    "start_workers",
    "status",
    "stop_workers",
    "submit",
    "unhide",
    "update_entry",
]
