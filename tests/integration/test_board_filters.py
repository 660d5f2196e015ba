"""A filtered board (``lb.ranking(only=...)``, the Leaderboard's Setting and Saw-test filters)
ranks the entries it keeps among themselves: ranks, bands and the trivial-entry banner count
only them, the floors stay the whole board's; the page says its ranks are the filtered ones and
that baselines are never flagged."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import samples
from tests.conftest import REPO


@pytest.fixture
def board(tiny_corpus, monkeypatch):
    """oracle (zero-shot) and near oracle (few-shot) not significantly apart; a constant
    submission (few-shot, trivial) above a real but poor one (zero-shot); the constant
    baseline."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "200")
    samples.forget()
    st.cache_data.clear()
    its = split_items(load_corpus(tiny_corpus), "test")
    refs = [it.reference for it in its]
    for name, texts, setting in (
        ("oracle", refs, "zero-shot"),
        ("near oracle", [r if i % 7 else "嬉しかった。" for i, r in enumerate(refs)], "few-shot"),
        ("one text", ["相手の話を聞いて嬉しい気持ちになった。"] * len(refs), "few-shot"),
        ("dogs", [f"犬が{i}匹いる" for i in range(len(refs))], "zero-shot"),
    ):
        data = dumps_jsonl((it.key, t) for it, t in zip(its, texts)).encode("utf-8")
        lb.submit(data, {"name": name, "setting": setting})
    lb.seed_baselines(reported=False, backends=["constant"])
    lb.process_jobs()
    yield
    samples.forget()


def bands(frame) -> dict[str, str]:
    return dict(zip(frame["name"], frame["rank_band"]))


def test_kept_entries_are_ranked_among_themselves(board):
    whole = lb.ranking(sort_by="rougeL")
    assert bands(whole)["oracle"] == "1–2"  # near oracle is not significantly worse
    assert "one text" in whole.attrs["trivial_warning"]
    kept = lb.ranking(sort_by="rougeL", only={"setting": ["zero-shot"]})
    assert list(kept["name"]) == ["oracle", "dogs"]
    assert bands(kept) == {"oracle": "1", "dogs": "2"}
    assert kept.attrs["only"] == {"setting": ["zero-shot"]}
    # the trivial entry is not shown, so no banner; the floor is still the whole board's
    assert kept.attrs["trivial_warning"] is None
    assert kept.attrs["floors"] == whole.attrs["floors"] and "constant" in kept.attrs["floors"]
    assert list(kept["below_floor"]) == [False, True]
    # an empty choice keeps everything
    assert list(lb.ranking(sort_by="rougeL", only={"setting": []})["name"]) == list(whole["name"])
    with pytest.raises(lb.LeaderboardError, match="Cannot filter by 'contact'"):
        lb.ranking(only={"contact": ["x"]})


def test_the_page_ranks_the_filtered_rows_and_says_so(board):
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=90).run()
    at.switch_page("site_pages/leaderboard.py").run()
    assert any("one text" in w.value for w in at.warning)
    legend = "\n".join(c.value for c in at.caption)
    assert "baselines are not flagged" in legend and "✅ scored here" in legend
    at.multiselect(key="lb_settings").set_value(["zero-shot"]).run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "rank_band" in d.value.columns)
    assert dict(zip(table["name"], table["rank_band"])) == {"oracle": "1", "dogs": "2"}
    assert not any("one text" in w.value for w in at.warning)
    said = "\n".join(c.value for c in at.caption)
    assert "ranks and bands compare the 2 entries shown, not the 5 of the whole board" in said
