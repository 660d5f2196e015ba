"""Altair (Vega-Lite) charts for the site: each function takes plain tables and returns a chart
that pages show as its Vega-Lite spec (``spec``, ``st.vega_lite_chart``) at the container's width
(drawn as SVG).

Vega writes text as text, never markup, so labels are the names as typed: long ones wrapped on
two lines and cut with "…", whole in the tooltip. Titles are wrapped to fit a phone; counted
charts are binned here, so a spec carries counts, not every raw value."""

from __future__ import annotations

import re
import textwrap
import threading
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from etclib.data.corpus import BIG_FIVE
from etclib.metrics import heading

#: The longest label a chart writes out whole (it fits a phone beside its bar).
LABEL_CHARS = 32
#: A chart title's line length: longer titles wrap, so none runs off a phone's screen.
TITLE_CHARS = 44
#: An axis label's lines: a label's "\n" starts a new line (Vega draws an array as lines).
LINES = "split(datum.label, '\\n')"

ROLE_COLORS = {"speaker": "#c2410c", "listener": "#2563eb", "all": "#6b7280"}
#: Bar colours by row kind: our scored entries, baselines, the paper's reported numbers.
KIND_COLORS = {"reproduced": "#c2410c", "baseline": "#64748b", "reported": "#9ca3af"}
FLOOR_COLOR = "#1f2328"
#: How a legend names each kind of row.
KIND_NAMES = {
    "reproduced": "entries scored here",
    "baseline": "baselines",
    "reported": "the paper's reported rows",
}
#: Room above a chart: a title's first line is drawn a few pixels higher than the chart's top.
PADDING = {"top": 6}
#: A floor line's name above the plot: one line of text per floor, this many pixels apart.
NOTE_STEP = 16


#: Altair's theme is one setting for every thread: held while a chart is converted.
_THEME = threading.Lock()


def spec(chart: Any) -> dict[str, Any]:
    """``chart`` as a Vega-Lite spec with its rows inline, for ``st.vega_lite_chart``: a page that
    caches a chart caches this, and a rerun converts nothing. Not validated against the Vega-Lite
    schema (30 ms of a 45 ms conversion; ``st.altair_chart`` validates on every run): the tests
    validate every spec they read (tests/vega.py). Drawn as ``st.altair_chart`` draws it: without
    Altair's default theme."""
    with _THEME, alt.theme.enable("none"):
        return chart.to_dict(validate=False)


def _cut(name: str, limit: int) -> str:
    """``name`` cut to ``limit`` characters with "…", a closing "(reported)" or the like kept."""
    tail = re.search(r" \([^()]*\)$", name)
    keep = tail.group(0) if tail and len(tail.group(0)) <= limit // 2 else ""
    head, room = name[: len(name) - len(keep)], limit - len(keep)
    return name if len(name) <= limit else head[: room - 1].rstrip() + "…" + keep


def short_labels(names: Any, limit: int = LABEL_CHARS, lines: int = 1) -> list[str]:
    """``names`` as distinct chart labels, long ones wrapped ("\\n") and cut with "…"."""
    out: list[str] = []
    for name in map(str, names):
        parts = [name]
        if lines > 1 and len(name) > limit:
            first = textwrap.wrap(name, limit, break_on_hyphens=False)[0]
            parts = [first, name[len(first) :].strip()]
        parts[-1] = _cut(parts[-1], limit)
        short = "\n".join(parts)
        label, n = short, 2
        while label in out:
            label, n = f"{short} ({n})", n + 1
        out.append(label)
    return out


def title_lines(text: str, width: int = TITLE_CHARS) -> list[str]:
    """A chart title's lines: ``text`` wrapped at ``width`` characters."""
    return textwrap.wrap(str(text), width, break_long_words=False, break_on_hyphens=False) or [""]


def _title(text: str, gap: int = 8) -> Any:
    return alt.Title(title_lines(text), anchor="start", fontSize=14, offset=gap)


def _chart(*layers: Any, title: str, height: int, gap: int = 8) -> Any:
    """``layers`` drawn as one chart, as wide as its container, titled ``title``; ``height``
    px of plot, the title and axes added around it (Streamlit's default would fit them all in
    ``height``, leaving a tall label too little room)."""
    fit = alt.AutoSizeParams(type="fit-x", contains="padding")
    return alt.layer(
        *layers, title=_title(title, gap), height=height, autosize=fit, padding=PADDING
    )


def _tip(field: str, title: str | None = None) -> Any:
    """A tooltip line: numbers to two decimals."""
    kind = field.rsplit(":", 1)[-1]
    fmt = {"format": ".2f"} if kind == "Q" else {}
    return alt.Tooltip(field, title=title or field.rsplit(":", 1)[0], **fmt)


def _legend(**kw: Any) -> Any:
    # below the plot, one entry a line: a phone has no room beside it
    return alt.Legend(orient="bottom", direction="vertical", title=None, labelLimit=320, **kw)


def _line(axis: str, value: float, text: str, **mark: Any) -> Any:
    """A dashed line at ``value`` on ``axis`` ("x" or "y") named ``text`` on hover; written
    beside it too where ``mark`` places it."""
    base = alt.Chart(pd.DataFrame({"at": [value], "line": [text]})).encode(
        **{axis: alt.X("at:Q") if axis == "x" else alt.Y("at:Q")},
        tooltip=["line:N", _tip("at:Q", "value")],
    )
    rule = base.mark_rule(strokeDash=[6, 4], color=FLOOR_COLOR, strokeWidth=1.5)
    if not mark:
        return rule
    return rule + base.mark_text(fontSize=11, color=FLOOR_COLOR, **mark).encode(text="line:N")


def _interval(base: Any, along: str, title: str, who: str) -> Any:
    """The 95% interval ``lo`` .. ``hi`` of each bar of ``base``, drawn along ``along`` (whose
    axis is titled ``title``: an error bar would title it "lo" beside the bars' own title),
    named by field ``who`` on hover and in its mark's description."""
    channel = alt.X if along == "x" else alt.Y
    ends = {along: channel("lo:Q", title=title), f"{along}2": "hi:Q"}
    return base.mark_errorbar(ticks=True, color=FLOOR_COLOR).encode(
        **ends, tooltip=[who, _tip("lo:Q", "95% interval from"), _tip("hi:Q", "to")]
    )


def heatmap(
    cells: pd.DataFrame, title: str, scale: dict[str, Any], height: int, **axes: Any
) -> Any:
    """Cells ``row`` × ``column`` coloured by ``value`` on ``scale``, each with its ``text``
    written in it (white where ``dark``, an expression, holds); on hover the whole name ``tip``
    and ``hover`` (else the value) where there are; ``axes``: the ``x`` and ``y`` axes' titles."""
    hot = float(cells["value"].max()) if cells["value"].notna().any() else 0.0
    domain = scale.get("domain") or [0.0, hot]
    dark = axes.pop("dark", f"datum.value > {(domain[0] + domain[-1]) / 2}")
    columns = max(cells["column"].nunique(), 1)
    base = alt.Chart(cells).encode(
        x=alt.X("column:N", sort=None, title=axes.get("x"), axis=alt.Axis(labelLimit=180)),
        y=alt.Y(
            "row:N", sort=None, title=axes.get("y"), axis=alt.Axis(labelExpr=LINES, labelLimit=0)
        ),
        tooltip=[
            alt.Tooltip("tip:N" if "tip" in cells else "row:N", title=axes.get("y") or "row"),
            alt.Tooltip("column:N", title=axes.get("x") or "column"),
            "hover:N" if "hover" in cells else _tip("value:Q"),
        ],
    )
    rect = base.mark_rect().encode(
        color=alt.Color("value:Q", scale=alt.Scale(**scale), legend=None)
    )
    # a cell's text fits its cell (cut with "…"), so it never runs over its neighbours
    fit = alt.expr(f"width / {columns} - 4")
    text = base.mark_text(fontSize=11, lineBreak="\n", limit=fit).encode(
        text="text:N", color=alt.condition(dark, alt.value("white"), alt.value("black"))
    )
    return _chart(rect, text, title=title, height=height)


def difference_histogram(values: list[float], title: str) -> Any:
    """The per-item differences B − A in 41 bins, with a dashed line at 0."""
    edges = np.histogram_bin_edges(values, bins=41) if values else np.array([-1.0, 1.0])
    bars = (
        alt.Chart(_binned(pd.Series(values, dtype=float), edges))
        .mark_bar(color=ROLE_COLORS["listener"])
        .encode(
            x=alt.X("from:Q", bin="binned", title="B − A (×100)"),
            x2="to:Q",
            y=alt.Y("count:Q", title="items"),
            tooltip=[_tip("from:Q"), _tip("to:Q"), "count:Q"],
        )
    )
    return _chart(bars, _line("x", 0.0, "no difference"), title=title, height=220)


def _cells(table: pd.DataFrame) -> pd.DataFrame:
    """A matrix as rows of (``row``, ``column``, ``value``), row by row."""
    long = table.rename_axis(index=None, columns=None).reset_index(names="row")
    long = long.melt(id_vars=["row"], var_name="column", value_name="value")
    order = {name: i for i, name in enumerate(table.index)}
    return long.sort_values("row", key=lambda r: r.map(order), kind="stable", ignore_index=True)


def _grouped(long: pd.DataFrame, x: str, series: str, y: str, y_title: str, **color: Any) -> Any:
    """Bars of ``y`` grouped by ``x``, one per ``series`` side by side."""
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X(f"{x}:N", sort=None, title=None),
            xOffset=alt.XOffset(f"{series}:N", sort=None),
            y=alt.Y(f"{y}:Q", title=y_title),
            color=alt.Color(f"{series}:N", sort=None, legend=_legend(), **color),
            tooltip=[f"{x}:N", f"{series}:N", _tip(f"{y}:Q")],
        )
    )


# --- corpus --------------------------------------------------------------------------------------


def prevalence_chart(table: pd.DataFrame) -> Any:
    """Grouped bars: percent of transcriptions per category, by role and overall."""
    roles = list(dict.fromkeys(table["role"]))
    colors = alt.Scale(domain=roles, range=[ROLE_COLORS.get(str(r), "#6b7280") for r in roles])
    bars = _grouped(table, "category", "role", "percent", "% of transcriptions", scale=colors)
    title = "Category prevalence: speaker, listener and all (aggregated labels)"
    return _chart(bars, title=title, height=240)


def cooccurrence_heatmap(matrix: pd.DataFrame) -> Any:
    """Heatmap of how many transcriptions carry both categories."""
    return count_heatmap(matrix, "Category co-occurrence (transcriptions with both)", "oranges")


def kappa_chart(table: pd.DataFrame) -> Any:
    """Bars of Fleiss' kappa per category, each value written above its bar."""
    base = alt.Chart(table).encode(
        x=alt.X("category:N", sort=None, title=None),
        y=alt.Y("kappa:Q", title="κ"),
        tooltip=["category:N", _tip("kappa:Q", "κ")],
    )
    text = base.mark_text(baseline="bottom", dy=-3, fontSize=11).encode(
        text=alt.Text("kappa:Q", format=".2f")
    )
    title = "Annotator agreement per category (Fleiss' κ)"
    return _chart(base.mark_bar(color="#7c3aed"), text, title=title, height=240)


def _binned(values: pd.Series, edges: np.ndarray) -> pd.DataFrame:
    counts, _ = np.histogram(values.dropna(), bins=edges)
    return pd.DataFrame({"from": edges[:-1], "to": edges[1:], "count": counts})


def length_histograms(lengths: pd.DataFrame) -> Any:
    """Overlaid histograms of utterance and transcription lengths in characters, by role."""
    roles = list(dict.fromkeys(lengths["role"]))
    colors = alt.Scale(domain=roles, range=[ROLE_COLORS.get(str(r), "#6b7280") for r in roles])
    panels = []
    for column, name in (
        ("utterance_chars", "Utterances"),
        ("transcription_chars", "Emotion transcriptions"),
    ):
        top = float(lengths[column].max()) if len(lengths) else 0.0
        edges = np.arange(0.0, top + 10.0, 5.0)  # 5-character bins, as far as the longest
        rows = [
            _binned(part[column], edges).assign(role=role)
            for role, part in lengths.groupby("role", sort=False)
        ]
        counts = (
            pd.concat(rows, ignore_index=True)
            if rows
            else pd.DataFrame(columns=["from", "to", "count", "role"])
        )
        panels.append(
            alt.Chart(counts[counts["count"] > 0], title=alt.Title(name, fontSize=12), height=160)
            .mark_bar(opacity=0.6)
            .encode(
                x=alt.X("from:Q", bin="binned", title="characters"),
                x2="to:Q",
                y=alt.Y("count:Q", stack=None, title="count"),
                color=alt.Color("role:N", scale=colors, legend=_legend()),
                tooltip=["role:N", "from:Q", "to:Q", "count:Q"],
            )
        )
    title = _title("Length distributions (characters)")
    return alt.vconcat(*panels, title=title, padding=PADDING).resolve_scale(color="shared")


def big_five_chart(scores: pd.DataFrame) -> Any:
    """Box plots of the participants' TIPI-J Big Five scores (2..14), each mean a white tick."""
    long = scores[list(BIG_FIVE)].melt(var_name="trait", value_name="score").dropna()
    title = f"Big Five (TIPI-J) of the {len(scores)} participants"
    x = alt.X("trait:N", sort=list(BIG_FIVE), title=None)
    y = alt.Y("score:Q", scale=alt.Scale(domain=[1, 15]), title="score")
    box = alt.Chart(long).mark_boxplot(color="#0f766e", extent=1.5).encode(x=x, y=y)
    mean = (
        alt.Chart(long)
        .mark_tick(color="white", strokeDash=[3, 2], thickness=2)
        .encode(x=x, y=alt.Y("mean(score):Q"), tooltip=["trait:N", _tip("mean(score):Q", "mean")])
    )
    return _chart(box, mean, title=title, height=240)


# --- leaderboard ---------------------------------------------------------------------------------


def _colors(t: pd.DataFrame) -> list[str]:
    return [
        KIND_COLORS.get(k, KIND_COLORS["reproduced"])
        for k in t.get("kind", ["reproduced"] * len(t))
    ]


def _floor_name(name: str) -> str:
    return f"{name} baseline (floor)"


def score_bars(
    table: pd.DataFrame,
    metric: str,
    floors: dict[str, float] | None = None,
    marks: dict[str, float] | None = None,
    title: str | None = None,
) -> Any:
    """Horizontal bars of ``metric`` with their intervals; dashed lines at floors and marks."""
    t = table.assign(label=short_labels(table["name"], lines=2), color=_colors(table))
    has_ci = {"lo", "hi"} <= set(t.columns) and t["lo"].notna().any()
    lines = {_floor_name(name): value for name, value in (floors or {}).items()}
    ordered = sorted({**lines, **(marks or {})}.items(), key=lambda kv: kv[1])
    # the scale holds every bar, interval and line, and starts at 0
    ends = [*t["value"], *(value for _, value in ordered)]
    if has_ci:
        ends += [*t["lo"].dropna(), *t["hi"].dropna()]
    low, high = min(0.0, min(ends)), (max(ends) * 1.05 if max(ends) > 0 else 1.0)
    y = alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelExpr=LINES, labelLimit=0))
    base = alt.Chart(t).encode(y=y)
    bars = base.mark_bar().encode(
        x=alt.X("value:Q", title=heading(metric), scale=alt.Scale(domain=[low, high], nice=False)),
        color=alt.Color("color:N", scale=None),
        tooltip=["name:N", _tip("value:Q", heading(metric))]
        + ([_tip("lo:Q", "95% interval from"), _tip("hi:Q", "to")] if has_ci else []),
    )
    layers = [bars, _interval(base, "x", heading(metric), "name:N")] if has_ci else [bars]
    for i, (name, value) in enumerate(ordered):
        # The line's name above the plot, a line of text per floor: never over a bar; it runs
        # from its line towards the middle, so never off the chart.
        right = value > (low + high) / 2
        layers.append(
            _line(
                "x",
                value,
                f"{name}: {value:.2f}",
                y=-4 - NOTE_STEP * i,
                baseline="bottom",
                align="right" if right else "left",
                dx=-3 if right else 3,
            )
        )
    return _chart(
        *layers,
        title=title or f"{heading(metric)} (×100) · dashed: trivial floors",
        gap=12 + NOTE_STEP * len(ordered),
        height=max(108, 36 * len(t)),
    )


def precision_recall_scatter(
    table: pd.DataFrame, floors: dict[str, tuple[float, float]] | None = None
) -> Any:
    """Judge precision vs recall per row, sized by units, with the floors' lines."""
    t = table.dropna(subset=["precision", "recall"])
    units = t["units"].fillna(1.0).clip(lower=0.1)
    t = t.assign(
        label=short_labels(t["name"]),
        color=_colors(t),
        units=units,
        area=(units * 14) ** 2 * 0.8,  # a marker about ``units`` × 14 px across
        left=t["recall"] <= t["recall"].median(),
    )
    base = alt.Chart(t).encode(
        # padded, so a large marker at an end is drawn whole
        x=alt.X("recall:Q", title="recall", scale=alt.Scale(zero=False, padding=24)),
        y=alt.Y("precision:Q", title="precision", scale=alt.Scale(zero=False, padding=24)),
        tooltip=["name:N", _tip("recall:Q"), _tip("precision:Q"), _tip("units:Q")],
    )
    points = base.mark_circle(opacity=0.75, stroke=FLOOR_COLOR, strokeWidth=1).encode(
        size=alt.Size("area:Q", scale=None), color=alt.Color("color:N", scale=None)
    )
    # a label runs away from the nearer side of the plot, cut ("…") where it would leave it
    room = "datum.left ? width - scale('x', datum.recall) - 10 : scale('x', datum.recall) - 10"
    names = [
        base.transform_filter(alt.datum.left == side)
        .mark_text(align=align, dx=dx, dy=-8, fontSize=11, limit=alt.expr(room))
        .encode(text="label:N")
        for side, align, dx in ((True, "left", 8), (False, "right", -8))
    ]
    layers = [points, *names]
    for name, (precision, recall) in sorted((floors or {}).items()):
        layers.append(_line("x", recall, _floor_name(name)))
        layers.append(
            _line("y", precision, _floor_name(name), align="left", baseline="top", dy=3, x=4)
        )
    return _chart(
        *layers,
        title="Judge precision vs recall (marker size: atomic units per prediction; dashed: "
        "trivial floors)",
        height=300,
    )


#: The breakdowns of an entry's detail, in the order they are drawn, and how each is titled.
BREAKDOWN_TITLES = {"role": "By the author's role", "category": "By category", "turn": "By turn"}


def breakdown_bars(table: pd.DataFrame, metric: str) -> Any:
    """An entry's ``metric`` on each part of its items, a bar each with its interval, coloured
    by breakdown (one chart, not panels: Streamlit draws panels of layers at their own width)."""
    names = [b for b in BREAKDOWN_TITLES if b in set(table["breakdown"])]
    t = pd.concat([table[table["breakdown"] == b] for b in names], ignore_index=True)
    t = t.assign(
        part=t["breakdown"].map(BREAKDOWN_TITLES),
        label=[f"turn {s}" if b == "turn" else str(s) for b, s in zip(t["breakdown"], t["subset"])],
    )
    colors = alt.Scale(
        domain=[BREAKDOWN_TITLES[b] for b in names],
        range=[KIND_COLORS["reproduced"], ROLE_COLORS["listener"], "#0f766e"][: len(names)],
    )
    base = alt.Chart(t).encode(y=alt.Y("label:N", sort=None, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("value:Q", title=heading(metric)),
        color=alt.Color("part:N", scale=colors, legend=_legend()),
        tooltip=["part:N", "label:N", _tip("value:Q", heading(metric))]
        + [_tip("lo:Q", "95% interval from"), _tip("hi:Q", "to"), "n_items:Q"],
    )
    return _chart(
        bars,
        _interval(base, "x", heading(metric), "label:N"),
        title=f"{heading(metric)} (×100) on each part of the items, with 95% intervals",
        height=24 * len(t),
    )


def category_heatmap(table: pd.DataFrame, title: str) -> Any:
    """Every entry's score per category (a row per entry), each cell written out."""

    labels = dict(zip(table.index, short_labels(table.index, lines=2), strict=True))
    cells = _cells(table).rename(columns={"row": "tip"})
    cells = cells.assign(
        row=cells["tip"].map(labels),
        text=[f"{v:.1f}" if pd.notna(v) else "" for v in cells["value"]],
    )
    return heatmap(cells, title, {"scheme": "oranges", "domain": [0, 100]}, 40 * len(table))


def best_over_time(entries: pd.DataFrame, metric: str, higher_is_better: bool = True) -> Any:
    """``metric`` of each entry at its date, and a step line through the best so far."""
    t = entries.dropna(subset=["value", "when"]).sort_values("when", kind="stable")
    t = t.assign(
        best=t["value"].cummax() if higher_is_better else t["value"].cummin(),
        series=[KIND_NAMES.get(str(k), str(k)) for k in t["kind"]],
        line="best so far",
    )
    kinds = list(dict.fromkeys(t["kind"]))
    colors = alt.Scale(
        domain=["best so far", *(KIND_NAMES.get(str(k), str(k)) for k in kinds)],
        range=[FLOOR_COLOR, *(KIND_COLORS.get(str(k), KIND_COLORS["reproduced"]) for k in kinds)],
    )
    when = "date submitted" + (" (the paper's rows: published)" if "reported" in kinds else "")
    # padded: a point at either end is drawn whole
    base = alt.Chart(t).encode(x=alt.X("when:T", title=when, scale=alt.Scale(padding=12)))
    step = base.mark_line(interpolate="step-after", strokeWidth=2).encode(
        y=alt.Y("best:Q", title=heading(metric)),
        color=alt.Color("line:N", scale=colors, legend=_legend()),
        tooltip=[_tip("best:Q", "best so far")],
    )
    points = base.mark_circle(size=100, opacity=1).encode(
        y="value:Q",
        color=alt.Color("series:N", scale=colors, legend=_legend()),
        tooltip=[
            "name:N",
            alt.Tooltip("when:T", format="%Y-%m-%d"),
            _tip("value:Q", heading(metric)),
        ],
    )
    return _chart(step, points, title=f"Best {heading(metric)} (×100) over time", height=240)


def shares_bars(table: pd.DataFrame) -> Any:
    """Cause-type shares (%) side by side, one bar per source (``views.causes.shares_table``)."""
    long = table.melt(id_vars=["cause type"], var_name="source", value_name="share")
    bars = _grouped(long, "cause type", "source", "share", "% of type labels")
    return _chart(bars, title="Cause-type shares (% of type labels)", height=240)


# --- judge versus human --------------------------------------------------------------------------

#: Study 1's series: (name, column, whether it has an interval ``<column>_low`` .. ``_high``,
#: whether it is the judge's).
AGREEMENT_SERIES = [
    ("judge vs human majority", "judge_vs_majority", True, True),
    ("judge vs pair consensus", "judge_vs_pairs", False, True),
    ("annotator vs other two (yardstick)", "human_vs_others", False, False),
    ("Fleiss κ, 3 annotators", "fleiss_humans", True, False),
    ("Fleiss κ, 3 annotators + judge", "fleiss_with_judge", True, True),
]


def agreement_bars(table: pd.DataFrame, with_judge: bool, title: str) -> Any:
    """Study 1: κ per category, with 95% intervals where there are; judge series optional."""
    rows = [
        pd.DataFrame(
            {
                "category": table["category"],
                "series": name,
                "kappa": table[col],
                "lo": table[f"{col}_low"] if ci else np.nan,
                "hi": table[f"{col}_high"] if ci else np.nan,
            }
        )
        for name, col, ci, judge in AGREEMENT_SERIES
        if with_judge or not judge
    ]
    long = pd.concat(rows, ignore_index=True)
    bars = _grouped(long, "category", "series", "kappa", "κ")
    base = alt.Chart(long).encode(
        x=alt.X("category:N", sort=None), xOffset=alt.XOffset("series:N", sort=None)
    )
    return _chart(bars, _interval(base, "y", "κ", "series:N"), title=title, height=260)


def count_heatmap(table: pd.DataFrame, title: str, scheme: str = "blues") -> Any:
    """A contingency table (rows × columns, counts written in the cells) as a heatmap."""

    cells = _cells(table).astype({"row": str, "column": str})
    cells["text"] = cells["value"].map(lambda v: "" if pd.isna(v) else f"{v:g}")
    rows = cells["row"].nunique()
    return heatmap(
        cells,
        title,
        {"scheme": scheme},
        max(120, 36 * rows),
        x=table.columns.name,
        y=table.index.name,
    )


def identity_scatter(
    table: pd.DataFrame,
    x: str,
    y: str,
    color: str | None,
    title: str,
    lo: float,
    hi: float,
) -> Any:
    """Points of ``y`` against ``x`` with the line x = y over [lo, hi]."""
    scale = alt.Scale(domain=[lo - 0.1, hi + 0.1], nice=False)
    tips = [
        _tip(f"{c}:Q") if pd.api.types.is_numeric_dtype(table[c]) else f"{c}:N"
        for c in table.columns
    ]
    points = (
        alt.Chart(table)
        .mark_circle(size=70, opacity=0.8)
        .encode(
            x=alt.X(f"{x}:Q", scale=scale),
            y=alt.Y(f"{y}:Q", scale=scale),
            tooltip=tips,
            **({"color": alt.Color(f"{color}:N", legend=_legend())} if color else {}),
        )
    )
    line = pd.DataFrame({x: [lo, hi], y: [lo, hi], "line": ["identity (x = y)"] * 2})
    identity = alt.Chart(line).encode(x=f"{x}:Q", y=f"{y}:Q", tooltip=["line:N"])
    named = identity.transform_filter(alt.datum[x] == hi).mark_text(
        align="right", dx=-4, dy=-8, color="grey"
    )
    return _chart(
        points,
        identity.mark_line(strokeDash=[6, 4], color="grey"),
        named.encode(text="line:N"),
        title=title,
        height=320,
    )
