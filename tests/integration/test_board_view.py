"""The Leaderboard's view (AppTest, tiny corpus): a link's track, metric, filters and columns
reproduce the view and the URL follows every choice; the column chooser adds the model facts;
paper and code links are link columns; an entry picked opens its page, which offers "compare
with…" any other entry."""

from __future__ import annotations

import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import samples
from tests.site_apptest import opened


@pytest.fixture
def board(tiny_corpus, monkeypatch):
    """Three scored entries: two zero-shot (one with model facts and links), one few-shot."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    samples.forget()
    st.cache_data.clear()
    st.cache_resource.clear()
    its = split_items(load_corpus(tiny_corpus), "test")
    facts = {
        "parameters": "8",
        "open_weights": "yes",
        "licence": "MIT",
        "paper_url": "https://example.org/paper",
        "model_url": "https://example.org/code",
    }
    ids = {}
    for name, text, details in (
        ("oracle", lambda it: it.reference, {"setting": "zero-shot", **facts}),
        ("plain", lambda it: "嬉しかった。", {"setting": "zero-shot"}),
        ("shots", lambda it: it.reference[:6], {"setting": "few-shot"}),
    ):
        data = dumps_jsonl((it.key, text(it)) for it in its).encode("utf-8")
        ids[name] = lb.submit(data, {"name": name, **details}).id
    lb.process_jobs()
    yield ids
    samples.forget()


def page(**params: str) -> AppTest:
    return opened("site_pages/leaderboard.py", **params)


def ranking_table(at: AppTest):
    return next(d for d in at.dataframe if "rank_band" in d.value.columns)


def url(at: AppTest) -> dict[str, str]:
    return {k: v if isinstance(v, str) else v[0] for k, v in at.query_params.items()}


def test_a_link_reproduces_the_view(board):
    at = page(
        track="transcription",
        metric="bleu1",
        setting="zero-shot",
        columns="team,parameters,open_weights,paper_url",
    )
    assert at.selectbox(key="lb_metric").value == "bleu1"
    assert at.multiselect(key="lb_settings").value == ["zero-shot"]
    table = ranking_table(at).value
    assert set(table["name"]) == {"oracle", "plain"}
    assert list(table.columns) == [
        "rank",
        "name",
        "BLEU-1 ↑ [95% CI]",  # within a phone's width: rank, name and score first
        "rank_band",
        "kind",
        "flag",
        "team",
        "paper link",
        "parameters (billions)",
        "open weights",
    ]
    row = table.set_index("name").loc["oracle"]
    assert (row["parameters (billions)"], row["open weights"]) == ("8", "yes")
    assert row["paper link"] == "https://example.org/paper"
    # the link's values stay in the URL (the columns in the table's order)
    assert url(at) == {
        "metric": "bleu1",
        "setting": "zero-shot",
        "columns": "team,paper_url,parameters,open_weights",
    }


def test_the_url_follows_every_choice(board):
    at = page()
    assert url(at) == {}  # the default view: nothing to say
    at.selectbox(key="lb_metric").set_value("bleu4").run()
    at.multiselect(key="lb_settings").set_value(["few-shot"]).run()
    at.multiselect(key="lb_weights").set_value(["yes"]).run()
    assert "No entry matches these filters" in "\n".join(i.value for i in at.info)
    at.multiselect(key="lb_weights").set_value([]).run()
    at.multiselect(key="lb_columns").set_value(["licence", "bleu1"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert url(at) == {"metric": "bleu4", "setting": "few-shot", "columns": "licence,bleu1"}
    assert list(ranking_table(at).value.columns)[-2:] == ["BLEU-1 ↑", "licence"]
    # an entry picked opens its page, with the board's metric for its breakdown
    at.selectbox(key="lb_detail").set_value(board["shots"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert url(at) == {"submission": board["shots"], "metric": "bleu4"}
    assert [t.value for t in at.title] == ["shots"]


def test_links_are_link_columns_and_an_entry_compares_with_any_other(board):
    grid = ranking_table(page())
    config = json.loads(grid.proto.columns)
    assert config["paper link"]["type_config"] == {"type": "link", "display_text": "paper ↗"}
    assert config["model or code link"]["type_config"] == {
        "type": "link",
        "display_text": "code ↗",
    }
    order = list(lb.ranking()["id"])
    above = order[order.index(board["plain"]) - 1]
    at = opened("site_pages/entry.py", submission=board["plain"])
    picker = at.selectbox(key="entry_compare_with")
    assert picker.value == above and board["plain"] not in picker.options
    link = next(p.proto for p in at.page_link if p.proto.page.endswith("compare"))
    assert link.label == "Compare with the one above"
    other = next(i for i in order if i not in (above, board["plain"]))
    picker.set_value(other).run()
    link = next(p.proto for p in at.page_link if p.proto.page.endswith("compare"))
    assert link.label == "Compare with it"
    assert f"a={other}" in link.query_string and f"b={board['plain']}" in link.query_string
