"""Baseline rows: the published results, and the baselines this project computes itself.

Every row of ``paper_baselines.json`` becomes a ``reported`` entry with the paper's numbers:
never re-scored nor ranked (the paper used a corpus with five more dialogues and unpublished
tokenisation). Each track's computed baselines predict the test split and are scored like any
submission. Seeding is idempotent: a changed reported row gets a new score row, a changed
baseline file a new entry that hides the old one.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from etclib import tracks

from . import settings
from .clock import now
from .db import Database, resolve
from .errors import ReferenceDataError
from .metadata import Metadata


def _setting_category(text: str) -> str:
    low = text.lower()
    if "zero" in low:
        return "zero-shot"
    if "shot" in low:
        return "few-shot"
    if "fine" in low or "lora" in low:
        return "fine-tuned"
    return "other"


def load_reference(directory: str | Path | None = None) -> dict[str, Any]:
    """``paper_baselines.json`` parsed, or :class:`ReferenceDataError` saying where to put it."""
    folder = Path(directory) if directory is not None else settings.reference_dir()
    path = folder / "paper_baselines.json"
    if not path.is_file():
        raise ReferenceDataError(
            f"{path}: not found. Set ETC_REFERENCE_DIR to a folder holding "
            "paper_baselines.json, or unset it to use the copy shipped in etclib/data/reference, or "
            "seed only the computed baselines (python -m leaderboard seed-baselines "
            "--no-reported)."
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["rows"]
        for n, row in enumerate(rows):
            for key in ("model", "setting"):
                if not isinstance(row.get(key), str):
                    raise KeyError(f"rows[{n}].{key}")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ReferenceDataError(
            f"{path}: cannot read the published results ({type(exc).__name__}: {exc}); "
            "restore it (etclib/data/reference/paper_baselines.json in the repository)."
        ) from None
    data["_path"] = str(path)
    return data


def seed_reported(
    *, directory: str | Path | None = None, db: Database | None = None
) -> dict[str, int]:
    """Add the published rows; ``{"added": n, "updated": n, "unchanged": n}``."""
    from .scoring import dumps

    keys = [k for t in tracks.TRACKS.values() if t.reported for k in t.keys()]
    db = resolve(db)
    data = load_reference(directory)
    source = str(data.get("source", "paper_baselines.json"))
    counts = {"added": 0, "updated": 0, "unchanged": 0}
    with db.write() as cur:
        for row in data["rows"]:
            key = f"paper:{row['model']}|{row['setting']}"
            scores = {k: float(row[k]) for k in keys if isinstance(row.get(k), (int, float))}
            scores_json = dumps(scores)
            signature = json.dumps({"kind": "reported", "source": source}, sort_keys=True)
            found = cur.execute(
                "SELECT id FROM submissions WHERE kind = 'reported' AND baseline_key = ? "
                "AND visibility <> 'deleted' ORDER BY created_at LIMIT 1",
                [key],
            ).fetchone()
            at = now()
            if found:
                sid = found[0]
                last = cur.execute(
                    "SELECT scores FROM scores WHERE submission_id = ? ORDER BY id DESC LIMIT 1",
                    [sid],
                ).fetchone()
                if last and last[0] == scores_json:
                    counts["unchanged"] += 1
                    continue
                counts["updated"] += 1
            else:
                sid = secrets.token_hex(6)
                meta = Metadata.from_dict(
                    {
                        "name": f"{row['model']}, {row['setting']}"[:80],
                        "team": "published (LREC 2026)",
                        "description": f"As published: {source}"[:2000],
                        "setting": _setting_category(row["setting"]),
                        "saw_test": "unknown",  # pre-training data not published
                    }
                )
                shown = (meta.name, meta.team, meta.description, meta.setting, meta.saw_test)
                cur.execute(
                    "INSERT INTO submissions (id, kind, created_at, split, name, team, contact, "
                    "model_url, paper_url, description, setting, saw_test, baseline_key, "
                    "visibility, status, status_message) VALUES "
                    "(?, 'reported', ?, 'test', ?, ?, '', '', '', ?, ?, ?, ?, 'public', "
                    "'scored', 'reported in the paper; not re-scored')",
                    [sid, at, *shown, key],
                )
                cur.execute(
                    "INSERT INTO status_history VALUES (?, ?, 'scored', ?)",
                    [sid, at, f"reported in {data['_path']}"],
                )
                counts["added"] += 1
            score_id = cur.dialect.next_id(cur, "score_ids")
            cur.execute(
                "INSERT INTO scores (id, submission_id, metric_group, signature, created_at, "
                "scores, extras) VALUES (?, ?, 'reported', ?, ?, ?, ?)",
                [
                    score_id,
                    sid,
                    signature,
                    at,
                    scores_json,
                    dumps({"notes": data.get("notes", [])}),
                ],
            )
    db.invalidate()
    return counts


def seed_computed(
    backends: Sequence[str] | None = None,
    *,
    track: str | None = None,
    db: Database | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Store each backend's test predictions as a baseline entry; backend -> ``{"id", "added"}``."""
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items as split_items
    from etclib.tracks.predictions import dumps_jsonl, read_predictions

    from .submit import content_sha256, store_submission

    db = resolve(db)
    t = tracks.get(track)
    corpus = load_corpus()
    items = split_items(corpus, "test")
    out: dict[str, dict[str, Any]] = {}
    for name in t.baselines if backends is None else backends:
        if log:
            log(f"predicting the test split with the {name!r} backend ({t.name}) ...")
        backend = t.backend(name)
        values = backend.predict(items)
        rows_out = ((it.key, v) for it, v in zip(items, values, strict=True))
        data = dumps_jsonl(rows_out, t).encode()
        preds = read_predictions(data, split="test", corpus=corpus, name=f"{name}.jsonl", track=t)
        key = t.baseline_key(name)
        rows = db.query(
            "SELECT id, content_sha256 FROM submissions WHERE kind = 'baseline' "
            "AND baseline_key = ? AND visibility <> 'deleted' ORDER BY created_at",
            [key],
        )
        content = content_sha256(preds, items)
        same = [sid for sid, sha in rows if sha == content]
        if same:
            out[name] = {"id": same[0], "added": False}
            continue
        signature = json.dumps(backend.signature(), sort_keys=True, default=str)
        meta = Metadata(
            name=t.baselines.get(name, f"{name} baseline (etclib)"),
            team="ETC benchmark",
            description=f"{backend.description} Backend signature: {signature}"[:2000],
            setting="other",
            saw_test="no",
        )
        receipt = store_submission(
            db,
            preds,
            meta,
            file_bytes=len(data),
            kind="baseline",
            submitter_key=None,
            baseline_key=key,
            enforce_limits=False,
        )
        with db.write() as cur:
            for sid, _ in rows:
                if sid != receipt.id:
                    cur.execute("UPDATE submissions SET visibility = 'hidden' WHERE id = ?", [sid])
                    cur.execute(
                        "INSERT INTO moderation_log VALUES (?, ?, 'hide', ?)",
                        [now(), sid, f"superseded by {receipt.id}"],
                    )
        out[name] = {"id": receipt.id, "added": not receipt.duplicate}
    db.invalidate()
    return out


def seed_baselines(
    *,
    reported: bool = True,
    computed: bool = True,
    backends: Sequence[str] | None = None,
    reference_dir: str | Path | None = None,
    db: Database | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Seed the published rows and the computed baselines (``backends``, each on the track that
    has it; default: every track's), queued for the worker;
    ``{"reported": {...counts}, "computed": {backend: {"id", "added"}}}``."""
    db = resolve(db)
    out: dict[str, Any] = {}
    if reported:
        out["reported"] = seed_reported(directory=reference_dir, db=db)
    if computed:
        for name in backends or ():
            if not any(name in t.backends for t in tracks.TRACKS.values()):
                tracks.get().backend_class(name)  # refused, with the names there are
        out["computed"] = {}
        for t in tracks.TRACKS.values():
            names = (
                list(t.baselines) if backends is None else [b for b in backends if b in t.backends]
            )
            if names:
                out["computed"].update(seed_computed(names, track=t.name, db=db, log=log))
    return out
