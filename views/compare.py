"""Tables and figures of the Compare page and the Leaderboard's pairwise matrix, from a
:class:`etclib.tracks.comparison.Comparison`. Visitors' text stays plain; chart labels are
escaped."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from etclib import metrics as registry
from etclib.tracks.comparison import A_BETTER, B_BETTER, Comparison, outcome, win_tie_loss

from .charts import difference_histogram, heatmap, short_labels

#: how the item table can be ordered: label -> (sort on the difference, ascending)
ORDERS = {
    "where B wins most": False,
    "where A wins most": True,
    "item order": None,
}
VERDICT_MARKS = {A_BETTER: "◀ A better", B_BETTER: "B better ▶"}
BREAKDOWNS = ("role", "category", "turn")
VIEWS = ("Where each one wins", "Distribution of the differences")


def _num(v: Any) -> float:
    return float("nan") if v is None else float(v)


#: What an undefined score reads (a per-category precision of a category never predicted).
UNDEFINED = "n/a"
UNDEFINED_HELP = (
    "n/a: undefined, not 0: a precision for a category the entry never predicts, a recall for "
    "a category no item has in its label (the verdict says which)."
)


def undefined(c: Comparison) -> dict[str, dict[str, str]]:
    """Side ("A", "B") -> metric key with no value on that side -> why (``undefined(data)``)."""
    out: dict[str, dict[str, str]] = {"A": {}, "B": {}}
    for group, module in c.modules.items():
        find = getattr(module, "undefined", None)
        if find is not None:
            out["A"].update(find(c.data_a[group]))
            out["B"].update(find(c.data_b[group]))
    return out


def _score(value: Any, why: str | None) -> str:
    return UNDEFINED if why or math.isnan(_num(value)) else f"{float(value):.2f}"


def metric_table(c: Comparison) -> pd.DataFrame:
    """One row per compared metric: label, verdict, B − A, interval, A, B and p."""
    rows = []
    missing = undefined(c)
    for key, m in c.metrics.items():
        lo, hi = m.interval
        sides = {side: missing[side][key] for side in ("A", "B") if key in missing[side]}
        # "B never predicts fear"; a reason both sides share ("no item is labelled fear") once
        why = (
            [sides["A"]]
            if len(sides) == 2 and len(set(sides.values())) == 1
            else [f"{side} {text}" for side, text in sides.items()]
        )
        rows.append(
            {
                "metric": registry.fact(key).label,
                "key": key,
                # the verdict beside the metric: a phone shows both without scrolling
                "verdict": f"{UNDEFINED}: " + "; ".join(why)
                if why
                else VERDICT_MARKS.get(m.verdict, m.verdict),
                "B − A": math.nan if why else _num(m.difference),
                "95% interval": "–" if why or math.isnan(_num(lo)) else f"[{lo:+.2f}, {hi:+.2f}]",
                "A": _score(m.a, missing["A"].get(key)),
                "B": _score(m.b, missing["B"].get(key)),
                "p": m.p_value,
            }
        )
    return pd.DataFrame(rows)


def item_keys(c: Comparison) -> list[str]:
    """The per-item score keys to choose from, the primary one (win/tie/loss) first."""
    keys = c.item_keys()
    first = c.primary_item_key()
    return ([first] if first else []) + [k for k in keys if k != first]


def item_key_label(key: str) -> str:
    """How a per-item score is named: its metric's label, else its field label."""
    try:
        return registry.fact(key).label
    except Exception:  # noqa: BLE001 - a per-item key that is no metric key (n_units)
        from .fields import label

        return label(key)


def items_frame(c: Comparison, key: str) -> pd.DataFrame:
    """One row per item: key, label, reference, predictions, ``key``'s scores and B − A."""
    rows = []
    name = item_key_label(key)
    for i, r in enumerate(c.per_item()):
        row = {
            "item": i,
            "dialogue_id": r["dialogue_id"],
            "turn": r["turn"],
            "role": r["role"],
            "label": ", ".join(r["label"]),
            "B − A": r.get(f"{key}_diff"),
            f"{name} A": r.get(f"{key}_a"),
            f"{name} B": r.get(f"{key}_b"),
            "reference": r["reference"],
            "prediction A": text_of(r["prediction_a"]),
            "prediction B": text_of(r["prediction_b"]),
        }
        if "labels_differ" in r:
            row["label sets differ"] = r["labels_differ"]
        rows.append(row)
    frame = pd.DataFrame(rows)
    for col in (f"{name} A", f"{name} B", "B − A"):
        if col in frame:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").round(2)
    return frame


def text_of(value: Any) -> str:
    return ", ".join(value) if isinstance(value, (list, tuple)) else str(value)


def filter_items(
    frame: pd.DataFrame,
    *,
    categories: list[str] | None = None,
    turns: list[int] | None = None,
    roles: list[str] | None = None,
    order: str = "where B wins most",
    differ_only: bool = False,
) -> pd.DataFrame:
    """The rows of :func:`items_frame` that match every filter given, in ``order``."""
    out = frame
    if categories:
        wanted = set(categories)
        out = out[out["label"].map(lambda s: bool(wanted & set(s.split(", "))))]
    if turns:
        out = out[out["turn"].isin([int(t) for t in turns])]
    if roles:
        out = out[out["role"].isin(roles)]
    if differ_only and "label sets differ" in out:
        out = out[out["label sets differ"]]
    ascending = ORDERS.get(order)
    if ascending is not None and "B − A" in out:
        out = out.sort_values("B − A", ascending=ascending, na_position="last", kind="stable")
    return out.reset_index(drop=True)


def outcome_tables(c: Comparison, key: str) -> dict[str, pd.DataFrame]:
    """Breakdown -> a table of subsets with "B wins", "tie", "A wins" on ``key``."""
    counts = win_tie_loss(c, key)
    out = {}
    for name in BREAKDOWNS:
        frame = pd.DataFrame.from_dict(counts[name], orient="index")
        frame.index.name = name
        frame = frame.rename(columns={"undefined": "no score"})
        if not frame["no score"].any():
            frame = frame.drop(columns=["no score"])
        out[name] = frame.reset_index()
    return out


def cause_outcomes(frame: pd.DataFrame, types: pd.DataFrame, key: str) -> pd.DataFrame:
    """Win/tie/loss on ``key`` by emotion-cause type."""
    cols = ["dialogue_id", "turn", "role"]
    if frame.empty or types.empty:
        return pd.DataFrame(columns=["cause type", "B wins", "tie", "A wins"])
    try:
        higher = registry.fact(key).higher_is_better
    except Exception:  # noqa: BLE001 - a per-item key that is no metric key
        higher = True
    joined = frame[cols + ["B − A"]].merge(types[cols + ["cause_type"]], on=cols, how="left")
    joined["cause type"] = joined["cause_type"].fillna("unknown")
    joined["outcome"] = [outcome(None if pd.isna(d) else float(d), higher) for d in joined["B − A"]]
    table = pd.crosstab(joined["cause type"], joined["outcome"])
    for k in ("B wins", "tie", "A wins"):
        if k not in table:
            table[k] = 0
    return table[["B wins", "tie", "A wins"]].reset_index()


def difference_chart(c: Comparison, key: str) -> Any:
    """A histogram of the per-item difference B − A of ``key`` with a line at 0."""
    values = [r.get(f"{key}_diff") for r in c.per_item()]
    values = [v for v in values if v is not None]
    return difference_histogram(
        values, f"Per-item {item_key_label(key)}: B − A over {len(values)} items"
    )


def context_lines(c: Comparison, i: int) -> list[str]:
    """The dialogue up to item ``i``'s utterance, one ``A: ...`` line per utterance."""
    return [f"{line.letter}: {line.text}" for line in c.items[i].context]


def item_title(c: Comparison, i: int) -> str:
    it = c.items[i]
    return f"dialogue {it.dialogue_id}, turn {it.turn}, {it.role}"


def has_judge(c: Comparison) -> bool:
    """Whether both entries' judge decisions are there (a judge comparison with details)."""
    return "judge" in c.modules and all(
        d.get("judge") is not None and d["judge"].details is not None for d in (c.data_a, c.data_b)
    )


def _fit(values: Any, n: int) -> list[str]:
    """``values`` as ``n`` strings: cut, or padded with '' (a list stored shorter or absent)."""
    got = [str(v) for v in values or []]
    return (got + [""] * n)[:n]


def judge_units(c: Comparison, i: int) -> dict[str, pd.DataFrame]:
    """Item ``i``'s judge decisions and reasoning, for both sides' units and the reference's."""
    if not has_judge(c):
        return {}
    da = c.data_a["judge"].details[i] or {}
    db = c.data_b["judge"].details[i] or {}

    def side(d: dict[str, Any]) -> pd.DataFrame:
        if d.get("error"):
            failed = f"(judge failed: {d['error']})"
            return pd.DataFrame({"unit": [failed], "decision": [""], "reasoning": [""]})
        units = d.get("units") or []
        return pd.DataFrame(
            {
                "unit": units,
                "decision": _fit(d.get("unit_labels"), len(units)),
                "reasoning": _fit(d.get("unit_reasons"), len(units)),
            }
        )

    refs = da.get("ref_units") or db.get("ref_units") or []

    def against(d: dict[str, Any], key: str) -> list[str]:
        same = (d.get("ref_units") or []) == refs
        return _fit(d.get(key) if same else None, len(refs))

    return {
        "A's units (decision: supported by the reference?)": side(da),
        "B's units (decision: supported by the reference?)": side(db),
        "reference units (decision: supported by A / by B?)": pd.DataFrame(
            {
                "unit": refs,
                "against A": against(da, "ref_unit_labels"),
                "reasoning A": against(da, "ref_unit_reasons"),
                "against B": against(db, "ref_unit_labels"),
                "reasoning B": against(db, "ref_unit_reasons"),
            }
        ),
    }


def _is_reason(column: str) -> bool:
    return column.startswith("reasoning")


def unexplained(units: dict[str, pd.DataFrame]) -> int:
    """How many decisions of :func:`judge_units` come without the judge's reasoning."""
    n = 0
    for table in units.values():
        for col in table:
            why = "reasoning" + col.removeprefix("against").removeprefix("decision")
            if not _is_reason(col) and col != "unit" and why in table:
                n += int(((table[col] != "") & (table[why] == "")).sum())
    return n


def units_text(table: pd.DataFrame) -> str:
    """A :func:`judge_units` table in lines: decisions and unit, then indented reasoning."""
    if table.empty:
        return "(no units)"
    lines = []
    for row in table.to_dict("records"):
        unit = row.pop("unit")
        decisions = {k: v for k, v in row.items() if not _is_reason(k)}
        decided = " · ".join(
            f"{k}: {v}" if k != "decision" else str(v) for k, v in decisions.items()
        )
        lines.append(f"[{decided}] {unit}")
        for k, v in row.items():
            if _is_reason(k) and v:
                side = k.removeprefix("reasoning").strip()
                lines.append(f"    why{f' (against {side})' if side else ''}: {v}")
    return "\n".join(lines)


# --- the Leaderboard's pairwise matrix ------------------------------------------------------

PAIR_CODES = {"better": 1, "no significant difference": 0, "same": 0, "worse": -1}


def pairwise_figure(matrix: pd.DataFrame) -> Any:
    """:func:`leaderboard.compare.pairwise` as a heat map: green where the row is better."""
    order = matrix.attrs.get("order", [])
    names = matrix.attrs.get("names", {})
    full = [str(names.get(i, i)) for i in order]
    labels = [f"{n + 1}. {short}" for n, short in enumerate(short_labels(full, 28))]
    pairs = {(r.a_id, r.b_id): r for r in matrix.itertuples()}
    cells = pd.DataFrame(
        [
            {
                "row": labels[a],
                "tip": full[a],
                "column": labels[b],
                "value": PAIR_CODES.get(r.verdict, 0),
                "text": "–"
                if r.verdict == "same"
                else f"{r.verdict}\nΔ {r.difference:+.2f}, p {r.p_value:.4f}",
            }
            for a, row in enumerate(order)
            for b, column in enumerate(order)
            if (r := pairs.get((row, column))) is not None
        ],
        columns=["row", "tip", "column", "value", "text"],
    )
    cells["hover"] = cells["text"].str.replace("\n", " · ")  # a cell's text may be cut
    return heatmap(
        cells,
        f"Row entry against column entry on {item_key_label(matrix.attrs.get('metric', ''))} "
        "(Δ: row − column; paired approximate randomization, α = 0.05)",
        {"domain": [-1, 0, 1], "range": ["#dc2626", "#e5e7eb", "#16a34a"]},
        48 * len(order),
        dark="datum.value != 0",
    )
