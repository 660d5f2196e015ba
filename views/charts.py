"""Plotly figures for the site: corpus statistics and leaderboard charts.

Each function takes plain tables (from :mod:`views.corpus`, :mod:`views.board` or
``etclib.stats.compute``) and returns a ``plotly.graph_objects.Figure``; pages only show them.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from etclib.corpus import BIG_FIVE


def label_text(text: Any) -> str:
    """A label for a plotly figure: plotly renders a few HTML tags (``<a>``, ``<b>``, ``<br>``)
    in text, so visitor-supplied names are entity-escaped and show exactly as typed."""
    return html.escape(str(text), quote=False)


ROLE_COLORS = {"speaker": "#c2410c", "listener": "#2563eb"}
_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}


def _go() -> Any:
    import plotly.graph_objects as go

    return go


def prevalence_chart(table: pd.DataFrame) -> Any:
    """Grouped bars: percent of transcriptions per aggregated category, speaker vs listener."""
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
        title="Category prevalence by role (aggregated labels)",
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
    fig.update_layout(title="Category co-occurrence (transcriptions with both)", **_LAYOUT)
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
    fig.update_layout(title="Length distributions (characters)", barmode="overlay", **_LAYOUT)
    fig.update_xaxes(title_text="characters")
    return fig


def big_five_chart(scores: pd.DataFrame) -> Any:
    """Box plots of the participants' TIPI-J Big Five scores (2..14)."""
    go = _go()
    fig = go.Figure()
    for trait in BIG_FIVE:
        fig.add_box(y=scores[trait], name=trait, boxmean=True, marker_color="#0f766e")
    fig.update_layout(
        title=f"Big Five (TIPI-J) of the {len(scores)} participants",
        yaxis={"range": [1, 15], "title": "score"},
        showlegend=False,
        **_LAYOUT,
    )
    return fig


# --- leaderboard ---------------------------------------------------------------------------------


def score_bars(table: pd.DataFrame, metric: str) -> Any:
    """Horizontal bars of ``metric`` per row with error bars from ``lo``/``hi`` when present.

    ``table`` has columns ``name``, ``value``, optional ``lo``/``hi`` (interval bounds) and
    ``kind`` (``reproduced`` or ``reported``), best first.
    """
    go = _go()
    t = table.iloc[::-1]
    has_ci = {"lo", "hi"} <= set(t.columns) and t["lo"].notna().any()
    err = None
    if has_ci:
        err = {
            "type": "data",
            "symmetric": False,
            "array": (t["hi"] - t["value"]).fillna(0).clip(lower=0),
            "arrayminus": (t["value"] - t["lo"]).fillna(0).clip(lower=0),
        }
    colors = [
        "#9ca3af" if k == "reported" else "#c2410c" for k in t.get("kind", ["reproduced"] * len(t))
    ]
    fig = go.Figure(
        go.Bar(
            x=t["value"],
            y=[label_text(n) for n in t["name"]],
            orientation="h",
            error_x=err,
            marker_color=colors,
            hovertemplate="%{y}: %{x:.2f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{metric} (×100; grey: reported, not reproduced)",
        xaxis_title=metric,
        height=max(260, 36 * len(t) + 80),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def precision_recall_scatter(table: pd.DataFrame) -> Any:
    """Judge precision vs recall per row, marker size by mean atomic units per prediction.

    ``table`` has columns ``name``, ``precision``, ``recall``, ``units`` and optional ``kind``.
    """
    go = _go()
    t = table.dropna(subset=["precision", "recall"])
    units = t["units"].fillna(1.0).clip(lower=0.1)
    fig = go.Figure(
        go.Scatter(
            x=t["recall"],
            y=t["precision"],
            mode="markers+text",
            text=[label_text(n) for n in t["name"]],
            textposition="top center",
            marker={
                "size": units * 14,
                "color": [
                    "#9ca3af" if k == "reported" else "#c2410c"
                    for k in t.get("kind", ["reproduced"] * len(t))
                ],
                "opacity": 0.75,
                "line": {"width": 1, "color": "#1f2328"},
            },
            customdata=units,
            hovertemplate="%{text}<br>recall %{x:.1f} · precision %{y:.1f}"
            "<br>units %{customdata:.2f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Judge precision vs recall (marker size: atomic units per prediction)",
        xaxis_title="recall",
        yaxis_title="precision",
        **_LAYOUT,
    )
    return fig
