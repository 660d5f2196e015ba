"""The site's charts as a phone shows them (views/charts.py): entry names shortened to a label
that fits, whole on hover, never HTML; long titles wrapped."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("names", "limit", "expected"),
    [
        (["short"], 10, ["short"]),
        (["exactly10!"], 10, ["exactly10!"]),
        (["eleven char"], 10, ["eleven ch…"]),
        (["a very long one", "a very long two"], 10, ["a very lo…", "a very lo… (2)"]),
        (
            ["a very long one", "a very long two", "a very long six"],
            10,
            [
                "a very lo…",
                "a very lo… (2)",
                "a very lo… (3)",
            ],
        ),
        (["word     spaces"], 10, ["word…"]),  # no space left before the ellipsis
        (["<b>bold</b>"], 40, ["&lt;b&gt;bold&lt;/b&gt;"]),  # shown as typed, never HTML
        (["日本語の長いシステム名です"], 6, ["日本語の長…"]),
        ([""], 10, [""]),
        (["GPT-4o paper run · zero-shot (reported)"], 24, ["GPT-4o paper… (reported)"]),
        (["short (reported)"], 24, ["short (reported)"]),
        (["a name (with a long aside in it)"], 12, ["a name (wit…"]),  # too long to keep
    ],
)
def test_short_labels(names, limit, expected):
    from views.charts import short_labels

    assert short_labels(names, limit) == expected


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("Short title", 44, "Short title"),
        ("one two three four", 9, "one two<br>three<br>four"),
        ("unbreakable-long-word here", 5, "unbreakable-long-word<br>here"),
        ("a <b> c", 44, "a &lt;b&gt; c"),
    ],
)
def test_title_layout_wraps_and_escapes(text, width, expected):
    from views.charts import title_layout

    layout = title_layout(text, width)
    assert layout["text"] == expected
    assert layout["automargin"] is True


def test_plotly_express_charts_take_the_wrapped_title():
    """plotly express takes a title as a string only: the wrapped one is set on the layout."""
    import pandas as pd

    from views import charts

    long = "Judge against people on every unit they both answered, per judge label"
    heat = charts.count_heatmap(pd.DataFrame([[1, 2], [3, 4]]), long)
    scatter = charts.identity_scatter(
        pd.DataFrame({"a": [1, 2], "b": [2, 1], "who": ["x", "<y>"]}), "a", "b", "who", long, 1, 2
    )
    wrapped = "Judge against people on every unit they both<br>answered, per judge label"
    assert heat.layout.title.text == wrapped and scatter.layout.title.text == wrapped
