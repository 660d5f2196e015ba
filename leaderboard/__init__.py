"""The ETC leaderboard: submissions, a scoring queue, bootstrap intervals, rank bands, export.

Everything lives in one embedded SQLite file (``ETC_LEADERBOARD_DB``, default
``data/leaderboard.sqlite``), created and migrated on first use, shared by the processes of one
machine (site processes, ``python -m leaderboard`` commands, ``worker`` processes); each process
opens it once (:func:`open_db`, a process-wide object with a connection per thread). Set to a
``postgresql://`` URL, the board lives on that server instead, shared by processes on many
machines (docs/deploy.md).

Public API (every function takes an optional ``db=`` and otherwise uses :func:`open_db`)::

    import leaderboard as lb

    # submitting (the site's upload page)
    receipt = lb.submit(uploaded_bytes_or_path, {"name": "My model", "team": "Lab",
                        "contact": "me@example.org", "model_url": "https://...",
                        "paper_url": "", "description": "...", "setting": "few-shot",
                        "saw_test": "no"}, file_name="preds.jsonl", submitter=session_key)
    receipt.id, receipt.duplicate, receipt.status, receipt.warnings
    receipt.edit_key           # the private edit key, given once ("ID.SECRET"; only its hash is kept)
    lb.standing(receipt.id)    # main scores with intervals, rank and band on its track's board
    lb.status(receipt.id)      # {"status": "queued"|"scoring"|"partially scored"|"incomplete"|
                               #  "scored"|"failed", "message", "pending": [...],
                               #  "failed_metrics": {...}, "incomplete_metrics": {...},
                               #  "history": [{"at", "status", "message"}], "queue_position"}

    # scoring: a bounded pool of threads inside the site process (idempotent)
    lb.start_workers()         # st.cache_resource it; lb.stop_workers() on shutdown
    lb.process_jobs()          # or: score everything queued now, in this thread
    lb.configured_stages()     # ["lexical", "bertscore"?, "judge"?]: what new submissions get
    lb.all_stages()            # {"lexical": ("bleu", "rouge"), ...}: stage -> metric groups

    # the board (rows and values are plain text: never render them as HTML/Markdown)
    lb.ranking()               # DataFrame, one row per public submission/baseline, best first:
                               # rank, rank_band, id, kind, name, team, setting, saw_test, ...,
                               # <metric>, <metric>_lo, <metric>_hi for every metric, pred_chars
                               # df.attrs: sort_by, signatures, ranking_rule, resamples, seed
    lb.ranking(sort_by="bleu4")
    lb.board_version()         # text that changes whenever the board may change (cache key)
    lb.reported()              # DataFrame of published (paper) results; never mixed with ours
    lb.other_scores()          # scores under a signature other than the board's current one
    lb.ranking(track="erc")    # the categories (ERC) board; lb.tracks() lists the tracks
    lb.reference_rows("erc")   # its human reference row, "a person"
    lb.detail(id)              # dict: metadata (no contact), status, scores with signatures and
                               # intervals, breakdown (role / category / turn), verbosity
    lb.per_item(id)            # DataFrame: key, label, reference, prediction, pred_chars,
                               # item scores; judge units and labels when judged
    lb.export_csv("board")     # formula-safe CSV text ("board", "reported" or "items")
    lb.export_json("board")    # JSON text
    lb.push_to_hub()           # upload the public export (ETC_LB_HUB_REPO + HF_TOKEN)

    # a submitter's own entries (the signed-in account's key, or the edit keys)
    me = lb.Owner(account_key=visitor_key, edit_keys=(receipt.edit_key,))
    lb.owned_entries(me)       # DataFrame of their entries (private and withdrawn ones too)
    lb.update_entry(id, me, {"name": "New name", "parameters": "8", "open_weights": "yes"})
    lb.set_entry_visibility(id, me, "private")   # or "public" again, or "withdrawn" for good
    lb.entry_history(id, me)   # statuses and every change; lb.quota(visitor_key): left today

    # moderation (ETC_ADMIN_TOKEN, 24+ characters; constant-time compare; wrong tokens
    # rate-limited per etclib.admintoken.session)
    lb.hide(id, token); lb.unhide(id, token); lb.delete(id, token); lb.rescore(id, token)
    lb.rerun_failed(token)        # queue every failed job again (or rerun_failed(token, id))
    lb.admin_submissions(token)   # DataFrame with every field, contact included

    # baselines
    lb.seed_baselines()        # published rows (reported) + retrieval/constant/copy (queued;
                               # the workers or lb.process_jobs() score them)

Errors (all ``etclib.errors.EtcError``): :class:`SubmissionError` (``.problems``: etclib's
line-level ``Problem`` list), :class:`MetadataError` (``.fields``: field -> message),
:class:`LimitError`, :class:`NotFoundError`, :class:`AdminError`,
:class:`ReferenceDataError`, :class:`StorageError` (:class:`DatabaseMissingError`,
:class:`DatabaseUnwritableError`, :class:`DatabaseCorruptError`), :class:`WorkerStoppedError`.

Metrics, their columns, the ranking rule and the stages come from each track
(``etclib.tracks``: ``Track.keys()``, ``Track.ranking_key()``, ``Track.stages()``) and
:mod:`leaderboard.stages`. Each ranking metric has a 95%
paired bootstrap interval over items (same seeded resamples for every entry,
``etclib.significance``); an entry's rank is 1 + the number of entries significantly better
than it, so entries that are not significantly different share a rank. See
docs/leaderboard.md.

Modules, bottom up (no cycles; tests/unit/test_leaderboard_structure.py checks it): ``settings``,
``errors``, ``clock``, ``metadata``; ``stages`` (what each stage computes and when it runs);
``statuses`` (a submission's status from its jobs); ``db`` (the board on the storage layer
(:mod:`etclib.storage`): its store, caches, leases); ``queue`` (jobs); ``scoring`` (run a job,
store its ``ScoreResult``); ``submit``; ``owners`` (a submitter's own entries and their
changes); ``board``, ``entry`` (one entry's status, detail and standing), ``worker``,
``admin``, ``baselines``; ``export``; ``migrate`` (a board into another database).

Command line: ``python -m leaderboard --help``.
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
    metric_columns,
    other_scores,
    ranking,
    ranking_rule,
    reference_rows,
    reported,
    tracks,
)
from .db import Database, close_all, open_db
from .entry import detail, per_item, standing, status
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
