"""The board: ranking with intervals and rank bands, published results, other scores.

Columns and the ranking rule come from the track and etclib's metric registry. Each metric group
has one *current* signature, the one held by the most public entries (ties: the newest); only
scores under it fill the columns (the others: :func:`other_scores`). docs/leaderboard.md, "The
ranking rule".
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from etclib import metrics
from etclib import tracks as registry
from etclib.metrics import significance

from . import samples, settings, trivial
from .db import Database, resolve
from .errors import LeaderboardError
from .scoring import load_arrays

log = logging.getLogger(__name__)


def metric_columns(track: str | None = None) -> dict[str, str]:
    """Ranking column (a metric key with an interval) -> its metric group, in registry order."""
    return {f.key: f.group for f in registry.get(track).facts() if f.ranking}


def plain_columns(track: str | None = None) -> dict[str, str]:
    """Board columns shown without an interval (counts) -> their metric group."""
    return {f.key: f.group for f in registry.get(track).facts() if f.board and not f.ranking}


def tracks() -> dict[str, str]:
    """Track name -> how the board's selector names it (etclib's track registry)."""
    return {t.name: t.title for t in registry.TRACKS.values()}


def ranking_rule(track: str | None = None) -> str:
    """The ranking rule in words (shown with the board and in its JSON export)."""
    return (
        f"{registry.get(track).ranking_rule()} Intervals: 95% paired bootstrap over items. An "
        "entry's rank is 1 + the number of entries significantly better (the 95% interval of "
        "the paired difference on the better side of 0); its rank band runs from that rank to "
        "the number of entries it does not beat significantly: the places it could hold once "
        "chance is allowed for."
    )


def board_version(*, db: Database | None = None) -> str:
    """A short text that changes whenever what the board shows may change (a cache key)."""
    db = resolve(db)
    counts = db.query(
        "SELECT (SELECT count(*) FROM submissions), (SELECT max(id) FROM scores), "
        "(SELECT max(happened_at) FROM status_history), (SELECT count(*) FROM moderation_log), "
        "(SELECT count(*) FROM entry_changes)"
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
    "parameters",
    "open_weights",
    "licence",
    "description",
    "created_at",
    "status",
)


def _entries(
    db: Database, include_hidden: bool, split: str, track: str | None = None
) -> pd.DataFrame:
    vis = "('public', 'hidden')" if include_hidden else "('public')"
    return db.query_df(
        "SELECT s.id, s.kind, s.name, s.team, coalesce(a.account, '') AS account, s.setting, "
        "s.saw_test, s.model_url, s.paper_url, coalesce(s.parameters, '') AS parameters, "
        "coalesce(s.open_weights, '') AS open_weights, coalesce(s.licence, '') AS licence, "
        "s.description, s.created_at, s.status, s.status_message, s.visibility, s.n_items, "
        # baseline keys are 'backend:NAME' (transcription) or 'TRACK-backend:NAME'
        "CASE WHEN s.kind = 'baseline' AND s.baseline_key LIKE '%backend:%' "
        "THEN substr(s.baseline_key, strpos(s.baseline_key, 'backend:') + 8) ELSE '' END "
        "AS baseline, "
        "(SELECT avg(length(p.prediction)) FROM predictions p WHERE p.submission_id = s.id) "
        "AS pred_chars "
        "FROM submissions s LEFT JOIN submission_accounts a ON a.submission_id = s.id "
        f"WHERE s.kind IN ('submission', 'baseline') AND s.visibility IN {vis} "
        "AND s.split = ? AND coalesce(s.track, ?) = ? ORDER BY s.created_at, s.id",
        [split, registry.DEFAULT_TRACK, registry.get(track).name],
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
    """(submission id, metric key) -> (resampled scores, 95% interval) of the chosen rows."""
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
    only: Mapping[str, Sequence[str]] | None = None,
    db: Database | None = None,
) -> pd.DataFrame:
    """The board of ``track``: one row per public entry, best first, with intervals and rank
    bands. Cached per board version.

    Columns: ``rank``, ``rank_band``, ``rank_worst``, the entry fields (:data:`PUBLIC_FIELDS`),
    every ranking metric with ``_lo`` / ``_hi`` (NaN when not scored under the current
    signature), the plain columns, ``pred_chars``, ``other_signatures`` (groups held only under
    another signature), ``baseline`` (a computed baseline's backend), ``below_floor`` and
    ``trivial`` (:mod:`leaderboard.trivial`). ``df.attrs``: ``sort_by``, ``trivial_warning``,
    ``signatures``, ``ranking_rule``, ``floors``, ``flag_floor``, ``resamples``, ``seed``, ``only``.

    ``only``: an entry field -> the values kept (e.g. ``{"setting": ["zero-shot"]}``); the kept
    entries are ranked among themselves, the floors stay the whole board's.
    """
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
        sort_by = registry.get(track).ranking_key([m for m in ranked if frame[m].notna().any()])
    kept = {f: tuple(sorted(map(str, v))) for f, v in sorted((only or {}).items()) if v}
    for name in kept:
        if name not in FILTER_FIELDS:
            raise LeaderboardError(
                f"Cannot filter by {name!r}. Choose among: {', '.join(FILTER_FIELDS)}."
            )
    key = ("ranking", sort_by, tuple(kept.items()), *base_key[1:])

    def rank() -> pd.DataFrame:
        mask = np.ones(len(frame), dtype=bool)
        for name, values in kept.items():
            mask &= frame[name].astype(str).isin(values).to_numpy()
        floors = floor_values(frame, sort_by, track)  # the whole board's, whatever is kept
        out = _ranked(frame[mask].copy(), resampled, sigs, sort_by, include_hidden, track, floors)
        out.attrs["only"] = {name: list(values) for name, values in kept.items()}
        return out

    return db.cached(key, rank, generation).copy()


#: The entry fields a board can be filtered by (:func:`ranking`'s ``only``).
FILTER_FIELDS = ("setting", "saw_test", "open_weights")


#: Seconds :func:`warm` waits between two rankings by other metrics.
WARM_PAUSE = 0.25


def warm(*, db: Database | None = None) -> None:
    """Rank every track's board in its default order (what the next visitor's page shows),
    then by each other metric, so they are cached; stops early when the board changes, and
    logs a failure (the visitor's page computes the board itself then)."""
    db = resolve(db)
    generation = db.generation
    boards = {}
    for track in registry.TRACKS:
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
    """What every ordering shares: entries, values, intervals, resamples, signatures."""
    entries = _entries(db, include_hidden, split, track)
    rows = _score_rows(db, list(entries["id"]))
    sigs = current_signatures(rows) if not rows.empty else {}
    chosen = _latest_current(rows, sigs)
    frame = entries.copy()
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
    floors: dict[str, float] | None = None,
) -> pd.DataFrame:
    """``frame`` ranked by ``sort_by``, best first, with rank bands, floors and flags."""
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
    floors = floor_values(frame, sort_by, track) if floors is None else floors
    flag = registry.get(track).flag_floor
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
    ).drop(columns=["_unranked", "n_items", *([] if include_hidden else ["visibility"])])
    lead = ["rank", "rank_band", "rank_worst"]
    frame = frame[lead + [c for c in frame.columns if c not in lead]].reset_index(drop=True)
    frame.attrs.update(
        sort_by=sort_by,
        signatures={g: json.loads(s) for g, s in sigs.items()},
        ranking_rule=ranking_rule(track),
        track=registry.get(track).name,
        floors=floors,
        flag_floor=flag,
        trivial_warning=trivial.ranking_warning(frame),
        resamples=settings.resamples(),
        seed=settings.seed(),
    )
    return frame


def floor_values(frame: pd.DataFrame, metric: str, track: str | None = None) -> dict[str, float]:
    """Each floor of the board's track -> its newest entry's ``metric`` value."""
    out: dict[str, float] = {}
    if frame.empty or metric not in frame.columns or "baseline" not in frame.columns:
        return out
    for name in registry.get(track or frame.attrs.get("track")).floors:
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
        rec |= json.loads(scores)
        source = json.loads(signature).get("source", "")
        records.append(rec | {"source": source, "paper_url": paper_url, "description": description})
    frame = pd.DataFrame(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["id", "kind", "name", "setting", *metric_columns()])
    else:
        frame = frame.drop_duplicates("id", keep="last").reset_index(drop=True)
    return frame


def reference_rows(track: str | None = None, *, split: str = "test") -> pd.DataFrame:
    """Reference rows shown with a board (``Track.reference_rows``); empty where it has none."""
    rows = registry.get(track).reference_rows(split)
    return pd.DataFrame() if rows is None else rows


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
    records = [
        {
            "id": row.submission_id,
            "name": names[row.submission_id],
            "metric_group": row.metric_group,
            "signature": row.signature,
            "created_at": row.created_at,
        }
        | json.loads(row.scores)
        for row in other.itertuples()
    ]
    return pd.DataFrame(records)


def entry_scores(
    keys: list[str], *, split: str = "test", track: str | None = None, db: Database | None = None
) -> pd.DataFrame:
    """Every public entry's ``id``, ``name``, ``setting`` and ``keys`` (current signatures)."""
    db = resolve(db)
    generation = db.generation
    return db.cached(
        ("entry_scores", tuple(keys), split, registry.get(track).name),
        lambda: _entry_scores(db, keys, split, track),
        generation,
    )


def _entry_scores(db: Database, keys: list[str], split: str, track: str | None) -> pd.DataFrame:
    entries = _entries(db, False, split, track)
    rows = _score_rows(db, list(entries["id"]))
    frame = entries[["id", "name", "setting"]].copy()
    for key in keys:
        frame[key] = np.nan
    if rows.empty:
        return frame
    pos = {sid: i for i, sid in enumerate(frame["id"])}
    for row in _latest_current(rows, current_signatures(rows)).itertuples():
        values = json.loads(row.scores)
        for key in keys:
            if values.get(key) is not None:
                frame.iloc[pos[row.submission_id], frame.columns.get_loc(key)] = float(values[key])
    return frame
