"""Compare two stored entries (no re-scoring), the board's pairwise verdicts, and their exports.

:func:`compare` hands both entries' stored per-item arrays to
:func:`etclib.tracks.comparison.compare_data` with the board's bootstrap settings, so the CLI,
the site and ``etclib compare`` on the two files print the same numbers.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from etclib import metrics as registry
from etclib import tracks
from etclib.core import csvexport
from etclib.metrics import MetricData
from etclib.tracks import comparison
from etclib.tracks.categories.labels import CSV_SEPARATOR
from etclib.tracks.comparison import Comparison

from . import settings
from .board import ranking
from .db import Database, resolve
from .entry import _chosen_for, _items, _submission
from .errors import LeaderboardError
from .scoring import load_arrays

#: the most entries the pairwise matrix holds
MAX_PAIRWISE = 10


def _entry(db: Database, submission_id: str) -> dict[str, Any]:
    rec = _submission(db, str(submission_id))
    if rec["kind"] == "reported":
        raise LeaderboardError(
            f"{rec['name']!r} ({rec['id']}) is a published result: the paper's numbers, with no "
            "per-item scores to compare. Pick an entry scored by this site."
        )
    return rec


def _predictions(db: Database, submission_id: str, track: tracks.Track) -> list[Any]:
    """A stored submission's predictions in item order, decoded by its track."""
    rows = db.query(
        "SELECT prediction FROM predictions WHERE submission_id = ? ORDER BY item_index",
        [submission_id],
    )
    return [track.decode(r[0]) for r in rows]


def _item_rows(
    db: Database, score_id: int, n_items: int
) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]] | None]:
    """A stored score row's per-item scores and details (None when it has none)."""
    rows = db.query(
        "SELECT item_index, scores, details FROM item_scores WHERE score_id = ? "
        "ORDER BY item_index",
        [score_id],
    )
    scores: list[dict[str, Any]] = [{} for _ in range(n_items)]
    details: list[dict[str, Any]] = [{} for _ in range(n_items)]
    kept = [r for r in rows if 0 <= int(r[0]) < n_items]
    # one JSON document for all rows: a thousand json.loads calls cost more than the parsing
    got_scores = json.loads("[" + ",".join(r[1] or "{}" for r in kept) + "]")
    got_details = json.loads("[" + ",".join(r[2] or "null" for r in kept) + "]")
    any_details = False
    for (i, _, stored), item_scores, item_details in zip(kept, got_scores, got_details):
        scores[int(i)] = item_scores
        if stored:  # a row without details keeps {}
            details[int(i)] = item_details
            any_details = True
    return (scores if len(rows) == n_items else None), (details if any_details else None)


def _settings() -> tuple[int, int]:
    return settings.resamples(), settings.seed()


def compare(
    id_a: str,
    id_b: str,
    *,
    metrics: str | list[str] | None = None,
    trials: int | None = None,
    db: Database | None = None,
) -> Comparison:
    """Entry B compared with entry A (B − A) on the metric groups both have alike."""
    db = resolve(db)
    trials = comparison.DEFAULT_TRIALS if trials is None else int(trials)
    names = None if metrics is None else (metrics,) if isinstance(metrics, str) else tuple(metrics)
    key = ("compare", str(id_a), str(id_b), names, trials, *_settings())
    generation = db.generation
    return db.cached(key, lambda: _compare(db, str(id_a), str(id_b), metrics, trials), generation)


def _compare(db: Database, id_a: str, id_b: str, wanted, trials: int) -> Comparison:
    rec_a, rec_b = _entry(db, id_a), _entry(db, id_b)
    track_a = rec_a.get("track") or tracks.DEFAULT_TRACK
    track_b = rec_b.get("track") or tracks.DEFAULT_TRACK
    if track_a != track_b:
        raise LeaderboardError(
            f"{rec_a['name']!r} is on the {track_a} track and {rec_b['name']!r} on the {track_b} "
            "track; compare two entries of the same track."
        )
    if rec_a["split"] != rec_b["split"]:
        raise LeaderboardError(
            f"{rec_a['name']!r} covers the {rec_a['split']} split and {rec_b['name']!r} the "
            f"{rec_b['split']} split; compare two entries of the same split."
        )
    chosen = [_chosen_for(db, rec["id"])[0] for rec in (rec_a, rec_b)]
    rows_a, rows_b = ({r.metric_group: r for r in c.itertuples()} for c in chosen)
    groups = [g for g in tracks.get(track_a).groups() if g in rows_a and g in rows_b]
    if wanted is not None:
        asked = tracks.get(track_a).parse_metrics(wanted)
        missing = [g for g in asked if g not in groups]
        if missing:
            raise LeaderboardError(
                f"Not both entries have {', '.join(missing)} scores; compare "
                f"{', '.join(groups) or 'nothing'} instead."
            )
        groups = asked
    same = [g for g in groups if json.loads(rows_a[g].signature) == json.loads(rows_b[g].signature)]
    differing = [g for g in groups if g not in same]
    n_items = {int(rows_a[g].n_items) for g in same} | {int(rows_b[g].n_items) for g in same}
    if not same or len(n_items) != 1:
        why = f" ({', '.join(differing)} scored under different signatures)" if differing else ""
        raise LeaderboardError(
            f"{rec_a['name']!r} and {rec_b['name']!r} share no metric scored the same way{why}; "
            "nothing to compare until both are scored under the board's current signature."
        )
    ids = [int(rows_a[g].id) for g in same] + [int(rows_b[g].id) for g in same]
    arrays = load_arrays(db, ids)
    data_a, data_b, signature = {}, {}, {}
    stored_a: dict[str, list[dict[str, Any]]] = {}
    stored_b: dict[str, list[dict[str, Any]]] = {}
    n = n_items.pop()
    for g in same:
        ra, rb = rows_a[g], rows_b[g]
        for row, data, stored in ((ra, data_a, stored_a), (rb, data_b, stored_b)):
            scores, details = _item_rows(db, int(row.id), n)
            data[g] = MetricData(arrays[int(row.id)], details=details)
            if scores is not None:
                stored[g] = scores
        signature.update(json.loads(ra.signature))
    if differing:
        signature["not compared"] = ", ".join(differing) + " (different signatures)"
    items = _items(rec_a["split"])
    track = tracks.get(track_a)
    preds_a = _predictions(db, rec_a["id"], track)
    preds_b = _predictions(db, rec_b["id"], track)
    if not (len(items) == len(preds_a) == len(preds_b) == n):
        raise LeaderboardError(
            f"The stored items of {rec_a['id']} ({len(preds_a)}) and {rec_b['id']} "
            f"({len(preds_b)}) do not match the {rec_a['split']} split ({len(items)} items)."
        )
    resamples, seed = _settings()
    return comparison.compare_data(
        items,
        {g: registry.get(g) for g in same},
        data_a,
        data_b,
        predictions_a=preds_a,
        predictions_b=preds_b,
        signature=signature,
        a={"name": str(rec_a["name"]), "source": str(rec_a["id"])},
        b={"name": str(rec_b["name"]), "source": str(rec_b["id"])},
        track=track_a,
        split=rec_a["split"],
        resamples=resamples,
        seed=seed,
        trials=trials,
        item_scores=(stored_a, stored_b),
    )


def pairwise(
    *,
    track: str | None = None,
    sort_by: str | None = None,
    top: int = MAX_PAIRWISE,
    trials: int | None = None,
    db: Database | None = None,
) -> pd.DataFrame:
    """The verdict of every ordered pair of the board's top ``top`` ranked entries (at most
    :data:`MAX_PAIRWISE`) on ``sort_by`` (default: the ranking metric).

    One row per (row entry, column entry): ``a_id``, ``a_name``, ``b_id``, ``b_name``,
    ``difference`` (row − column), ``p_value``, ``verdict`` (the row entry's view; the diagonal
    "same"). ``df.attrs``: ``metric``, ``order`` (the entry ids), ``names``."""
    db = resolve(db)
    trials = comparison.DEFAULT_TRIALS if trials is None else int(trials)
    top = max(0, min(int(top), MAX_PAIRWISE))
    board = ranking(track=track, sort_by=sort_by, db=db)
    metric = board.attrs.get("sort_by")
    key = ("pairwise", tracks.get(track).name, metric, top, trials, *_settings())
    generation = db.generation
    return db.cached(key, lambda: _pairwise(db, board, metric, top, trials), generation).copy()


def _pairwise(db: Database, board: pd.DataFrame, metric: str, top: int, trials: int):
    group = registry.fact(metric).group
    module = registry.get(group)
    higher = registry.fact(metric).higher_is_better
    ranked = board[(board["rank"] > 0) & board[metric].notna()].head(top)
    entries: list[tuple[str, str, MetricData]] = []
    n_items = None
    for sid, name in zip(ranked["id"], ranked["name"]):
        chosen, _ = _chosen_for(db, sid)
        row = chosen[chosen["metric_group"] == group] if not chosen.empty else chosen
        if row.empty or not bool(row["current"].iloc[0]):
            continue
        arrays = load_arrays(db, [int(row["id"].iloc[0])])[int(row["id"].iloc[0])]
        n = int(row["n_items"].iloc[0])
        if n_items is None:
            n_items = n
        if n == n_items:
            entries.append((str(sid), str(name), MetricData(arrays)))
    resamples, seed = _settings()
    pairs = comparison.pairwise(
        module,
        [e[2] for e in entries],
        metric,
        n_items or 0,
        resamples=resamples,
        seed=seed,
        trials=trials,
    )
    sides = {comparison.A_BETTER: "better", comparison.B_BETTER: "worse"}
    flipped = {"better": "worse", "worse": "better"}
    records = []
    for i, (ida, na, _) in enumerate(entries):
        for j, (idb, nb, _) in enumerate(entries):
            if i == j:
                records.append((ida, na, idb, nb, 0.0, 1.0, "same"))
                continue
            got = pairs[(min(i, j), max(i, j))]  # A: the upper entry of the two
            side = sides.get(got.verdict, comparison.NO_DIFFERENCE)
            # when this row's entry is A: row − column = A − B
            sign, view = (-1, side) if i < j else (1, flipped.get(side, side))
            records.append((ida, na, idb, nb, sign * got.difference, got.p_value, view))
    frame = pd.DataFrame(
        records, columns=["a_id", "a_name", "b_id", "b_name", "difference", "p_value", "verdict"]
    )
    frame.attrs.update(
        metric=metric,
        order=[e[0] for e in entries],
        names={e[0]: e[1] for e in entries},
        higher_is_better=higher,
        trials=trials,
    )
    return frame


def _csv(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    columns = list(dict.fromkeys(k for r in rows for k in r))
    return csvexport.dumps(columns, ([_cell(r.get(k)) for k in columns] for r in rows))


def _cell(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return CSV_SEPARATOR.join(str(x) for x in v)
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return ""
    return v


def export_csv(c: Comparison, what: str = "metrics") -> str:
    """The comparison's ``metrics`` or per-``items`` table as formula-safe CSV."""
    if what == "metrics":
        return _csv(c.metric_rows())
    if what == "items":
        return _csv(c.per_item())
    raise LeaderboardError(f"Unknown comparison export {what!r}: choose metrics or items.")


def export_json(c: Comparison, per_item: bool = True) -> str:
    """The comparison as JSON (the CLI's shape), with the per-item rows by default."""
    return json.dumps(
        comparison._finite(c.to_json(per_item=per_item)), ensure_ascii=False, indent=2
    )
