"""What a visitor reads instead of operator text (issue #26): a refused file type said in the
page, doc links to the rendered document in the repository, chart labels that fit a phone."""

from __future__ import annotations

import pytest

from tests.conftest import REPO

ACCEPTED = "JSON Lines (.jsonl, .json, .ndjson) or CSV (.csv)"


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        ("preds.jsonl", None),
        ("preds.json", None),
        ("preds.ndjson", None),
        ("preds.csv", None),
        ("PREDS.CSV", None),
        ("予測.jsonl", None),
        ("notes.txt", "a .txt file is not taken here"),
        ("preds.jsonl.txt", "a .txt file is not taken here"),
        ("preds.xlsx", "a .xlsx file is not taken here"),
        ("preds", "a file without a type in its name is not taken here"),
        ("", "a file without a type in its name is not taken here"),
    ],
)
def test_upload_type_problem(name, refused):
    from views.submission import upload_type_problem

    said = upload_type_problem(name)
    if refused is None:
        assert said is None
    else:
        assert said.startswith(refused) and ACCEPTED in said, said


def test_accepted_types_in_words():
    from views.submission import accepted_types_text, upload_types

    assert accepted_types_text() == ACCEPTED
    assert upload_types() == ["jsonl", "json", "ndjson", "csv"]


def test_a_txt_file_is_refused_by_its_type_before_it_is_read():
    from views.submission import validate_upload

    valid = b'{"dialogue_id": 1, "turn": 1, "role": "speaker", "prediction": "x"}\n'
    check = validate_upload(valid, "predictions.txt")
    assert not check.ok
    assert [(p.line, p.message[:30]) for p in check.problems] == [
        (0, "a .txt file is not taken here.")
    ]


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


def test_doc_link_is_the_rendered_doc_in_the_repository(monkeypatch):
    from views import docs

    monkeypatch.setenv("ETC_REPOSITORY_URL", "https://example.test/org/etc/")
    assert docs.doc_url("causes.md") == "https://example.test/org/etc/blob/main/docs/causes.md"
    assert docs.doc_link("leaderboard.md#tracks", "the tracks") == (
        "[the tracks](https://example.test/org/etc/blob/main/docs/leaderboard.md#tracks)"
    )
    with pytest.raises(ValueError, match="docs/nonesuch.md does not exist"):
        docs.doc_url("nonesuch.md")


def test_doc_link_without_a_repository_opens_the_sites_documentation_page(monkeypatch):
    from views import docs

    monkeypatch.delenv("ETC_REPOSITORY_URL", raising=False)
    monkeypatch.setattr(docs, "_declared_repository", lambda: None)
    assert docs.doc_url("causes.md") == "docs?doc=causes.md"
    assert docs.doc_link("leaderboard.md#tracks", "the tracks") == (
        "[the tracks](docs?doc=leaderboard.md#tracks)"
    )


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("See [deploying](deploy.md).", "See [deploying](docs?doc=deploy.md)."),
        ("[the rules](judge.md#rules-in-code)", "[the rules](docs?doc=judge.md#rules-in-code)"),
        ("[a section](#tracks) and [web](https://example.test/a.md)", None),
        ("The [README](../README.md) says so.", "The README says so."),
    ],
)
def test_the_documentation_page_keeps_links_inside_the_site(tmp_path, monkeypatch, line, shown):
    from views import docs

    monkeypatch.delenv("ETC_REPOSITORY_URL", raising=False)
    monkeypatch.setattr(docs, "_declared_repository", lambda: None)
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(b"png")
    (tmp_path / "x.md").write_text(f"# X\n\n{line}\n\n![a chart](img/a.png)\n\nafter\n")
    monkeypatch.setattr(docs, "DOCS", tmp_path)
    parts = docs.rendered("x.md")
    assert [kind for kind, _ in parts] == ["markdown", "image", "markdown"]
    assert parts[0][1].splitlines()[-1] == (line if shown is None else shown)
    assert parts[1][1] == (tmp_path / "img" / "a.png").resolve()
    assert docs.doc_title("x.md") == "X"
    with pytest.raises(ValueError, match="no document"):
        docs.rendered("../README.md")


def test_the_documentation_page_renders_a_doc_and_refuses_other_names():
    from streamlit.testing.v1 import AppTest

    page = str(REPO / "site_pages" / "docs.py")
    at = AppTest.from_file(page, default_timeout=60)
    at.query_params["doc"] = "judge.md"
    at.run()
    assert not at.exception
    assert any("LLM judge" in h.value for h in at.markdown)
    at = AppTest.from_file(page, default_timeout=60)
    at.query_params["doc"] = "../README.md"
    at.run()
    assert not at.exception
    assert "There is no document named" in at.error[0].value
    assert any("docs?doc=site.md" in m.value for m in at.markdown)


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
