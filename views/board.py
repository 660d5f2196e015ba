"""The leaderboard pages' data, on top of the ``leaderboard`` package (the Submit page's:
:mod:`views.submission`, importable from here too). What visitors typed stays plain text in these
tables."""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import pandas as pd

from views import fields
from views.docs import doc_link
from views.submission import (  # noqa: F401 - the Submit page's names, importable from here
    accepted_types_text,
    history_table,
    problems_table,
    submission_status,
    template_bytes,
    validate_upload,
)


def metric_order(track: str | None = None) -> list[str]:
    """Metrics the picker offers, in the track's display order."""
    from etclib import tracks

    return tracks.get(track).display_order()


def metric_label(key: str) -> str:
    """A metric key as a reader sees it: ``"rougeL"`` -> ``"ROUGE-L ↑"``."""
    from etclib import metrics

    return metrics.heading(key)


def labelled(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every registered metric key's column headed by :func:`metric_label`."""
    from etclib import metrics

    known = {f.key for f in metrics.facts()}
    return table.rename(columns={c: metric_label(c) for c in table.columns if c in known})


def ranking_config(table: pd.DataFrame, metric: str) -> dict[str, Any]:
    """``column_config`` of a ranking table: labels, :data:`RANKING_WIDTHS`, live links."""
    import streamlit as st

    widths = {**RANKING_WIDTHS, score_header(metric): RANKING_WIDTHS["score"]}
    widths.pop("score")
    links = {
        FIELD_COLUMNS[key]: st.column_config.LinkColumn(FIELD_COLUMNS[key], display_text=shown)
        for key, shown in (("paper_url", "paper ↗"), ("model_url", "code ↗"))
    }
    numbers = table.select_dtypes("float").columns
    return {**fields.column_config(table.columns, numbers, **widths), **links}


def score_header(key: str) -> str:
    """The heading of a score column with its interval: ``"ROUGE-L ↑ [95% CI]"``."""
    return f"{metric_label(key)} [95% CI]"


#: Pixel widths of the ranking's first columns: with the selection column they fit a phone.
RANKING_WIDTHS = {"rank": 36, "name": 130, "score": 146}
#: Streamlit 1.67 wraps cell text only in rows taller than 4rem (views.corpus.RESULT_ROW_HEIGHT).
RANKING_ROW_HEIGHT = 70

VIEWS = ("Ranking table", "Charts")


def database_key() -> str:
    """The leaderboard database in use (a cache key: a page caches per database)."""
    from leaderboard import settings

    return str(settings.db_path().resolve())


# --- the board -----------------------------------------------------------------------------------


def board_of(entry_id: str | None) -> str | None:
    """The track whose public board holds ``entry_id``, or None."""
    import leaderboard as lb

    if not entry_id:
        return None
    return next((t for t in lb.tracks() if entry_id in set(lb.ranking(track=t)["id"])), None)


def link_value(params: Any, name: str, options: list[str] | tuple[str, ...], *, many: bool = False):
    """The option the query parameter ``name`` names, or None; ``many``: all it names."""
    if not many:
        value = params.get(name)
        return value if value in options else None
    named = {v.strip() for part in params.get_all(name) for v in part.split(",")}
    return [o for o in options if o in named]


def keep_in_url(params: Any, name: str, value: Any, default: Any) -> None:
    """Keep a widget's ``value`` in the query parameter ``name`` (none when ``default``)."""
    if isinstance(value, list) and isinstance(default, list):
        same = set(value) == set(default)  # the chooser's order is the table's, not the clicks'
    else:
        same = value == default
    if same or value is None or (isinstance(value, list) and not value):
        if name in params:
            del params[name]
        return
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    if params.get(name) != text:
        params[name] = text


def metric_choices(ranking: pd.DataFrame, track: str | None = None) -> list[str]:
    """Metrics present in ``ranking`` with at least one value, in :func:`metric_order`."""
    return [m for m in metric_order(track) if m in ranking.columns and ranking[m].notna().any()]


def shown_order(track: str | None = None, metric: str | None = None) -> list[str]:
    """The board's metric columns in the ranking table's order: ``metric`` first."""
    order = metric_order(track)
    return ([metric] if metric in order else []) + [m for m in order if m != metric]


def reference_rows(track: str | None = None) -> pd.DataFrame:
    """A copy of ``leaderboard.reference_rows`` of ``track``, computed once per corpus."""
    from views import corpus_key

    return _reference_rows(corpus_key(), track).copy()


@functools.lru_cache(maxsize=8)
def _reference_rows(corpus: str, track: str | None) -> pd.DataFrame:
    import leaderboard as lb

    return lb.reference_rows(track)


def reference_table(track: str | None = None, metric: str | None = None) -> pd.DataFrame:
    """The board's reference rows, rounded, in the ranking table's order."""
    rows = reference_rows(track)
    if rows.empty:
        return rows
    keys = [m for m in shown_order(track, metric) if m in rows.columns]
    out = rows[["name", *keys]].copy()
    out[keys] = out[keys].astype(float).round(2)
    out.insert(1, "kind", "👤 reference (annotators)")
    return out.rename(columns={k: metric_label(k) for k in keys}).reset_index(drop=True)


def like_for_like_table(
    ranking: pd.DataFrame, track: str | None = None, metric: str | None = None
) -> pd.DataFrame:
    """The reference rows and the entries on the same references (``Track.like_for_like``), headed
    as the measures they are; empty when no entry has such columns."""
    from etclib import tracks

    measures = dict(tracks.get(track).like_for_like)
    place = {m: i for i, m in enumerate(shown_order(track, metric))}
    heads = {
        c: metric_label(m)
        for c, m in sorted(measures.items(), key=lambda cm: place.get(cm[1], len(place)))
    }
    wanted = [c for c in heads if ranking is not None and c in ranking.columns]
    if not wanted or not ranking[wanted].notna().any().any():
        return pd.DataFrame()
    person = reference_rows(track)
    parts = []
    if not person.empty:
        part = pd.DataFrame({"name": person["name"], "kind": "👤 reference (annotators)"})
        parts.append(part.join(person.reindex(columns=list(heads)).astype(float)))
    entries = pd.DataFrame({"name": _labels(ranking), "kind": _kinds(ranking)}, index=ranking.index)
    parts.append(entries.join(ranking.reindex(columns=list(heads)).astype(float)))
    out = pd.concat(parts, ignore_index=True)
    out[list(heads)] = out[list(heads)].round(2)
    return out.rename(columns=heads)


def interval_text(value: Any, lo: Any, hi: Any) -> str:
    """``12.34 [11.02, 13.50]``; without an interval, the value alone; blank when missing."""

    def ok(x: Any) -> bool:
        return x is not None and not (isinstance(x, float) and math.isnan(x))

    if not ok(value):
        return ""
    if ok(lo) and ok(hi):
        return f"{float(value):.2f} [{float(lo):.2f}, {float(hi):.2f}]"
    return f"{float(value):.2f}"


def badge(kind: Any, baseline: Any = "", trivial: Any = "") -> str:
    """What a row is, in words: ``leaderboard.trivial.badge`` (the rules' one place)."""
    from leaderboard.trivial import badge as rule

    return rule(kind, baseline, trivial)


FLAG_TEXT = "⚠ below the constant baseline"


def legend(ranking: pd.DataFrame) -> str:
    """What the badges and flags of the board mean, in a paragraph."""
    from leaderboard.trivial import SCORED_HERE

    floor = str(ranking.attrs.get("flag_floor") or "constant")
    return (
        f"{SCORED_HERE}: a submission's predictions, scored by this site (it did not run the "
        "system); baseline: predictions this project generated and scored (floor: a trivial "
        f"one, drawn as a dashed line on the charts); {flag_text(True, floor)}: a submission "
        f"scoring less than the {floor} baseline on this metric (baselines are not flagged: "
        "the board is read against them); ⚠ trivial: a submission whose predictions are "
        "constant or nearly so, copy the utterance or repeat a baseline (the reason is given). "
        "The paper's reported numbers are never mixed into these columns."
    )


def filtered_note(shown: pd.DataFrame, ranking: pd.DataFrame) -> str:
    """For a filtered board, that its ranks and bands compare the entries shown only."""
    if not shown.attrs.get("only"):
        return ""
    return (
        f"Filtered: ranks and bands compare the {len(shown)} entries shown, not the "
        f"{len(ranking)} of the whole board. "
    )


def flag_text(below: Any, floor: str = "constant") -> str:
    """The flag of an entry that scores below the board's flag floor."""
    return f"⚠ below the {floor} baseline" if bool(below) is True else ""


def _flags(ranking: pd.DataFrame) -> list[str]:
    below = ranking["below_floor"] if "below_floor" in ranking else [False] * len(ranking)
    floor = str(ranking.attrs.get("flag_floor") or "constant")
    trivial = _trivial(ranking)  # a trivial submission's reason outranks the floor's flag
    return [f"⚠ trivial: {why}" if why else flag_text(b, floor) for b, why in zip(below, trivial)]


def trivial_warning(ranking: pd.DataFrame) -> str | None:
    """The banner when a trivial submission ranks above a real entry (None otherwise)."""
    return ranking.attrs.get("trivial_warning")


def _trivial(ranking: pd.DataFrame) -> list[str]:
    return [w if isinstance(w, str) else "" for w in ranking.get("trivial", [""] * len(ranking))]


def _kinds(ranking: pd.DataFrame) -> list[str]:
    baselines = ranking["baseline"] if "baseline" in ranking else [""] * len(ranking)
    return [badge(k, b, w) for k, b, w in zip(ranking["kind"], baselines, _trivial(ranking))]


def _interval_texts(frame: pd.DataFrame, metric: str) -> list[str]:
    bounds = frame.reindex(columns=[metric, f"{metric}_lo", f"{metric}_hi"])
    return [interval_text(*row) for row in bounds.itertuples(index=False)]


#: The ranking's optional entry columns (the column chooser): field -> heading.
FIELD_COLUMNS = {
    key: fields.label(key)
    for key in (
        "team",
        "account",
        "setting",
        "saw_test",
        "paper_url",
        "model_url",
        "parameters",
        "open_weights",
        "licence",
        "created_at",
        "id",
    )
}
#: Shown until a visitor chooses otherwise: every metric, and these fields.
DEFAULT_FIELDS = ("team", "account", "setting", "saw_test", "paper_url", "model_url", "id")


def column_choices(ranking: pd.DataFrame, track: str | None = None) -> dict[str, str]:
    """The columns a visitor may add (key -> heading): metrics with a value, then fields."""
    out = {
        m: metric_label(m)
        for m in metric_order(track)
        if m in ranking.columns and ranking[m].notna().any()
    }
    for field, heading in FIELD_COLUMNS.items():
        if field == "account" and not _has_accounts(ranking):
            continue
        if field in ranking.columns:
            out[field] = heading
    return out


def default_columns(choices: dict[str, str]) -> list[str]:
    """The columns of ``choices`` shown until a visitor chooses."""
    return [c for c in choices if c not in FIELD_COLUMNS or c in DEFAULT_FIELDS]


def _has_accounts(ranking: pd.DataFrame) -> bool:
    return (
        "account" in ranking
        and not ranking["account"].fillna("").astype(str).str.strip().eq("").all()
    )


def board_table(
    ranking: pd.DataFrame,
    metric: str,
    track: str | None = None,
    columns: list[str] | tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """The ranking for display: rank, band, name, score, badge, flag, then ``columns``."""
    if ranking.empty:
        return pd.DataFrame(columns=["rank", "rank_band", "name", score_header(metric)])
    choices = column_choices(ranking, track)
    wanted = set(default_columns(choices) if columns is None else columns)
    t = pd.DataFrame(index=ranking.index)
    for col in ("rank", "rank_band", "name"):
        if col in ranking.columns:
            t[col] = ranking[col]
    t[score_header(metric)] = _interval_texts(ranking, metric)
    if "kind" in ranking.columns:
        t["kind"] = _kinds(ranking)
    if "below_floor" in ranking.columns or "trivial" in ranking.columns:
        t["flag"] = _flags(ranking)
    for key, heading in choices.items():
        if key not in wanted or key == metric:
            continue
        if key in FIELD_COLUMNS:
            t[heading] = ranking[key].fillna("")  # blank, not "None", where nothing was said
        else:
            t[heading] = ranking[key].round(2)
    # the columns a visitor came for first, so a phone shows them without scrolling
    first = [c for c in ("rank", "name", score_header(metric), "rank_band") if c in t]
    return t[first + [c for c in t.columns if c not in first]].reset_index(drop=True)


def chart_table(
    ranking: pd.DataFrame, metric: str, reported: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Rows for the bar chart: name, value, lo, hi, kind (reported rows appended when given)."""
    parts = []
    if not ranking.empty and metric in ranking.columns:
        parts.append(
            pd.DataFrame(
                {
                    "name": _labels(ranking),
                    "value": ranking[metric].to_numpy(),
                    "lo": ranking.get(f"{metric}_lo", pd.Series([None] * len(ranking))).to_numpy(),
                    "hi": ranking.get(f"{metric}_hi", pd.Series([None] * len(ranking))).to_numpy(),
                    "kind": [
                        "baseline" if k == "baseline" else "reproduced" for k in ranking["kind"]
                    ]
                    if "kind" in ranking
                    else "reproduced",
                }
            )
        )
    if reported is not None and not reported.empty and metric in reported.columns:
        parts.append(
            pd.DataFrame(
                {
                    "name": [f"{n} (reported)" for n in _labels(reported)],
                    "value": reported[metric].to_numpy(),
                    "lo": None,
                    "hi": None,
                    "kind": "reported",
                }
            )
        )
    if not parts:
        return pd.DataFrame(columns=["name", "value", "lo", "hi", "kind"])
    out = pd.concat(parts, ignore_index=True).dropna(subset=["value"])
    out[["value", "lo", "hi"]] = out[["value", "lo", "hi"]].astype(float)
    return out.sort_values("value", ascending=False, kind="stable").reset_index(drop=True)


def pr_table(ranking: pd.DataFrame, reported: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows for the precision-recall scatter: name, precision, recall, units, kind."""
    parts = []
    for frame, kind in ((ranking, "reproduced"), (reported, "reported")):
        if frame is None or frame.empty or not {"precision", "recall"} <= set(frame.columns):
            continue
        units = next((frame[c] for c in ("units_mean", "units") if c in frame.columns), None)
        parts.append(
            pd.DataFrame(
                {
                    "name": _labels(frame)
                    if kind == "reproduced"
                    else [f"{n} (reported)" for n in _labels(frame)],
                    "precision": frame["precision"].to_numpy(dtype=float),
                    "recall": frame["recall"].to_numpy(dtype=float),
                    "units": (
                        units if units is not None else pd.Series([math.nan] * len(frame))
                    ).to_numpy(dtype=float),
                    "kind": [
                        "baseline" if k == "baseline" else kind
                        for k in frame.get("kind", pd.Series([kind] * len(frame)))
                    ],
                }
            )
        )
    if not parts:
        return pd.DataFrame(columns=["name", "precision", "recall", "units", "kind"])
    return pd.concat(parts, ignore_index=True).dropna(subset=["precision", "recall"])


def _labels(frame: pd.DataFrame) -> list[str]:
    """Display names, made unique by the setting (and the id) when names repeat."""
    names = [str(n) for n in frame.get("name", pd.Series([""] * len(frame)))]
    settings = [str(s) for s in frame.get("setting", pd.Series([""] * len(frame)))]
    labels = names
    if len(set(labels)) < len(labels):
        labels = [f"{n} · {s}" if s else n for n, s in zip(names, settings)]
    if len(set(labels)) < len(labels) and "id" in frame.columns:
        labels = [f"{lab} · {i}" for lab, i in zip(labels, frame["id"])]
    return labels


def top_table(n: int = 5) -> tuple[pd.DataFrame, str]:
    """The first ``n`` rows of the ranking in four columns (a phone's width), and its metric."""
    import leaderboard as lb

    ranking = lb.ranking()
    from etclib import tracks

    metric = str(ranking.attrs.get("sort_by") or tracks.get().ranking_key(metric_choices(ranking)))
    header = score_header(metric)
    if ranking.empty:
        return pd.DataFrame(columns=["rank", "name", header, "kind"]), metric
    top = ranking.head(n)
    out = top[["rank", "name"]].copy()
    out[header] = _interval_texts(top, metric)
    out["kind"] = [" · ".join(filter(None, pair)) for pair in zip(_kinds(top), _flags(top))]
    return out.reset_index(drop=True), metric


def floor_lines(ranking: pd.DataFrame, metric: str) -> dict[str, float]:
    """Trivial baseline -> its ``metric`` value, for the charts' floor lines (none absent)."""
    from leaderboard.board import floor_values

    return floor_values(ranking, metric)


def pr_floors(ranking: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Trivial baseline -> its judge (precision, recall), for the scatter's floor lines."""
    precision, recall = floor_lines(ranking, "precision"), floor_lines(ranking, "recall")
    return {name: (precision[name], recall[name]) for name in precision if name in recall}


def judged(ranking: pd.DataFrame) -> bool:
    """Whether any entry has the first key of its track's ranking rule (the judge's score)."""
    from etclib import tracks

    key = tracks.get(ranking.attrs.get("track")).rank_order[0]
    return key in ranking.columns and bool(ranking[key].notna().any())


def honesty_note(ranking: pd.DataFrame) -> str | None:
    """The banner for a board ranked by an automatic score as no entry has a judge score."""
    from etclib import metrics, tracks

    t = tracks.get(ranking.attrs.get("track"))
    judge = metrics.fact(t.rank_order[0])
    if ranking.empty or judge.family != "judge" or judged(ranking):
        return None
    metric = str(ranking.attrs.get("sort_by") or t.ranking_key(metric_choices(ranking, t.name)))
    ranked = metrics.fact(metric)
    label = ranked.label
    judge_label = judge.label
    kind = "lexical-overlap" if ranked.family == "lexical" else "similarity"
    head = (
        f"**No entry has an LLM-judge score yet, so this board is ranked by {label}, an "
        f"automatic {kind} score, not by the {judge_label}.** "
    )
    floor, why = t.flag_floor, t.floors.get(t.flag_floor, "")
    value = floor_values_of(ranking, metric).get(floor)
    if value is None:
        fact = (
            f"Such scores reward generic wording; the {floor} baseline, {why}, which would show "
            "how far that goes, is not on this board."
        )
    else:
        fact = (
            f"Such scores reward generic wording: the {floor} baseline, {why}, reaches {label} "
            f"{value:.2f} here. Read the ranking against that floor."
        )
    return head + fact


def floor_values_of(ranking: pd.DataFrame, metric: str) -> dict[str, float]:
    """The board's trivial-baseline values on ``metric``."""
    if ranking.attrs.get("sort_by") == metric and "floors" in ranking.attrs:
        return dict(ranking.attrs["floors"])
    return floor_lines(ranking, metric)


def reported_table(published: pd.DataFrame) -> pd.DataFrame:
    """Published results for display: name, setting, every metric present, source."""
    from etclib import tracks

    keys = [m for m in tracks.get().keys(board=True) if m in published.columns]
    cols = [c for c in ("name", "setting", *keys, "source") if c in published.columns]
    out = published[cols].rename(columns={k: metric_label(k) for k in keys})
    return out.reset_index(drop=True)


def entry_ids(ranking: pd.DataFrame, published: pd.DataFrame) -> dict[str, str]:
    """Every entry's id -> a label (name · setting), board entries first, then reported ones."""
    out: dict[str, str] = {}
    for frame, suffix in ((ranking, ""), (published, " (reported)")):
        if frame is None or frame.empty or "id" not in frame.columns:
            continue
        for sid, label in zip(frame["id"], _labels(frame)):
            out.setdefault(str(sid), label + suffix)
    return out


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (int, float)):
        return f"{value:.{digits}f}"
    return str(value)


def detail_view(info: dict[str, Any], baseline: Any = "") -> dict[str, Any]:
    """``leaderboard.detail`` as display pieces: title, badge, fields, scores, breakdowns;
    ``baseline``: its board row's (a floor is badged as one)."""
    from leaderboard.board import PUBLIC_FIELDS

    sub = info.get("submission", {})
    shown_fields = [
        {
            "field": fields.label(k),
            # a timestamp to the minute: the microseconds say nothing to a reader
            "value": ""
            if sub.get(k) is None
            else str(sub.get(k))[: 16 if k == "created_at" else None],
        }
        for k in PUBLIC_FIELDS
        if k in sub and k not in ("kind", "name", "description", "status")
    ]
    rows = []
    for group, entry in sorted((info.get("scores") or {}).items()):
        intervals = entry.get("intervals") or {}
        for key, value in (entry.get("scores") or {}).items():
            if isinstance(value, (int, float)):
                lo, hi = intervals.get(key, (None, None))
                rows.append(
                    {
                        "metric": metric_label(key),
                        "value [95% CI]": interval_text(value, lo, hi),
                        "group": group,  # for the page's links, never shown
                        "current": "yes" if entry.get("current") else "no (older)",
                        "signature": json_text(entry.get("signature")),
                    }
                )
    for key, value in (info.get("reported") or {}).items():
        if isinstance(value, (int, float)):
            rows.append(
                {
                    "metric": metric_label(key),
                    "value [95% CI]": _fmt(value),
                    "group": "reported",
                    "signature": "as reported",
                }
            )
    breakdown = {}
    for name, subsets in (info.get("breakdown") or {}).items():
        table = pd.DataFrame.from_dict(subsets, orient="index")
        if not table.empty:
            breakdown[name] = labelled(na_text(table.round(2)))
    v = info.get("verbosity") or {}
    verbosity = {
        label: _fmt(v.get(key), 1 if "chars" in key else 2)
        for key, label in (
            ("pred_chars", "prediction length (chars)"),
            ("ref_chars", "reference length (chars)"),
            ("units_mean", "units per prediction"),
            ("ref_units_mean", "units per reference"),
        )
        if key in v
    }
    return {
        "title": str(sub.get("name", "")),
        "badge": badge(sub.get("kind"), baseline, info.get("trivial"))
        + (f" ({info['trivial']})" if info.get("trivial") else ""),
        "status": str((info.get("status") or {}).get("status", "")),
        "fields": pd.DataFrame(shown_fields, columns=["field", "value"]),
        "description": str(sub.get("description") or ""),
        "scores": pd.DataFrame(rows) if rows else None,
        "breakdown": breakdown,
        "verbosity": verbosity,
    }


#: what ``n/a`` means in a breakdown table (the page shows it beside the tables)
BREAKDOWN_NOTE = (
    "n/a: undefined on this subset. On the categories track, a category with no gold and no "
    "predicted label among the subset's items has no precision, recall or F1 and is left out "
    "of the subset's macro-F1 (" + doc_link("leaderboard.md#tracks", "the tracks") + ")."
)


def na_text(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with missing numbers shown as ``n/a`` (those columns become text, two decimals)."""
    out = table.copy()
    for col in out.columns:
        values = out[col]
        if values.isna().any() and pd.api.types.is_numeric_dtype(values):
            out[col] = ["n/a" if pd.isna(v) else f"{float(v):.2f}" for v in values]
    return out


def json_text(value: Any) -> str:
    """A compact JSON rendering of a signature or a judge detail (plain text)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def items_view(items: pd.DataFrame) -> pd.DataFrame:
    """Per-item rows for display: nested values (judge units, labels) turned into JSON text."""
    out = items.copy()
    for col in out.columns:
        if out[col].map(lambda x: isinstance(x, (list, dict, tuple))).any():
            out[col] = out[col].map(json_text)
        elif pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].round(2)
    first = [
        c for c in ("dialogue_id", "turn", "role", "label", "prediction", "reference") if c in out
    ]
    return out[first + [c for c in out.columns if c not in first and c != "item_index"]]


#: The board's export files: key -> (button label, file name, MIME type).
EXPORTS: dict[str, tuple[str, str, str]] = {
    "board_csv": ("Board (CSV)", "etc_leaderboard.csv", "text/csv"),
    "board_json": ("Board (JSON)", "etc_leaderboard.json", "application/json"),
    "reported_csv": ("Published results (CSV)", "etc_reported.csv", "text/csv"),
}


def exports(track: str | None = None) -> dict[str, tuple[str, str, str]]:
    """:data:`EXPORTS` of the board of ``track``, named for it (published rows where they
    belong)."""
    from etclib import tracks

    t = tracks.get(track)
    board = "_".join(filter(None, ["etc_leaderboard", t.tag]))
    return {
        key: (label, file_name.replace("etc_leaderboard", board), mime)
        for key, (label, file_name, mime) in EXPORTS.items()
        if key.startswith("board") or t.reported
    }


def export_file(key: str, track: str | None = None) -> bytes:
    """One file of :data:`EXPORTS` of the board of ``track``, as UTF-8 bytes."""
    import leaderboard as lb

    if key == "board_csv":
        return lb.export_csv("board", track=track).encode("utf-8")
    if key == "board_json":
        return lb.export_json("board", track=track).encode("utf-8")
    if key == "reported_csv":
        return lb.export_csv("reported").encode("utf-8")
    raise ValueError(f"unknown export {key!r}: use one of {', '.join(EXPORTS)}")


def metric_first(table: pd.DataFrame, metric: str | None, after: int = 2) -> pd.DataFrame:
    """``table`` with the column ``metric`` moved to position ``after``."""
    if not metric or metric not in table.columns:
        return table
    cols = [c for c in table.columns if c != metric]
    return table[cols[:after] + [metric] + cols[after:]]


# --- what the charts draw ------------------------------------------------------------------------


def time_table(
    ranking: pd.DataFrame, metric: str, published: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Rows of the best-over-time chart: entries at submission, reported rows at publication."""
    from etclib.data import reference

    parts = []
    if not ranking.empty and metric in ranking.columns:
        parts.append(
            pd.DataFrame(
                {
                    "name": _labels(ranking),
                    "when": pd.to_datetime(ranking["created_at"], utc=True, errors="coerce"),
                    "value": ranking[metric].to_numpy(dtype=float),
                    "kind": [
                        "baseline" if k == "baseline" else "reproduced" for k in ranking["kind"]
                    ],
                }
            )
        )
    date = reference.published()
    if date and published is not None and not published.empty and metric in published.columns:
        parts.append(
            pd.DataFrame(
                {
                    "name": [f"{n} (reported)" for n in _labels(published)],
                    "when": pd.to_datetime(date, utc=True),
                    "value": published[metric].to_numpy(dtype=float),
                    "kind": "reported",
                }
            )
        )
    columns = ["name", "when", "value", "kind"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def per_category_keys(track: str | None = None) -> dict[str, str]:
    """Category -> the track's key of its F1, when the track scores each category; else empty."""
    from etclib import tracks
    from etclib.data.corpus import CATEGORIES

    keys = set(tracks.get(track).keys())
    wanted = {c: f"f1_{c}" for c in CATEGORIES}
    return wanted if set(wanted.values()) <= keys else {}


def category_table(scores: pd.DataFrame, keys: dict[str, str]) -> pd.DataFrame:
    """``leaderboard.entry_scores`` as a table: a row per entry, a column per category."""
    out = scores[list(keys.values())].astype(float).round(2)
    out.columns = list(keys)
    out.index = _labels(scores)
    return out.dropna(how="all")


def person_bars(like: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, dict[str, float]]:
    """The like-for-like table as bars of ``metric``, each reference row as a line."""
    head = metric_label(metric)
    if like.empty or head not in like.columns:
        return pd.DataFrame(columns=["name", "value", "kind"]), {}
    people = like["kind"].str.startswith("👤")
    marks = {str(n): float(v) for n, v in zip(like["name"][people], like[head][people])}
    bars = like[~people]
    table = pd.DataFrame(
        {
            "name": bars["name"],
            "value": bars[head].astype(float),
            "kind": ["baseline" if "baseline" in k else "reproduced" for k in bars["kind"]],
        }
    ).dropna(subset=["value"])
    return table.sort_values("value", ascending=False).reset_index(drop=True), marks


def chart_figures(
    ranking: pd.DataFrame, shown: pd.DataFrame, reported: pd.DataFrame | None, metric: str
) -> dict[str, Any]:
    """The Leaderboard's charts of ``shown``: key -> a figure, or the sentence in its place."""
    import leaderboard as lb
    from etclib import metrics, tracks
    from views import charts

    track = ranking.attrs.get("track")
    out: dict[str, Any] = {}
    bars = chart_table(shown, metric, reported)
    if bars.empty:
        out["lb_bars"] = (
            "No entry matches these filters."
            if ranking[metric].notna().any()
            else f"No entry has {metric_label(metric)} yet."
        )
    else:
        out["lb_bars"] = charts.score_bars(bars, metric, floor_values_of(ranking, metric))
    pr = pr_table(shown, reported)
    if not pr.empty:
        out["lb_pr"] = charts.precision_recall_scatter(pr, pr_floors(ranking))
    elif tracks.get(track).free_text:
        out["lb_pr"] = (
            "Judge precision and recall appear once entries are scored by the LLM judge; this "
            "site has no judge score yet."
        )
    people, marks = person_bars(like_for_like_table(shown, track, metric), metric)
    if not people.empty:
        out["lb_person"] = charts.score_bars(
            people,
            metric,
            marks=marks,
            title=f"{metric_label(metric)} (×100) against the same references as a person · "
            "dashed: a person",
        )
    over_time = time_table(shown, metric, reported)
    if over_time["value"].notna().any():
        higher = metrics.fact(metric).higher_is_better
        out["lb_over_time"] = charts.best_over_time(over_time, metric, higher)
    keys = per_category_keys(track)
    if keys:
        scores = lb.entry_scores(list(keys.values()), track=track)
        table = category_table(scores[scores["id"].isin(shown["id"])], keys)
        out["lb_per_category"] = charts.category_heatmap(
            table, "F1 (×100) of each entry per category"
        )
    return out
