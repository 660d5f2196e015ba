"""Public exports of the board and of per-item scores (CSV, JSON), and the Hub push.

Exports hold public fields and public entries only. CSV goes through
:mod:`etclib.core.csvexport`, whose cells no spreadsheet runs as a formula. :func:`push_to_hub`
uploads the board to the dataset ``ETC_LB_HUB_REPO``; every push is logged in ``hub_pushes``.
"""

from __future__ import annotations

import json
import math
import os
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from etclib.core import csvexport
from etclib.core.files import write_text
from etclib.core.redact import redact

from . import settings
from .board import ranking, reported
from .clock import now
from .db import Database, resolve
from .entry import per_item as per_item_frame
from .errors import LeaderboardError

WHATS = ("board", "reported", "items")


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (datetime, date, pd.Timestamp)):
        return value.isoformat()
    if value is pd.NaT:
        return None
    return value


def _frame(
    what: str, submission_id: str | None, db: Database, track: str | None = None
) -> pd.DataFrame:
    if what not in WHATS:
        raise LeaderboardError(f"Unknown export {what!r}. Choose one of: {', '.join(WHATS)}.")
    if what == "board":
        return ranking(track=track, db=db)
    if what == "reported":
        return reported(db=db)
    ids = [submission_id] if submission_id is not None else ranking(track=track, db=db)["id"]
    frames = [per_item_frame(sid, db=db) for sid in ids]
    for sid, frame in zip(ids, frames):
        frame.insert(0, "submission_id", sid)
    if submission_id is not None:
        return frames[0]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    frame = frame.astype(object).where(frame.notna(), None)
    return [{k: _plain(v) for k, v in rec.items()} for rec in frame.to_dict("records")]


def _cell(value: Any) -> Any:
    """A CSV cell: nothing for None, JSON for a list or a mapping."""
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value


def _write(text: str, path: str | os.PathLike | None) -> str:
    if path is not None:
        write_text(path, text)
    return text


def export_csv(
    what: str = "board",
    *,
    submission_id: str | None = None,
    path: str | os.PathLike | None = None,
    track: str | None = None,
    db: Database | None = None,
) -> str:
    """Formula-safe CSV of ``what`` (board, reported, items); written to ``path`` if given."""
    db = resolve(db)
    frame = _frame(what, submission_id, db, track)
    columns = list(frame.columns)
    rows = ([_cell(rec.get(c)) for c in columns] for rec in _records(frame))
    return _write(csvexport.dumps(columns, rows), path)


def export_json(
    what: str = "board",
    *,
    submission_id: str | None = None,
    path: str | os.PathLike | None = None,
    track: str | None = None,
    db: Database | None = None,
) -> str:
    """JSON of ``what`` (board, reported, items); written to ``path`` if given."""
    from etclib import tracks

    db = resolve(db)
    t = tracks.get(track)
    frame = _frame(what, submission_id, db, t.name)
    payload: dict[str, Any] = {"generated_at": now().isoformat() + "Z", "what": what}
    if what == "board":
        payload["track"] = t.name
        for key in ("ranking_rule", "sort_by", "floors", "signatures", "resamples", "seed"):
            payload[key] = frame.attrs.get(key)
        payload["board"] = _records(frame)
        payload["reported"] = _records(reported(db=db)) if t.reported else []
    else:
        payload["rows"] = _records(frame)
    return _write(json.dumps(payload, ensure_ascii=False, indent=1), path)


def push_to_hub(
    *, repo: str | None = None, token: str | None = None, db: Database | None = None
) -> list[str]:
    """Upload the public board (JSON and CSV) to a Hub dataset repo; the paths uploaded."""
    db = resolve(db)
    repo = repo or settings.hub_repo()
    token = token or settings.hf_token()
    if not repo or not token:
        raise LeaderboardError(
            "Hub push is not configured: set ETC_LB_HUB_REPO (a dataset repo such as "
            "org/etc-leaderboard) and HF_TOKEN (a token with write access)."
        )
    try:
        from huggingface_hub import HfApi
    except ImportError:
        from etclib.core.errors import DependencyError

        raise DependencyError(
            "The Hub push needs huggingface-hub: pip install huggingface-hub"
        ) from None
    files = {
        "leaderboard.json": export_json("board", db=db).encode("utf-8"),
        "leaderboard.csv": export_csv("board", db=db).encode("utf-8"),
    }
    api = HfApi(token=token)
    done = []
    try:
        for name, data in files.items():
            api.upload_file(
                path_or_fileobj=data,
                path_in_repo=name,
                repo_id=repo,
                repo_type="dataset",
                commit_message=f"Update {name}",
            )
            done.append(name)
    except Exception as exc:  # noqa: BLE001 - network and auth errors of the SDK
        message = redact(f"{type(exc).__name__}: {str(exc)[:300]}", [token])  # operator-only
        with db.write() as cur:
            cur.execute("INSERT INTO hub_pushes VALUES (?, ?, false, ?)", [now(), repo, message])
        raise LeaderboardError(
            f"Push to the Hub dataset {repo} failed ({message}). Check HF_TOKEN's write access "
            "and the repo name (ETC_LB_HUB_REPO)."
        ) from None
    with db.write() as cur:
        cur.execute("INSERT INTO hub_pushes VALUES (?, ?, true, ?)", [now(), repo, ", ".join(done)])
    return done
