"""Plotly figures for the site: each function takes plain tables and returns a
``plotly.graph_objects.Figure``; pages only show them."""

from __future__ import annotations

import html
import re
import textwrap
from typing import Any

import pandas as pd

from etclib.data.corpus import BIG_FIVE
from etclib.metrics import heading


def label_text(text: Any) -> str:
    """A chart label, entity-escaped: plotly renders a few HTML tags in text."""
    return html.escape(str(text), quote=False)


#: The longest label a chart writes out whole (it fits a phone beside its bar).
LABEL_CHARS = 32
#: A chart title's line length: longer titles wrap, so none runs off a phone's screen.
TITLE_CHARS = 44


def _cut(name: str, limit: int) -> str:
    """``name`` cut to ``limit`` characters with "…", a closing "(reported)" or the like kept."""
    tail = re.search(r" \([^()]*\)$", name)
    keep = tail.group(0) if tail and len(tail.group(0)) <= limit // 2 else ""
    head, room = name[: len(name) - len(keep)], limit - len(keep)
    return name if len(name) <= limit else head[: room - 1].rstrip() + "…" + keep


def short_labels(names: Any, limit: int = LABEL_CHARS, lines: int = 1) -> list[str]:
    """``names`` as distinct, escaped chart labels, long ones wrapped and cut with "…"."""
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
    return ["<br>".join(label_text(line) for line in x.split("\n")) for x in out]


def title_layout(text: str, width: int = TITLE_CHARS, gap: int = 8) -> dict[str, Any]:
    """A figure's ``layout.title``: ``text`` escaped and wrapped, ``gap`` px above the plot."""
    lines = textwrap.wrap(str(text), width, break_long_words=False, break_on_hyphens=False) or [""]
    return {
        "text": "<br>".join(label_text(line) for line in lines),
        "automargin": True,
        "yref": "paper",
        "y": 1,
        "yanchor": "bottom",
        "pad": {"b": gap},
    }


#: A title's gap above subplots that have titles of their own.
SUBPLOT_GAP = 30

ROLE_COLORS = {"speaker": "#c2410c", "listener": "#2563eb", "all": "#6b7280"}
_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}


def _go() -> Any:
    import plotly.graph_objects as go

    return go


def prevalence_chart(table: pd.DataFrame) -> Any:
    """Grouped bars: percent of transcriptions per category, by role and overall."""
    go = _go()
    fig = go.Figure()
    for role, part in table.groupby("role", sort=False):
        fig.add_bar(
            x=part["category"],
            y=part["percent"],
            name=role,
            marker_color=ROLE_COLORS.get(str(role)),
            hovertemplate="%{x}: %{y:.1f}%<extra>" + str(role) + "</extra>",
        )
    fig.update_layout(
        title=title_layout("Category prevalence: speaker, listener and all (aggregated labels)"),
        barmode="group",
        yaxis_title="% of transcriptions",
        **_LAYOUT,
    )
    return fig


def cooccurrence_heatmap(matrix: pd.DataFrame) -> Any:
    """Heatmap of how many transcriptions carry both categories."""
    go = _go()
    fig = go.Figure(
        go.Heatmap(
            z=matrix.values,
            x=list(matrix.columns),
            y=list(matrix.index),
            text=matrix.values,
            texttemplate="%{text}",
            colorscale="Oranges",
            hovertemplate="%{y} & %{x}: %{z}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title_layout("Category co-occurrence (transcriptions with both)"), **_LAYOUT
    )
    fig.update_yaxes(autorange="reversed")
    return fig


def kappa_chart(table: pd.DataFrame) -> Any:
    """Bars of Fleiss' kappa per category."""
    go = _go()
    fig = go.Figure(
        go.Bar(
            x=table["category"],
            y=table["kappa"],
            marker_color="#7c3aed",
            text=[f"{k:.2f}" for k in table["kappa"]],
            textposition="outside",
        )
    )
    fig.update_layout(
        title="Annotator agreement per category (Fleiss' κ)", yaxis_title="κ", **_LAYOUT
    )
    return fig


def length_histograms(lengths: pd.DataFrame) -> Any:
    """Overlaid histograms of utterance and transcription lengths in characters, by role."""
    from plotly.subplots import make_subplots

    go = _go()
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Utterances", "Emotion transcriptions"))
    for col, column in enumerate(("utterance_chars", "transcription_chars"), start=1):
        for role, part in lengths.groupby("role", sort=False):
            fig.add_trace(
                go.Histogram(
                    x=part[column],
                    name=str(role),
                    legendgroup=str(role),
                    showlegend=col == 1,
                    marker_color=ROLE_COLORS.get(str(role)),
                    opacity=0.6,
                    xbins={"size": 5},
                ),
                row=1,
                col=col,
            )
    fig.update_layout(
        title=title_layout("Length distributions (characters)", gap=SUBPLOT_GAP),
        barmode="overlay",
        legend={"orientation": "h", "y": -0.3},
        **_LAYOUT,
    )
    fig.update_xaxes(title_text="characters")
    return fig


def big_five_chart(scores: pd.DataFrame) -> Any:
    """Box plots of the participants' TIPI-J Big Five scores (2..14)."""
    go = _go()
    fig = go.Figure()
    for trait in BIG_FIVE:
        fig.add_box(y=scores[trait], name=trait, boxmean=True, marker_color="#0f766e")
    fig.update_layout(
        title=title_layout(f"Big Five (TIPI-J) of the {len(scores)} participants"),
        yaxis={"range": [1, 15], "title": "score"},
        showlegend=False,
        **_LAYOUT,
    )
    return fig


# --- leaderboard ---------------------------------------------------------------------------------


#: Bar colours by row kind: our scored entries, baselines, the paper's reported numbers.
KIND_COLORS = {"reproduced": "#c2410c", "baseline": "#64748b", "reported": "#9ca3af"}
FLOOR_COLOR = "#1f2328"
#: How a legend names each kind of row.
KIND_NAMES = {
    "reproduced": "entries scored here",
    "baseline": "baselines",
    "reported": "the paper's reported rows",
}


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
    go = _go()
    t = table.iloc[::-1]
    has_ci = {"lo", "hi"} <= set(t.columns) and t["lo"].notna().any()
    err = _error(t["value"], t["lo"], t["hi"]) if has_ci else None
    fig = go.Figure(
        go.Bar(
            x=t["value"],
            y=short_labels(t["name"], lines=2),  # a long name wrapped, whole on hover
            orientation="h",
            error_x=err,
            marker_color=_colors(t),
            customdata=[label_text(n) for n in t["name"]],
            hovertemplate="%{customdata}: %{x:.2f}<extra></extra>",
        )
    )
    lines = {_floor_name(name): value for name, value in (floors or {}).items()}
    ordered = sorted({**lines, **(marks or {})}.items(), key=lambda kv: kv[1])
    for i, (name, value) in enumerate(ordered):
        fig.add_vline(x=value, line_dash="dash", line_color=FLOOR_COLOR, line_width=1.5)
        # The floor's name above the plot area, one line per floor: never over a bar.
        fig.add_annotation(
            x=value,
            xref="x",
            y=1,
            yref="paper",
            yanchor="bottom",
            yshift=2 + 16 * i,
            xanchor="right",  # the text runs leftwards from its line: never off the figure
            showarrow=False,
            text=f"{label_text(name)}: {value:.2f}",
            font={"size": 11, "color": FLOOR_COLOR},
        )
    # plotly's own range would stretch to hold the lines' names
    ends = [*t["value"], *(value for _, value in ordered)]
    if has_ci:
        ends += [*t["lo"].dropna(), *t["hi"].dropna()]
    fig.update_xaxes(range=[min(0.0, min(ends)), max(ends) * 1.05 if max(ends) > 0 else 1.0])
    fig.update_layout(
        # above the floors' names
        title=title_layout(
            title or f"{heading(metric)} (×100) · dashed: trivial floors",
            gap=20 + 16 * len(ordered),
        ),
        xaxis_title=heading(metric),
        height=max(300, 36 * len(t) + 110 + 16 * len(ordered)),
        margin={"l": 10, "r": 10, "t": 60 + 16 * len(ordered), "b": 30},
        yaxis_automargin=True,
    )
    return fig


def precision_recall_scatter(
    table: pd.DataFrame, floors: dict[str, tuple[float, float]] | None = None
) -> Any:
    """Judge precision vs recall per row, sized by units, with the floors' lines."""
    go = _go()
    t = table.dropna(subset=["precision", "recall"])
    mid = t["recall"].median()
    units = t["units"].fillna(1.0).clip(lower=0.1)
    fig = go.Figure(
        go.Scatter(
            x=t["recall"],
            y=t["precision"],
            mode="markers+text",
            text=short_labels(t["name"]),
            # a label runs away from the nearer side of the plot, so it is not cut off there
            textposition=["top right" if x <= mid else "top left" for x in t["recall"]],
            marker={
                "size": units * 14,
                "color": _colors(t),
                "opacity": 0.75,
                "line": {"width": 1, "color": "#1f2328"},
            },
            customdata=list(zip([label_text(n) for n in t["name"]], units, strict=True)),
            hovertemplate="%{customdata[0]}<br>recall %{x:.2f} · precision %{y:.2f}"
            "<br>units %{customdata[1]:.2f}<extra></extra>",
        )
    )
    for name, (precision, recall) in sorted((floors or {}).items()):
        fig.add_vline(x=recall, line_dash="dash", line_color=FLOOR_COLOR, line_width=1)
        fig.add_hline(
            y=precision,
            line_dash="dash",
            line_color=FLOOR_COLOR,
            line_width=1,
            annotation_text=_floor_name(name),
            annotation_position="bottom left",
            annotation_font_size=11,
        )
    fig.update_layout(
        title=title_layout(
            "Judge precision vs recall (marker size: atomic units per prediction; dashed: "
            "trivial floors)"
        ),
        xaxis_title="recall",
        yaxis_title="precision",
        **_LAYOUT,
    )
    return fig


def _error(values: pd.Series, lo: pd.Series, hi: pd.Series) -> dict[str, Any]:
    return {
        "type": "data",
        "symmetric": False,
        "array": (hi - values).fillna(0).clip(lower=0),
        "arrayminus": (values - lo).fillna(0).clip(lower=0),
    }


#: The breakdowns of an entry's detail, in the order they are drawn, and how each is titled.
BREAKDOWN_TITLES = {"role": "By the author's role", "category": "By category", "turn": "By turn"}


def breakdown_bars(table: pd.DataFrame, metric: str) -> Any:
    """An entry's ``metric`` on each part of its items, one panel per breakdown."""
    from plotly.subplots import make_subplots

    names = [b for b in BREAKDOWN_TITLES if b in set(table["breakdown"])]
    fig = make_subplots(
        rows=len(names) or 1,
        cols=1,
        subplot_titles=[BREAKDOWN_TITLES[b] for b in names],
        vertical_spacing=0.12,
    )
    for row, name in enumerate(names, start=1):
        part = table[table["breakdown"] == name]
        fig.add_bar(
            x=[label_text(x) for x in part["subset"]],
            y=part["value"],
            error_y=_error(part["value"], part["lo"], part["hi"]),
            marker_color=KIND_COLORS["reproduced"],
            customdata=list(zip(part["n_items"], part["lo"], part["hi"], strict=True)),
            hovertemplate="%{x}: %{y:.2f} [%{customdata[1]:.2f}, %{customdata[2]:.2f}]"
            "<br>%{customdata[0]} items<extra></extra>",
            showlegend=False,
            row=row,
            col=1,
        )
        fig.update_xaxes(type="category", row=row, col=1)
    fig.update_layout(
        title=title_layout(
            f"{heading(metric)} (×100) on each part of the items, with 95% intervals",
            gap=SUBPLOT_GAP,
        ),
        height=220 * max(len(names), 1) + 80,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig


def category_heatmap(table: pd.DataFrame, title: str) -> Any:
    """Every entry's score per category (a row per entry), each cell written out."""
    go = _go()
    fig = go.Figure(
        go.Heatmap(
            z=table.to_numpy(dtype=float),
            x=[label_text(c) for c in table.columns],
            y=short_labels(table.index, lines=2),
            text=table.round(1).to_numpy(),
            texttemplate="%{text}",
            customdata=[[label_text(n)] * len(table.columns) for n in table.index],
            hovertemplate="%{customdata}<br>%{x}: %{z:.2f}<extra></extra>",
            colorscale="Oranges",
            zmin=0,
            zmax=100,
            showscale=False,
        )
    )
    fig.update_layout(
        title=title_layout(title),
        yaxis={"autorange": "reversed", "automargin": True},
        xaxis={"automargin": True},
        height=150 + 40 * len(table),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig


def best_over_time(entries: pd.DataFrame, metric: str, higher_is_better: bool = True) -> Any:
    """``metric`` of each entry at its date, and a step line through the best so far."""
    go = _go()
    t = entries.dropna(subset=["value", "when"]).sort_values("when", kind="stable")
    best = t["value"].cummax() if higher_is_better else t["value"].cummin()
    fig = go.Figure()
    fig.add_scatter(
        x=t["when"],
        y=best,
        mode="lines",
        line={"shape": "hv", "color": FLOOR_COLOR, "width": 2},
        name="best so far",
        hovertemplate="best so far: %{y:.2f}<extra></extra>",
    )
    for kind, part in t.groupby("kind", sort=False):
        fig.add_scatter(
            x=part["when"],
            y=part["value"],
            mode="markers",
            name=KIND_NAMES.get(str(kind), str(kind)),
            marker={"size": 10, "color": KIND_COLORS.get(str(kind), KIND_COLORS["reproduced"])},
            customdata=[label_text(n) for n in part["name"]],
            hovertemplate="%{customdata}<br>%{x|%Y-%m-%d}: %{y:.2f}<extra></extra>",
        )
    fig.update_layout(
        title=title_layout(f"Best {heading(metric)} (×100) over time"),
        xaxis_title="date submitted"
        + (" (the paper's rows: published)" if "reported" in set(t["kind"]) else ""),
        yaxis_title=heading(metric),
        legend={"orientation": "h", "y": -0.25},
        **_LAYOUT,
    )
    return fig


def shares_bars(table: pd.DataFrame) -> Any:
    """Cause-type shares (%) side by side, one bar per source (``views.causes.shares_table``)."""
    go = _go()
    fig = go.Figure()
    for column in [c for c in table.columns if c != "cause type"]:
        fig.add_bar(
            x=table["cause type"],
            y=table[column],
            name=label_text(column),
            hovertemplate="%{x}: %{y:.1f}%<extra>" + label_text(column) + "</extra>",
        )
    fig.update_layout(
        title=title_layout("Cause-type shares (% of type labels)"),
        barmode="group",
        yaxis_title="% of type labels",
        legend={"orientation": "h", "y": -0.2},
        **_LAYOUT,
    )
    return fig


# --- judge versus human --------------------------------------------------------------------------


def agreement_bars(table: pd.DataFrame, with_judge: bool, title: str) -> Any:
    """Study 1: κ per category, with 95% intervals where there are; judge series optional."""
    go = _go()
    # (name, column, whether it has an interval: columns ``<column>_low`` / ``_high``)
    series = [
        ("judge vs human majority", "judge_vs_majority", True, with_judge),
        ("judge vs pair consensus", "judge_vs_pairs", False, with_judge),
        ("annotator vs other two (yardstick)", "human_vs_others", False, True),
        ("Fleiss κ, 3 annotators", "fleiss_humans", True, True),
        ("Fleiss κ, 3 annotators + judge", "fleiss_with_judge", True, with_judge),
    ]
    fig = go.Figure()
    for name, col, ci, shown in series:
        if not shown:
            continue
        error = None
        if ci:
            error = {
                "type": "data",
                "symmetric": False,
                "array": (table[f"{col}_high"] - table[col]).tolist(),
                "arrayminus": (table[col] - table[f"{col}_low"]).tolist(),
            }
        fig.add_trace(go.Bar(name=name, x=table["category"], y=table[col], error_y=error))
    fig.update_layout(barmode="group", yaxis_title="κ", height=440, title=title_layout(title))
    return fig


def count_heatmap(table: pd.DataFrame, title: str) -> Any:
    """A contingency table (rows × columns, counts written in the cells) as a heatmap."""
    import plotly.express as px

    fig = px.imshow(
        table,
        text_auto=True,
        color_continuous_scale="Blues",
        aspect="auto",
    )
    fig.update_layout(
        title=title_layout(title),
        xaxis_title=table.columns.name,
        yaxis_title=table.index.name,
        height=420,
    )
    return fig


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
    import plotly.express as px

    go = _go()
    shown = table.copy()
    for col in shown.columns:
        if shown[col].dtype == object:
            shown[col] = shown[col].map(label_text)
    fig = px.scatter(shown, x=x, y=y, color=color, hover_data=list(shown.columns))
    fig.add_trace(
        go.Scatter(
            x=[lo, hi],
            y=[lo, hi],
            mode="lines",
            name="identity (x = y)",
            line={"dash": "dash", "color": "grey"},
        )
    )
    fig.update_layout(
        title=title_layout(title),
        xaxis_range=[lo - 0.1, hi + 0.1],
        yaxis_range=[lo - 0.1, hi + 0.1],
        height=460,
    )
    return fig
