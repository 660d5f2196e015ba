"""The board: ranking with intervals and rank bands, published results, detail, per-item view.

Columns, their groups and directions, and the ranking rule come from etclib's metric registry
(:func:`etclib.metrics.keys`, :func:`etclib.metrics.fact`, :func:`etclib.metrics.ranking_key`):
by default the board is ranked by the first key of ``etclib.metrics.RANK_ORDER`` (judge F1,
else BERTScore, else ROUGE-L) that any entry has under the board's current signature.
``ranking(sort_by=...)`` ranks by any other ranking column instead. Entries lacking the ranking
metric come last, unranked. Intervals and rank bands come from :mod:`etclib.significance`.

Signatures: each metric group has one *current* signature, the one held by the most public
entries (ties: the newest). Only scores under it fill the board's columns; an entry's scores
under other signatures are listed by :func:`other_scores`. Published results (paper rows) are
never in the ranking columns: :func:`reported`.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from etclib import metrics, significance

from . import samples, settings, trivial
from .db import Database, resolve
from .errors import LeaderboardError, NotFoundError
from .queue import queue_position
from .scoring import load_arrays
from .statuses import failed_metrics, job_summary, pending_metrics

log = logging.getLogger(__name__)

#: the ranking rule's order (etclib's, restated nowhere)
RANK_ORDER = metrics.RANK_ORDER


def metric_columns(track: str | None = None) -> dict[str, str]:
    """Ranking column (a metric key with an interval) -> its metric group, in registry order,
    for ``track`` (default: transcription)."""
    return {f.key: f.group for f in metrics.facts(track=track) if f.ranking}


def plain_columns(track: str | None = None) -> dict[str, str]:
    """Board columns shown without an interval (counts) -> their metric group."""
    return {f.key: f.group for f in metrics.facts(track=track) if f.board and not f.ranking}


def tracks() -> dict[str, str]:
    """Track name -> how the board's selector names it (etclib's track registry)."""
    from etclib import tracks as registry

    return {t.name: t.title for t in registry.TRACKS.values()}


def ranking_rule(track: str | None = None) -> str:
    """The ranking rule in words (shown with the board and in its JSON export)."""
    return (
        f"{metrics.ranking_rule(track)} Intervals: 95% paired bootstrap over items. rank = 1 + "
        "entries significantly better (95% interval of the paired difference on the better "
        "side of 0); rank_band = rank..entries not significantly worse."
    )


#: The trivial baselines of every track (floors, :mod:`leaderboard.trivial`, where the rules are).
TRIVIAL_BASELINES = trivial.TRIVIAL_BASELINES
#: The transcription board's flag floor (each track's: ``trivial.FLAG_FLOOR``).
FLAG_FLOOR = trivial.flag_floor("transcription")


def board_version(*, db: Database | None = None) -> str:
    """A short text that changes whenever what the board shows may change (a cache key).

    Made of this process's write generation and the database's own counters: submissions,
    the newest score row, the newest status change and moderation actions. Cheap (one query).
    """
    db = resolve(db)
    counts = db.query(
        "SELECT (SELECT count(*) FROM submissions), (SELECT max(id) FROM scores), "
        "(SELECT max(happened_at) FROM status_history), (SELECT count(*) FROM moderation_log)"
    )[0]
    return ":".join(str(x) for x in (db.generation, *counts))


PUBLIC_FIELDS = (
    "id",
    "kind",
    "name",
    "team",
    "account",  # the account a login provider verified (submission_accounts), else empty
    "setting",
    "saw_test",
    "model_url",
    "paper_url",
    "description",
    "created_at",
    "status",
)


def _entries(
    db: Database, include_hidden: bool, split: str, track: str | None = None
) -> pd.DataFrame:
    from etclib import tracks as registry

    vis = "('public', 'hidden')" if include_hidden else "('public')"
    return db.query_df(
        "SELECT s.id, s.kind, s.name, s.team, coalesce(a.account, '') AS account, s.setting, "
        "s.saw_test, s.model_url, s.paper_url, "
        "s.description, s.created_at, s.status, s.status_message, s.visibility, s.n_items, "
        # baseline keys are 'backend:NAME' (transcription) or 'TRACK-backend:NAME'
        "CASE WHEN s.kind = 'baseline' AND s.baseline_key LIKE '%backend:%' "
        "THEN substr(s.baseline_key, strpos(s.baseline_key, 'backend:') + 8) ELSE '' END "
        "AS baseline, "
        "(SELECT avg(length(p.prediction)) FROM predictions p WHERE p.submission_id = s.id) "
        "AS pred_chars "
        "FROM submissions s LEFT JOIN submission_accounts a ON a.submission_id = s.id "
        f"WHERE s.kind IN ('submission', 'baseline') AND s.visibility IN {vis} "
        "AND s.split = ? AND coalesce(s.track, 'transcription') = ? ORDER BY s.created_at, s.id",
        [split, registry.get(track).name],
    )


def _score_rows(db: Database, ids: list[str]) -> pd.DataFrame:
    if not ids:
        return pd.DataFrame(
            columns=["id", "submission_id", "metric_group", "signature", "created_at", "scores"]
        )
    marks = ", ".join("?" for _ in ids)
    return db.query_df(
        "SELECT id, submission_id, metric_group, signature, created_at, scores, n_items "
        f"FROM scores WHERE submission_id IN ({marks}) ORDER BY created_at, id",
        ids,
    )


def current_signatures(rows: pd.DataFrame) -> dict[str, str]:
    """metric group -> the signature held by the most entries (ties: the newest)."""
    out: dict[str, str] = {}
    for group, sub in rows.groupby("metric_group"):
        pairs = sub.drop_duplicates(["submission_id", "signature"])
        counts = Counter(pairs["signature"])
        newest = sub.groupby("signature")["id"].max()
        out[str(group)] = max(counts, key=lambda s: (counts[s], newest[s]))
    return out


def _latest_current(rows: pd.DataFrame, sigs: dict[str, str]) -> pd.DataFrame:
    """The newest score row per (entry, group) under the group's current signature."""
    if rows.empty:
        return rows
    cur = rows[rows["signature"] == rows["metric_group"].map(sigs)]
    return cur.sort_values("id").groupby(["submission_id", "metric_group"]).tail(1)


def _samples(
    db: Database, chosen: pd.DataFrame, n_items: int
) -> dict[tuple[str, str], tuple[np.ndarray, tuple[float, float]]]:
    """(submission id, metric key) -> (resampled scores, 95% interval), for every chosen score
    row on ``n_items`` items (:func:`leaderboard.samples.resampled_rows`: computed once per
    stored row, kept by content)."""
    rows = [
        row
        for row in chosen.itertuples()
        if row.n_items == n_items and row.metric_group in metrics.METRICS
    ]
    arrays = load_arrays(db, [int(row.id) for row in rows])
    got = samples.resampled_rows([(row.metric_group, arrays[int(row.id)]) for row in rows], n_items)
    out: dict[tuple[str, str], tuple[np.ndarray, tuple[float, float]]] = {}
    for row, values in zip(rows, got):
        for key, pair in values.items():
            out[(row.submission_id, key)] = pair
    return out


def ranking(
    *,
    sort_by: str | None = None,
    include_hidden: bool = False,
    split: str = "test",
    track: str | None = None,
    db: Database | None = None,
) -> pd.DataFrame:
    """The board of ``track`` (default: transcription): one row per public entry, best first,
    with intervals and rank bands.

    Columns: ``rank``, ``rank_band``, ``rank_worst``, entry fields (``id``, ``kind``, ``name``,
    ``team``, ``account`` (the verified account, empty when none), ``setting``, ``saw_test``, ``model_url``, ``paper_url``, ``description``,
    ``created_at``, ``status``), every ranking metric (:func:`metric_columns`) with ``_lo`` /
    ``_hi`` (NaN when not scored under the current signature), the plain columns
    (:func:`plain_columns`: ``units_mean``, ``units_sd``),
    ``pred_chars`` (mean prediction length in characters), ``other_signatures`` (groups this
    entry has only under another signature), ``baseline`` (the etclib backend of a computed
    baseline, else blank) and ``below_floor`` (an entry, not a baseline, scoring worse than the
    constant baseline on ``sort_by``), ``trivial`` (why a submission's predictions are trivial,
    :mod:`leaderboard.trivial`; blank when they are not). ``df.attrs`` holds ``sort_by``,
    ``trivial_warning`` (a trivial entry above a real one, else None), ``signatures``,
    ``ranking_rule``, ``floors`` (:func:`floor_values` on ``sort_by``), ``flag_floor``,
    ``resamples`` and ``seed``. Cached per board version (``Database.invalidate``).
    """
    from etclib import tracks as registry

    db = resolve(db)
    track = registry.get(track).name  # one cache entry whether the default is named or not
    ranked = metric_columns(track)
    plain = plain_columns(track)
    if sort_by is not None and sort_by not in ranked:
        raise LeaderboardError(f"Cannot rank by {sort_by!r}. Choose one of: {', '.join(ranked)}.")
    generation = db.generation
    base_key = (
        "ranking-base",
        include_hidden,
        split,
        track,
        settings.resamples(),
        settings.seed(),
        tuple(ranked),
        tuple(plain),
    )
    frame, resampled, sigs = db.cached(
        base_key, lambda: _base(db, ranked, plain, include_hidden, split, track), generation
    )
    if sort_by is None:
        sort_by = metrics.ranking_key([m for m in ranked if frame[m].notna().any()], track)
    key = ("ranking", sort_by, *base_key[1:])
    return db.cached(
        key,
        lambda: _ranked(frame.copy(), resampled, sigs, sort_by, include_hidden, track),
        generation,
    ).copy()


#: Seconds :func:`warm` waits between two rankings by other metrics.
WARM_PAUSE = 0.25


def warm(*, db: Database | None = None) -> None:
    """Rank every track's board in its default order, then by each other metric it has, so
    the next visit and its metric switches find them in the cache (the site's scoring threads
    call this when their queue empties; it stops early when the board changes meanwhile). The
    default orders come first, for every track: they are what the next visitor's page shows.
    A failure is logged: the visitor's page computes the board itself then."""
    db = resolve(db)
    generation = db.generation
    boards = {}
    for track in tracks():
        try:
            boards[track] = ranking(track=track, db=db)
        except Exception:  # noqa: BLE001 - a cache warm-up, never the reason a worker stops
            log.exception("could not rank the %s board ahead of its next visit", track)
    for track, board in boards.items():
        try:
            for key in metric_columns(track):
                if key == board.attrs.get("sort_by") or not board[key].notna().any():
                    continue
                # a pause between rankings: a visitor's page running meanwhile in this process
                # gets the interpreter (these hold it for ~0.1 s each)
                time.sleep(WARM_PAUSE)
                if db.generation != generation:
                    return  # written meanwhile: this warm-up is stale, the next one follows
                ranking(sort_by=key, track=track, db=db)
        except Exception:  # noqa: BLE001
            log.exception("could not rank the %s board ahead of its next visit", track)


def _base(
    db: Database,
    ranked: dict[str, str],
    plain: dict[str, str],
    include_hidden: bool,
    split: str,
    track: str | None = None,
) -> tuple[pd.DataFrame, dict[tuple[str, str], np.ndarray], dict[str, str]]:
    """What every ordering of the board shares: entries with values and intervals, the
    resampled scores behind them, and the current signatures (computed once per board
    version, whichever metric a visitor ranks by)."""
    entries = _entries(db, include_hidden, split, track)
    rows = _score_rows(db, list(entries["id"]))
    sigs = current_signatures(rows) if not rows.empty else {}
    chosen = _latest_current(rows, sigs)
    frame = entries.copy()
    # why a submission is trivial (blank when it is not): leaderboard.trivial's rules
    frame["trivial"] = trivial.reasons(db, entries, track, split) if len(entries) else []
    for col in list(ranked) + list(plain):
        frame[col] = np.nan
        if col in ranked:
            frame[col + "_lo"] = np.nan
            frame[col + "_hi"] = np.nan
    pos = {sid: i for i, sid in enumerate(frame["id"])}
    filled: dict[str, np.ndarray] = {}
    for row in chosen.itertuples():
        values = json.loads(row.scores)
        for col, group in {**ranked, **plain}.items():
            if group == row.metric_group and values.get(col) is not None:
                filled.setdefault(col, np.full(len(frame), np.nan))[pos[row.submission_id]] = float(
                    values[col]
                )
    groups_of = rows.groupby("submission_id")["metric_group"].agg(set) if len(rows) else {}
    chosen_of = chosen.groupby("submission_id")["metric_group"].agg(set) if len(chosen) else {}
    frame["other_signatures"] = [
        sorted(set(groups_of.get(sid, set())) - set(chosen_of.get(sid, set())))
        for sid in frame["id"]
    ]
    resampled: dict[tuple[str, str], np.ndarray] = {}
    if not chosen.empty:
        n_items = int(Counter(chosen["n_items"]).most_common(1)[0][0])
        for (sid, col), (values, (lo, hi)) in _samples(db, chosen, n_items).items():
            resampled[(sid, col)] = values
            filled.setdefault(col + "_lo", np.full(len(frame), np.nan))[pos[sid]] = lo
            filled.setdefault(col + "_hi", np.full(len(frame), np.nan))[pos[sid]] = hi
    for col, values in filled.items():
        frame[col] = values
    return frame, resampled, sigs


def _ranked(
    frame: pd.DataFrame,
    resampled: dict[tuple[str, str], np.ndarray],
    sigs: dict[str, str],
    sort_by: str,
    include_hidden: bool,
    track: str | None = None,
) -> pd.DataFrame:
    """``frame`` ranked by ``sort_by``: rank bands, floors and flags, best first."""
    higher = metrics.fact(sort_by).higher_is_better
    frame["rank"] = 0
    frame["rank_worst"] = 0
    if len(frame) and frame[sort_by].notna().any():
        points = frame[sort_by].to_numpy(dtype=float)
        n_res = settings.resamples()
        mat = np.vstack(
            [resampled.get((sid, sort_by), np.full(n_res, np.nan)) for sid in frame["id"]]
        )
        best, worst = significance.rank_bands(points, mat, higher_is_better=higher)
        frame["rank"] = best
        frame["rank_worst"] = worst
    frame["rank_band"] = [
        "" if r == 0 else (str(r) if r == w else f"{r}–{w}")
        for r, w in zip(frame["rank"], frame["rank_worst"])
    ]
    floors = floor_values(frame, sort_by, track)
    flag = trivial.flag_floor(track)
    frame["below_floor"] = False
    if flag in floors:
        worse = frame[sort_by] > floors[flag] if not higher else frame[sort_by] < floors[flag]
        frame["below_floor"] = worse.fillna(False).astype(bool) & (frame["kind"] != "baseline")
    frame["_unranked"] = frame["rank"] == 0
    frame = frame.sort_values(
        ["_unranked", sort_by, "rank", "created_at"],
        ascending=[True, not higher, True, True],
        na_position="last",
        kind="stable",
    ).drop(
        columns=["_unranked", "n_items", "visibility"]
        if not include_hidden
        else ["_unranked", "n_items"]
    )
    lead = ["rank", "rank_band", "rank_worst"]
    frame = frame[lead + [c for c in frame.columns if c not in lead]].reset_index(drop=True)
    frame.attrs.update(
        sort_by=sort_by,
        signatures={g: json.loads(s) for g, s in sigs.items()},
        ranking_rule=ranking_rule(track),
        track=track or "transcription",
        floors=floors,
        flag_floor=flag,
        trivial_warning=trivial.ranking_warning(frame),
        resamples=settings.resamples(),
        seed=settings.seed(),
    )
    return frame


def floor_values(frame: pd.DataFrame, metric: str, track: str | None = None) -> dict[str, float]:
    """Each trivial baseline of the board's track (``track``, else ``frame.attrs["track"]``;
    :data:`leaderboard.trivial.FLOORS`) -> its ``metric`` value (the newest entry of that
    backend; none when it is absent or has no such score)."""
    out: dict[str, float] = {}
    if frame.empty or metric not in frame.columns or "baseline" not in frame.columns:
        return out
    for name in trivial.floors(track or frame.attrs.get("track")):
        rows = frame[(frame["baseline"] == name) & frame[metric].notna()]
        if len(rows):
            out[name] = float(rows.sort_values("created_at")[metric].iloc[-1])
    return out


def reported(*, db: Database | None = None) -> pd.DataFrame:
    """Published results (``kind = 'reported'``): as printed in the paper, no intervals."""
    db = resolve(db)
    rows = db.query(
        "SELECT s.id, s.name, s.setting, s.description, s.paper_url, sc.scores, sc.signature "
        "FROM submissions s JOIN scores sc ON sc.submission_id = s.id "
        "WHERE s.kind = 'reported' AND s.visibility = 'public' AND sc.metric_group = 'reported' "
        "ORDER BY s.created_at, s.id, sc.id"
    )
    records = []
    for sid, name, setting_, description, paper_url, scores, signature in rows:
        rec = {"id": sid, "kind": "reported", "name": name, "setting": setting_}
        rec.update(json.loads(scores))
        rec["source"] = json.loads(signature).get("source", "")
        rec["paper_url"] = paper_url
        rec["description"] = description
        records.append(rec)
    frame = pd.DataFrame(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["id", "kind", "name", "setting", *metric_columns()])
    else:
        frame = frame.drop_duplicates("id", keep="last").reset_index(drop=True)
    return frame


def reference_rows(track: str | None = None, *, split: str = "test") -> pd.DataFrame:
    """Reference rows shown with a board: on the ERC track, "a person" (each annotator against
    the majority of the other two, averaged; etclib.erc.human_ceiling); none elsewhere."""
    from etclib import tracks as registry

    if registry.get(track).name != "erc":
        return pd.DataFrame()
    from etclib.corpus import load_corpus
    from etclib.erc import human_ceiling

    ceiling = human_ceiling(load_corpus(), split)
    return ceiling.rename(columns={"annotator": "name"}).assign(kind="reference")


def other_scores(
    *, split: str = "test", track: str | None = None, db: Database | None = None
) -> pd.DataFrame:
    """Scores of public entries under a signature other than the board's current one."""
    db = resolve(db)
    entries = _entries(db, False, split, track)
    rows = _score_rows(db, list(entries["id"]))
    if rows.empty:
        return pd.DataFrame(columns=["id", "name", "metric_group", "signature", "created_at"])
    sigs = current_signatures(rows)
    other = rows[rows["signature"] != rows["metric_group"].map(sigs)]
    other = other.sort_values("id").groupby(["submission_id", "metric_group", "signature"]).tail(1)
    names = dict(zip(entries["id"], entries["name"]))
    records = []
    for row in other.itertuples():
        rec = {
            "id": row.submission_id,
            "name": names[row.submission_id],
            "metric_group": row.metric_group,
            "signature": row.signature,
            "created_at": row.created_at,
        }
        rec.update(json.loads(row.scores))
        records.append(rec)
    return pd.DataFrame(records)


# --- one submission ----------------------------------------------------------------------------


def _submission(db: Database, submission_id: str, include_deleted: bool = False) -> dict[str, Any]:
    cur = db.cursor()
    res = cur.execute(
        "SELECT s.*, coalesce(a.account, '') AS account FROM submissions s "
        "LEFT JOIN submission_accounts a ON a.submission_id = s.id WHERE s.id = ?",
        [str(submission_id)],
    )
    row = res.fetchone()
    if row is None:
        raise NotFoundError(
            f"No submission {submission_id!r}. Check the id in your receipt "
            "(python -m leaderboard status ID)."
        )
    rec = dict(zip([d[0] for d in res.description], row))
    if rec["visibility"] == "deleted" and not include_deleted:
        raise NotFoundError(f"Submission {submission_id!r} was removed by the moderators.")
    return rec


def status(submission_id: str, *, db: Database | None = None) -> dict[str, Any]:
    """Where a submission stands: status, message, pending, failed and incomplete metrics
    (metric group -> reason: ``judge incomplete: K of N items failed (first reasons ...)``),
    history."""
    db = resolve(db)
    rec = _submission(db, submission_id)
    cur = db.cursor()
    summary = job_summary(cur, rec["id"])
    pending, failed = summary.pending, summary.failed
    track = rec.get("track") or "transcription"
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
        "pending": pending_metrics(pending, track),
        "failed_metrics": failed_metrics(failed, track),
        "incomplete_metrics": failed_metrics(summary.incomplete, track),
        "track": track,
        "queue_position": queue_position(cur, rec["id"]),
        "warnings": json.loads(rec["warnings"] or "[]"),
        "history": history,
    }


def _items(split: str):
    from etclib.corpus import load_corpus
    from etclib.task import items

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
    """Everything public about one submission.

    Keys: ``submission`` (public fields; never the contact), ``status`` (as :func:`status`),
    ``scores`` (group -> ``{"scores", "intervals", "signature", "current", "created_at"}``),
    ``breakdown`` (``role`` / ``category`` / ``turn`` -> subset -> metrics with ``n_items``),
    ``verbosity`` (``pred_chars``, ``ref_chars``, ``units_mean``, ``ref_units_mean``,
    ``precision``, ``recall``; none on the categories track), ``trivial`` (why its predictions
    are trivial, :mod:`leaderboard.trivial`; blank when they are not), ``history`` (every score row: group, signature, time), and for
    published rows ``reported`` (the paper's numbers).
    """
    db = resolve(db)
    rec = _submission(db, submission_id)
    out: dict[str, Any] = {
        "submission": {k: rec[k] for k in PUBLIC_FIELDS}
        | {"visibility": rec["visibility"], "track": rec.get("track") or "transcription"},
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
            got = (
                samples.resampled_rows([(row.metric_group, arrays[int(row.id)])], int(row.n_items))[
                    0
                ]
                if row.metric_group in metrics.METRICS
                else {}
            )
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
    if (rec.get("track") or "transcription") != "transcription":
        out["verbosity"] = {}  # lengths and units are the transcription track's fields
        return out
    preds = db.query(
        "SELECT avg(length(prediction)) FROM predictions WHERE submission_id = ?", [rec["id"]]
    )[0][0]
    refs = [it.reference for it in _items(rec["split"])]
    judge = scores.get("judge", {}).get("scores", {})
    out["verbosity"] = {
        "pred_chars": float(preds) if preds is not None else None,
        "ref_chars": float(np.mean([len(r) for r in refs])) if refs else None,
        "units_mean": judge.get("units_mean"),
        "units_sd": judge.get("units_sd"),
        "ref_units_mean": judge.get("ref_units_mean"),
        "precision": judge.get("precision"),
        "recall": judge.get("recall"),
    }
    return out


def trivial_reason(db: Database, rec: dict[str, Any]) -> str:
    """Why the submission ``rec`` is trivial (:mod:`leaderboard.trivial`; blank when not)."""
    if rec["kind"] != "submission":
        return ""
    track = rec.get("track") or "transcription"
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
    """One row per item: key, label, reference, prediction, and each metric's item scores.

    Judge columns (when judged) are etclib's item scores and details, as etclib names them
    (currently ``precision``, ``recall``, ``f1``, ``n_units``, ``n_ref_units``, and the details
    that :mod:`etclib.metrics.judge` lists: unit texts, their labels and reasons, ``error``).
    A detail whose name clashes with a score column is prefixed with its metric group.
    """
    db = resolve(db)
    rec = _submission(db, submission_id)
    preds = db.query_df(
        "SELECT item_index, dialogue_id, turn, role, prediction FROM predictions "
        "WHERE submission_id = ? ORDER BY item_index",
        [rec["id"]],
    )
    items = {it.key: it for it in _items(rec["split"])}
    preds.insert(
        4,
        "label",
        [
            ", ".join(items[(d, t, r)].label) if (d, t, r) in items else ""
            for d, t, r in zip(preds["dialogue_id"], preds["turn"], preds["role"])
        ],
    )
    if (rec.get("track") or "transcription") == "transcription":
        # the participant's transcription and the prediction's length: that track's fields
        preds.insert(
            5,
            "reference",
            [
                items[(d, t, r)].reference if (d, t, r) in items else ""
                for d, t, r in zip(preds["dialogue_id"], preds["turn"], preds["role"])
            ],
        )
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
