"""The site's charts as a phone shows them (views/charts.py): entry names shortened to a label
that fits, whole on hover, written as typed (Vega draws text, never markup); long titles
wrapped into lines; numbers written in a heatmap's cells."""

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
        (["<b>bold</b>"], 40, ["<b>bold</b>"]),  # shown as typed: no escaping for Vega
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
        ("Short title", 44, ["Short title"]),
        ("one two three four", 9, ["one two", "three", "four"]),
        ("unbreakable-long-word here", 5, ["unbreakable-long-word", "here"]),
        ("a <b> c", 44, ["a <b> c"]),
        ("", 44, [""]),
    ],
)
def test_title_lines_wrap(text, width, expected):
    from views.charts import title_lines

    assert title_lines(text, width) == expected


def test_charts_take_the_wrapped_title_and_the_whole_names_on_hover():
    import pandas as pd

    from tests.vega import marks, spec_of
    from views import charts

    long = "Judge against people on every unit they both answered, per judge label"
    heat = charts.count_heatmap(pd.DataFrame([[1, 2], [3, 4]]), long)
    scatter = charts.identity_scatter(
        pd.DataFrame({"a": [1, 2], "b": [2, 1], "who": ["x", "<y>"]}), "a", "b", "who", long, 1, 2
    )
    wrapped = ["Judge against people on every unit they both", "answered, per judge label"]
    assert spec_of(heat)["title"]["text"] == wrapped == spec_of(scatter)["title"]["text"]
    # every count written in its cell, row by row
    (cells,) = marks(heat, "text")
    assert [(r["row"], r["column"], r["text"]) for r in cells["rows"]] == [
        ("0", "0", "1"),
        ("0", "1", "2"),
        ("1", "0", "3"),
        ("1", "1", "4"),
    ]
    (points,) = marks(scatter, "circle")
    assert [r["who"] for r in points["rows"]] == ["x", "<y>"]  # as typed
    assert {t["field"] for t in points["encoding"]["tooltip"]} == {"a", "b", "who"}
    (line,) = marks(scatter, "line")
    assert [(r["a"], r["b"]) for r in line["rows"]] == [(1, 1), (2, 2)]  # x = y


def test_a_histogram_sends_counts_not_values():
    from tests.vega import marks
    from views import charts

    values = [-3.0] * 500 + [0.0] * 300 + [5.0] * 200
    chart = charts.difference_histogram(values, "Per-item ROUGE-L: B − A over 1000 items")
    (bars,) = marks(chart, "bar")
    assert len(bars["rows"]) == 41
    assert sum(r["count"] for r in bars["rows"]) == 1000
    assert max(r["count"] for r in bars["rows"]) == 500
    (zero,) = marks(chart, "rule")
    assert [r["at"] for r in zero["rows"]] == [0.0]
