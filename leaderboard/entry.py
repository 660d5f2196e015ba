"""One entry of the board: its status, standing, detail, per-item frame and breakdowns."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from etclib import metrics, tracks

from . import samples, settings, trivial
from .board import PUBLIC_FIELDS, _entries, _score_rows, current_signatures, ranking
from .db import Database, resolve
from .errors import NotFoundError
from .queue import queue_position
from .scoring import load_arrays
from .statuses import failed_metrics, job_summary, pending_metrics


def _submission(db: Database, submission_id: str, include_deleted: bool = False) -> dict[str, Any]:
    res = db.cursor().execute(
        "SELECT s.*, coalesce(a.account, '') AS account FROM submissions s "
        "LEFT JOIN submission_accounts a ON a.submission_id = s.id WHERE s.id = ?",
        [str(submission_id)],
    )
    row = res.fetchone()
    if row is None:
        raise NotFoundError.entry(submission_id)
    rec = dict(zip([d[0] for d in res.description], row))
    if rec["visibility"] == "deleted" and not include_deleted:
        raise NotFoundError.entry(submission_id)
    return rec


def status(submission_id: str, *, db: Database | None = None) -> dict[str, Any]:
    """Where a submission stands: status, pending and failed metrics, queue place, history."""
    db = resolve(db)
    rec = _submission(db, submission_id)
    cur = db.cursor()
    summary = job_summary(cur, rec["id"])
    track = tracks.get(rec.get("track")).name
    history = [
        {"at": at, "status": st, "message": msg or ""}
        for at, st, msg in cur.execute(
            "SELECT happened_at, status, message FROM status_history WHERE submission_id = ? "
            "ORDER BY happened_at, rowid",
            [rec["id"]],
        ).fetchall()
    ]
    return {
        "id": rec["id"],
        "name": rec["name"],
        "kind": rec["kind"],
        "created_at": rec["created_at"],
        "visibility": rec["visibility"],
        "status": rec["status"],
        "message": rec["status_message"] or "",
        "pending": pending_metrics(summary.pending, track),
        "failed_metrics": failed_metrics(summary.failed, track),
        "incomplete_metrics": failed_metrics(summary.incomplete, track),
        "track": track,
        "queue_position": queue_position(cur, rec["id"]),
        "warnings": json.loads(rec["warnings"] or "[]"),
        "history": history,
    }


def standing(submission_id: str, *, db: Database | None = None) -> dict[str, Any]:
    """Where an entry stands on its track's board: ``track``, ``sort_by``, ``rank``,
    ``rank_band`` and ``of`` (None off the board), and ``scores``: each summary ranking metric
    it has -> (value, lo, hi)."""
    db = resolve(db)
    rec = _submission(db, submission_id)
    track = tracks.get(rec.get("track"))
    board = ranking(track=track.name, split=rec["split"], db=db)
    keys = [f.key for f in track.facts() if f.ranking and f.summary]
    out: dict[str, Any] = {
        "track": track.name,
        "sort_by": board.attrs.get("sort_by"),
        "rank": None,
        "rank_band": None,
        "of": int((board["rank"] > 0).sum()) if len(board) else 0,
        "scores": {},
    }
    rows = board[board["id"] == rec["id"]]
    if len(rows) and int(rows["rank"].iloc[0]) > 0:
        row = rows.iloc[0]
        out.update(rank=int(row["rank"]), rank_band=str(row["rank_band"]))
        values = {k: (row[k], row[f"{k}_lo"], row[f"{k}_hi"]) for k in keys}
    else:  # off the board: its own scores and intervals
        got = detail(rec["id"], db=db)["scores"]
        values = {
            k: (v["scores"][k], *v["intervals"].get(k, (None, None)))
            for v in got.values()
            for k in keys
            if k in v["scores"]
        }
    out["scores"] = {
        k: tuple(None if pd.isna(x) else float(x) for x in v)
        for k, v in values.items()
        if v[0] is not None and not pd.isna(v[0])
    }
    return out


def _items(split: str):
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    return items(load_corpus(), split)


def _chosen_for(db: Database, submission_id: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """The submission's score rows to show (current signature when it has one, else newest)."""
    rec_split, rec_track = db.query(
        "SELECT split, track FROM submissions WHERE id = ?", [submission_id]
    )[0]
    entries = _entries(db, True, rec_split, rec_track)
    board_rows = _score_rows(db, list(entries["id"]))
    sigs = current_signatures(board_rows) if not board_rows.empty else {}
    rows = _score_rows(db, [submission_id])
    if rows.empty:
        return rows, sigs
    rows = rows[rows["metric_group"] != "reported"].copy()
    rows["current"] = rows["signature"] == rows["metric_group"].map(sigs)
    chosen = rows.sort_values(["current", "id"]).groupby("metric_group").tail(1)
    return chosen, sigs


def detail(submission_id: str, *, db: Database | None = None) -> dict[str, Any]:
    """Everything public about one submission (never the contact): ``submission``,
    ``status``, ``scores`` (group -> scores, intervals, extras, signature, current,
    created_at), ``breakdown``, ``verbosity`` (free-text tracks only), ``trivial``, ``history``
    (every score row), and for published rows ``reported`` (the paper's numbers)."""
    db = resolve(db)
    rec = _submission(db, submission_id)
    out: dict[str, Any] = {
        "submission": {k: rec[k] for k in PUBLIC_FIELDS}
        | {"visibility": rec["visibility"], "track": tracks.get(rec.get("track")).name},
        "status": status(rec["id"], db=db),
    }
    if rec["kind"] == "reported":
        rows = db.query(
            "SELECT scores, signature FROM scores WHERE submission_id = ? ORDER BY id DESC LIMIT 1",
            [rec["id"]],
        )
        out["reported"] = json.loads(rows[0][0]) if rows else {}
        out["scores"], out["breakdown"], out["verbosity"], out["history"] = {}, {}, {}, []
        return out
    out["trivial"] = trivial_reason(db, rec)
    chosen, _ = _chosen_for(db, rec["id"])
    scores: dict[str, Any] = {}
    breakdown: dict[str, dict[str, dict[str, Any]]] = {}
    if not chosen.empty:
        arrays = load_arrays(db, [int(i) for i in chosen["id"]])
        full = db.query_df(
            f"SELECT id, extras, breakdown FROM scores WHERE id IN ({', '.join('?' for _ in chosen['id'])})",
            [int(i) for i in chosen["id"]],
        ).set_index("id")
        for row in chosen.itertuples():
            got = {}
            if row.metric_group in metrics.METRICS:
                pair = [(row.metric_group, arrays[int(row.id)])]
                got = samples.resampled_rows(pair, int(row.n_items))[0]
            intervals = {key: bounds for key, (_, bounds) in got.items()}
            scores[row.metric_group] = {
                "scores": json.loads(row.scores),
                "intervals": intervals,
                "extras": json.loads(full.loc[row.id, "extras"] or "{}"),
                "signature": json.loads(row.signature),
                "current": bool(row.current),
                "created_at": row.created_at,
            }
            for name, subsets in json.loads(full.loc[row.id, "breakdown"] or "{}").items():
                for sub, values in subsets.items():
                    breakdown.setdefault(name, {}).setdefault(sub, {}).update(values)
    out["scores"] = scores
    out["breakdown"] = breakdown
    out["history"] = _history(db, rec["id"])
    if not tracks.get(rec.get("track")).free_text:
        out["verbosity"] = {}  # lengths and units are those of free texts
        return out
    preds = db.query(
        "SELECT avg(length(prediction)) FROM predictions WHERE submission_id = ?", [rec["id"]]
    )[0][0]
    refs = [it.reference for it in _items(rec["split"])]
    judge = scores.get("judge", {}).get("scores", {})
    judged = ("units_mean", "units_sd", "ref_units_mean", "precision", "recall")
    out["verbosity"] = {
        "pred_chars": float(preds) if preds is not None else None,
        "ref_chars": float(np.mean([len(r) for r in refs])) if refs else None,
        **{k: judge.get(k) for k in judged},
    }
    return out


def trivial_reason(db: Database, rec: dict[str, Any]) -> str:
    """Why the submission ``rec`` is trivial (blank when it is not)."""
    if rec["kind"] != "submission":
        return ""
    track = tracks.get(rec.get("track")).name
    entries = _entries(db, True, rec["split"], track)
    public_baseline = (entries["kind"] == "baseline") & (entries["visibility"] == "public")
    entries = entries[public_baseline | (entries["id"] == rec["id"])]
    if rec["id"] not in set(entries["id"]):
        return ""
    got = dict(zip(entries["id"], trivial.reasons(db, entries, track, rec["split"])))
    return got.get(rec["id"], "")


def _history(db: Database, submission_id: str) -> list[dict[str, Any]]:
    """Every score row of a submission: id, group, signature, time."""
    return [
        {"score_id": int(i), "metric_group": g, "signature": json.loads(s), "created_at": t}
        for i, g, s, t in db.query(
            "SELECT id, metric_group, signature, created_at FROM scores WHERE submission_id = ? "
            "ORDER BY id",
            [submission_id],
        )
    ]


def per_item(submission_id: str, *, db: Database | None = None) -> pd.DataFrame:
    """One row per item: key, label, reference, prediction, and each metric's item scores and
    details as etclib names them (a detail whose name clashes is prefixed with its group)."""
    db = resolve(db)
    rec = _submission(db, submission_id)
    preds = db.query_df(
        "SELECT item_index, dialogue_id, turn, role, prediction FROM predictions "
        "WHERE submission_id = ? ORDER BY item_index",
        [rec["id"]],
    )
    items = {it.key: it for it in _items(rec["split"])}
    keys = list(zip(preds["dialogue_id"], preds["turn"], preds["role"]))
    preds.insert(4, "label", [", ".join(items[k].label) if k in items else "" for k in keys])
    track = tracks.get(rec.get("track"))
    if track.free_text:
        # the reference text and the prediction's length: what free texts are read beside
        refs = [track.reference_of(items[k]) if k in items else "" for k in keys]
        preds.insert(5, "reference", refs)
        preds["pred_chars"] = preds["prediction"].str.len()
    if rec["kind"] == "reported":
        return preds
    chosen, _ = _chosen_for(db, rec["id"])
    for row in chosen.sort_values("id").itertuples():
        got = db.query(
            "SELECT item_index, scores, details FROM item_scores WHERE score_id = ? "
            "ORDER BY item_index",
            [int(row.id)],
        )
        columns: dict[str, list[Any]] = {}
        for n, (_, scores, details) in enumerate(got):
            values = json.loads(scores or "{}")
            if details:
                for k, v in json.loads(details).items():
                    clash = k in values or k in preds.columns
                    values[f"{row.metric_group}_{k}" if clash else k] = v
            for k, v in values.items():
                columns.setdefault(k, [None] * len(got))[n] = v
        for k, v in columns.items():
            if len(v) == len(preds):
                preds[k] = v
    return preds


def breakdown(submission_id: str, metric: str, *, db: Database | None = None) -> pd.DataFrame:
    """``metric`` of one entry on each subset of its items (role, category, turn) with its 95%
    bootstrap interval: ``breakdown``, ``subset``, ``n_items``, ``value``, ``lo``, ``hi``; empty
    without stored scores of ``metric``'s group. Cached per board version."""
    db = resolve(db)
    key = ("breakdown", str(submission_id), metric, settings.resamples(), settings.seed())
    generation = db.generation
    return db.cached(key, lambda: _breakdown(db, str(submission_id), metric), generation)


def _breakdown(db: Database, submission_id: str, metric: str) -> pd.DataFrame:
    from etclib.metrics import MetricData, significance
    from etclib.tracks.scoring import breakdown_groups

    columns = ["breakdown", "subset", "n_items", "value", "lo", "hi"]
    rec = _submission(db, submission_id)
    chosen, _ = _chosen_for(db, submission_id)
    group = metrics.fact(metric).group
    rows = chosen[chosen["metric_group"] == group] if not chosen.empty else chosen
    items = _items(rec["split"])
    if rows.empty or int(rows["n_items"].iloc[-1]) != len(items):
        return pd.DataFrame(columns=columns)
    score_id = int(rows["id"].iloc[-1])
    arrays = load_arrays(db, [score_id])[score_id]
    module = metrics.get(group)
    out = []
    for name, subsets in breakdown_groups(items).items():
        for subset, idx in subsets.items():
            if not len(idx):
                continue
            part = MetricData({k: v[idx] for k, v in arrays.items()})
            res = significance.draw(len(idx), settings.resamples(), settings.seed())
            spread = significance.resampled(module, part, res).get(metric)
            lo, hi = (np.nan, np.nan) if spread is None else significance.interval(spread)
            value = module.aggregate(part).get(metric, np.nan)
            out.append([name, subset, len(idx), value, lo, hi])
    return pd.DataFrame(out, columns=columns)
