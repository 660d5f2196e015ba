"""Submitting: validate a predictions file and its details, store them, queue the scoring.

>>> receipt = submit("preds.jsonl", {"name": "My model", "contact": "me@example.org"})  # doctest: +SKIP
>>> receipt.id, receipt.duplicate, receipt.status                                       # doctest: +SKIP
('3f9c0a1b2d4e', False, 'queued')

A refused file or refused details store nothing and use no quota; predictions already on the
board as a public entry return that entry (:func:`content_sha256`). Rules and limits:
docs/leaderboard.md, "How it works" and "Limits".
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from etclib.core.errors import PredictionsError, Problem

from . import settings, stages
from .clock import now
from .db import Database, resolve
from .errors import LimitError, MetadataError, SubmissionError
from .metadata import Metadata
from .names import reserved_problem
from .queue import enqueue, queue_position, waiting_submissions

if TYPE_CHECKING:
    from etclib.tracks.predictions import Predictions

KINDS: tuple[str, ...] = ("submission", "baseline", "reported")


@dataclass
class Receipt:
    """What :func:`submit` returns. ``edit_key``: the new entry's private edit key, given here
    once (None for a duplicate, which names the entry it repeats: ``name``, ``kind``)."""

    id: str
    duplicate: bool
    status: str
    warnings: list[str] = field(default_factory=list)
    queue_position: int | None = None
    edit_key: str | None = None
    name: str = ""
    kind: str = "submission"

    def duplicate_text(self, name: str) -> str:
        """What became of a duplicate submission named ``name``."""
        what = "the baseline" if self.kind == "baseline" else "the entry"
        return (
            f"These predictions are the same as {what} “{self.name}” ({self.id}), already on the "
            f"board: nothing was stored, and the name “{name}” was not used."
        )


FileSource = str | os.PathLike | bytes | IO[bytes]


def read_source(file: FileSource, file_name: str | None = None) -> tuple[bytes, str]:
    """The bytes and a display name of a path, bytes, or binary file object (e.g. an upload)."""
    from etclib.tracks.predictions import MAX_FILE_BYTES

    if isinstance(file, (bytes, bytearray)):
        return bytes(file), file_name or "predictions"
    if isinstance(file, (str, os.PathLike)):
        path = Path(file)
        if not path.is_file():
            what = "a folder" if path.is_dir() else "no such file"
            raise SubmissionError(
                f"{file_name or path}: {what}; give a predictions file.", [Problem(0, what)]
            )
        with open(path, "rb") as f:  # stored and shown under its name: the path is the server's
            return f.read(MAX_FILE_BYTES + 1), file_name or path.name
    if hasattr(file, "getvalue"):
        data = file.getvalue()
    elif hasattr(file, "read"):
        data = file.read(MAX_FILE_BYTES + 1)
    else:
        raise SubmissionError(
            f"Cannot read a predictions file from a {type(file).__name__}; give a path, bytes "
            "or a binary file object."
        )
    if isinstance(data, str):
        data = data.encode("utf-8")
    return bytes(data), file_name or Path(str(getattr(file, "name", "") or "predictions")).name


def validated(
    file: FileSource | Predictions,
    *,
    file_name: str | None = None,
    split: str = "test",
    track: str | None = None,
) -> Predictions:
    """``file`` read and validated (its track detected unless given), or a validated
    ``Predictions`` itself once checked for ``split`` and ``track``; :class:`SubmissionError`
    with etclib's problems."""
    from etclib.data.corpus import load_corpus
    from etclib.tracks.predictions import Predictions, read_predictions

    if isinstance(file, Predictions):
        wrong = [
            f"the {what} {got!r}, not {want!r}"
            for what, got, want in (("split", file.split, split), ("track", file.track, track))
            if want is not None and got != want
        ]
        if wrong:
            raise SubmissionError(
                f"{file.name}: the predictions were checked for {' and '.join(wrong)}; check "
                "the file again for this split and track. Nothing was stored."
            )
        return file
    data, name = read_source(file, file_name)
    try:
        return read_predictions(data, split=split, corpus=load_corpus(), name=name, track=track)
    except PredictionsError as exc:
        raise SubmissionError(str(exc), exc.problems) from None


def submitter_hash(key: str) -> str:
    """How a submitter key is stored (the key itself is not kept)."""
    return hashlib.sha256(key.strip().lower().encode("utf-8")).hexdigest()[:32]


def submit(
    file: FileSource | Predictions,
    metadata: dict[str, Any] | Metadata,
    *,
    submitter: str | None = None,
    account: str | None = None,
    issuer: str | None = None,
    file_name: str | None = None,
    split: str = "test",
    track: str | None = None,
    db: Database | None = None,
) -> Receipt:
    """Validate, store and queue a submission; return its receipt.

    ``submitter`` is the key the daily limit counts by: the site passes the signed-in account
    or the visitor's network address. The default (the contact, else the name) is for the
    operator's own scripts: anyone can vary it, so only the global daily cap holds for it.
    ``account`` is the verified account the board shows beside the team name (``issuer``: who
    verified it). ``file``: a path, bytes, a binary file object or a validated ``Predictions``.

    Raises :class:`MetadataError`, :class:`SubmissionError` (with etclib's line-level
    ``problems``) or :class:`LimitError`.
    """
    db = resolve(db)
    meta = Metadata.from_dict(metadata)
    reserved = reserved_problem(meta.name, own_names(db))
    if reserved:
        raise MetadataError({"name": reserved})
    preds = validated(file, file_name=file_name, split=split, track=track)
    key = (submitter or meta.contact or meta.name).strip()
    account = (account or "").strip() or None
    return store_submission(
        db,
        preds,
        meta,
        file_bytes=preds.size,
        kind="submission",
        submitter_key=submitter_hash(key),
        account=account,
        issuer=issuer,
        # a signed-in account owns what it submits; the edit key does for everyone
        owner_hash=submitter_hash(key) if account else None,
    )


def own_names(db: Database) -> list[str]:
    """The names of the board's own rows: its baselines and the published results it holds."""
    rows = db.query("SELECT DISTINCT name FROM submissions WHERE kind IN ('baseline', 'reported')")
    return [name for (name,) in rows]


def key_digest(secret: str) -> str:
    """How an edit key's secret is stored (the key itself is not kept)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def content_sha256(preds, order) -> str:
    """A submission's identity for duplicate detection: the hash of (item, prediction) in the
    split's item ``order``, whatever the file's format, encoding or line order."""
    from etclib import tracks

    body = [[*it.key, preds.by_key[it.key]] for it in order]  # a label tuple is a JSON list
    tag = tracks.get(preds.track).content_tag
    return hashlib.sha256(json.dumps([tag, body]).encode("ascii")).hexdigest()


def utc_midnight(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def store_submission(
    db: Database,
    preds,
    meta: Metadata,
    *,
    file_bytes: int,
    kind: str,
    submitter_key: str | None,
    baseline_key: str | None = None,
    enforce_limits: bool = True,
    account: str | None = None,
    issuer: str | None = None,
    owner_hash: str | None = None,
) -> Receipt:
    """Store validated ``Predictions`` and queue the first stage; a submission gets an edit key."""

    import pandas as pd

    from etclib import tracks
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items as split_items

    corpus = load_corpus()
    order = split_items(corpus, preds.split)
    track = preds.track
    encode = tracks.get(track).encode  # the one place a prediction takes its stored form

    frame = pd.DataFrame(
        [
            (i, it.dialogue_id, it.turn, it.role, encode(preds.by_key[it.key]))
            for i, it in enumerate(order)
        ],
        columns=["item_index", "dialogue_id", "turn", "role", "prediction"],
    )
    # Duplicates are the same predictions (content_sha256) as a public entry; file_sha256 is the
    # file's bytes. A hidden or deleted entry is no duplicate: saying it exists would show what
    # the moderators took off the board, so the same predictions are stored as a new entry.
    sha = content_sha256(preds, order)
    with db.write() as cur:
        # the limits and duplicates checked one writer at a time, across processes
        cur.dialect.serialize(cur, "submit")
        # only an entry anyone may see is named: never a private, withdrawn or removed one
        dup = cur.execute(
            "SELECT id, status, name, kind FROM submissions WHERE content_sha256 = ? AND split = ? "
            "AND track = ? AND visibility = 'public' ORDER BY created_at, id LIMIT 1",
            [sha, preds.split, track],
        ).fetchone()
        if dup:
            return Receipt(dup[0], True, dup[1], list(preds.warnings), name=dup[2], kind=dup[3])
        at = now()
        if enforce_limits:
            _check_limits(cur, submitter_key, at)
        sid = secrets.token_hex(6)
        secret = secrets.token_urlsafe(24)  # the edit key (ID.SECRET) is given once, not kept
        edit_key, edit_key_hash = (None, None)
        if kind == "submission":
            edit_key, edit_key_hash = f"{sid}.{secret}", key_digest(secret)
        row = {
            **asdict(meta),
            "id": sid,
            "kind": kind,
            "created_at": at,
            "split": preds.split,
            "submitter_key": submitter_key,
            "file_name": preds.name,
            "file_sha256": preds.sha256,
            "file_format": preds.format,
            "file_bytes": file_bytes,
            "n_items": len(preds),
            "corpus_hash": corpus.content_hash,
            "warnings": json.dumps(preds.warnings, ensure_ascii=False),
            "baseline_key": baseline_key,
            "visibility": "public",
            "status": "queued",
            "status_message": "",
            "content_sha256": sha,
            "track": track,
            "owner_hash": owner_hash,
            "edit_key_hash": edit_key_hash,
        }
        cur.execute(
            f"INSERT INTO submissions ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
            list(row.values()),
        )
        frame.insert(0, "submission_id", sid)
        cur.dialect.insert_frame(cur, "predictions", frame)
        if account:
            cur.execute("INSERT INTO submission_accounts VALUES (?, ?, ?)", [sid, account, issuer])
        cur.execute(
            "INSERT INTO status_history VALUES (?, ?, 'queued', ?)",
            [sid, at, f"received {preds.name} ({len(preds)} items)"],
        )
        enqueue(cur, sid, stages.first(), {})
        position = queue_position(cur, sid)
    db.invalidate()
    db.notify_jobs()
    return Receipt(sid, False, "queued", list(preds.warnings), position, edit_key, meta.name, kind)


def used_today(cur, submitter_key: str, at: datetime) -> int:
    """Submissions (withdrawn ones too) of ``submitter_key`` since UTC midnight before ``at``."""
    (count,) = cur.execute(
        "SELECT count(*) FROM submissions WHERE kind = 'submission' AND submitter_key = ? "
        "AND created_at >= ?",
        [submitter_key, utc_midnight(at)],
    ).fetchone()
    return int(count)


def _check_limits(cur, submitter_key: str | None, at: datetime) -> None:
    limit = settings.daily_limit()
    reset = utc_midnight(at) + timedelta(days=1)
    if submitter_key is not None:
        count = used_today(cur, submitter_key, at)
        if count >= limit:
            raise LimitError(
                f"Daily limit reached: {count} of {limit} submissions today (UTC) for this "
                f"submitter. Try again after {reset:%Y-%m-%d %H:%M} UTC; nothing was stored."
            )
    everyone = settings.global_daily_limit()
    (today,) = cur.execute(
        "SELECT count(*) FROM submissions WHERE kind = 'submission' AND created_at >= ?",
        [utc_midnight(at)],
    ).fetchone()
    if today >= everyone:
        raise LimitError(
            f"The site's daily limit is reached: {today} of {everyone} submissions today (UTC) "
            f"from everyone together. Try again after {reset:%Y-%m-%d %H:%M} UTC; nothing was "
            "stored."
        )
    cap = settings.max_queue()
    waiting = waiting_submissions(cur)
    if waiting >= cap:
        raise LimitError(
            f"The scoring queue is full ({waiting} submissions waiting, the limit is {cap}). "
            "Please try again in a few minutes; nothing was stored."
        )
