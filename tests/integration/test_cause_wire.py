"""The cause layer wired into the site: the leaderboard's by-cause breakdown, the corpus
browser's cause filter and marks, the chat's replay summary (views/cause_layer.py)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from etclib.studies import annotation, causes
from tests.conftest import REPO, needs_corpus

ADMIN = "wire-admin-token-long-enough-0123"
pytestmark = [needs_corpus]


@pytest.fixture(autouse=True)
def _admin(monkeypatch):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _labelled(corpus):
    """One sampled item whose two human answers both mark the target itself (no-context)."""
    causes.draw_sample(ADMIN, corpus, 1, seed=5)
    key = causes.sample_keys()[0]
    for i in range(2):
        code = annotation.issue_code(ADMIN, f"wire {i}").code
        causes.record_causes(code, key, [(key[1], key[2])])
    return key


def test_breakdown_uses_human_then_proxy(corpus):
    """Item scores are ×100 as etclib stores them (rouge and judge items: 0..100); the
    breakdown's cells are their plain means per type."""
    from views import cause_layer

    key = _labelled(corpus)
    d = corpus.by_id[key[0]]
    others = [u for u in d.utterances if u.key != key][:3]
    rows = [dict(zip(("dialogue_id", "turn", "role"), key), f1=50.0)]
    rows += [
        {"dialogue_id": u.dialogue_id, "turn": u.turn, "role": u.role, "f1": f}
        for u, f in zip(others, (20.0, 40.0, 90.0))
    ]
    table, caption = cause_layer.cause_breakdown(pd.DataFrame(rows), ["f1", "missing"])
    got = table.set_index("cause type")
    assert got.loc["no-context", "items"] == 1
    assert got.loc["no-context", "f1"] == 50.0
    assert got.loc["no-context", "source"] == "human majority 1"
    expected: dict[str, list[float]] = {}
    for u, f in zip(others, (20.0, 40.0, 90.0)):
        expected.setdefault(causes.proxy_type(u.transcription, u.role), []).append(f)
    for kind, fs in expected.items():
        assert got.loc[kind, "items"] == len(fs)
        assert got.loc[kind, "f1"] == pytest.approx(round(sum(fs) / len(fs), 2))
    assert "human majority, 1 items" in caption and "proxy (partner mention), 3 items" in caption


def test_marks_and_summary(corpus):
    from views import cause_layer

    key = _labelled(corpus)
    found = cause_layer.cause_set(*key)
    n = 2 * (key[1] - 1) + (1 if key[2] == "speaker" else 2)
    assert cause_layer.cause_marks(found) == {(key[1], key[2]): f"⟵ cause of utterance {n}"}
    assert "Cause type: no-context" in cause_layer.cause_summary(found)
    assert "human majority (2 answers)" in cause_layer.cause_summary(found)
    other = next(u for u in corpus.by_id[key[0]].utterances if u.key != key)
    assert cause_layer.cause_set(*other.key) is None
    assert cause_layer.cause_summary(None) == cause_layer.NO_CAUSES


def test_corpus_page_filters_and_marks(corpus):
    from views import cause_layer

    key = _labelled(corpus)
    at = AppTest.from_file(str(REPO / "site_pages" / "corpus.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="corpus_cause_type").set_value("no-context").run()
    assert not at.exception, at.exception
    assert any("**1** matching utterances" == m.value for m in at.markdown)
    at.number_input(key="corpus_dialogue").set_value(key[0]).run()
    label = cause_layer.target_label(key[1], key[2], cause_layer.cause_set(*key))
    assert label.endswith("· causes marked")
    at.selectbox(key=f"corpus_cause_target_{key[0]}").set_value(label).run()
    assert not at.exception, at.exception
    n = 2 * (key[1] - 1) + (1 if key[2] == "speaker" else 2)
    assert any(f"cause of utterance {n}" in m.value for m in at.markdown)
    assert any("human majority" in i.value and r"no\-context" in i.value for i in at.info)


def test_one_answer_is_shown_in_the_dialogue_view_only(corpus):
    """One person's answer marks the dialogue view, named as such; the breakdown and the
    cause-type filter still wait for a majority (the proxy's type stands meanwhile)."""
    from views import cause_layer

    causes.draw_sample(ADMIN, corpus, 1, seed=11)
    key = causes.sample_keys()[0]
    pos = causes.position(key[1], key[2])
    chosen = sorted({1, pos})
    code = annotation.issue_code(ADMIN, "one").code
    causes.record_causes(code, key, chosen)
    found = cause_layer.cause_set(*key)
    assert found.source == cause_layer.ONE_ANSWER
    assert found.positions == tuple(chosen)
    assert "no majority yet" in cause_layer.cause_summary(found)
    marks = cause_layer.cause_marks(found)
    assert set(marks) == {causes.turn_role(p) for p in chosen}
    d = corpus.by_id[key[0]]
    every = cause_layer.dialogue_cause_sets(key[0], [(u.turn, u.role) for u in d.utterances])
    assert set(every) == {(key[1], key[2])}
    # the Corpus page's corpus-wide map (one read) says the same as the per-item lookup
    assert cause_layer.corpus_cause_sets() == {key: found}
    types = cause_layer.corpus_cause_types().set_index(["dialogue_id", "turn", "role"])
    assert types.loc[key, "source"] == "proxy"
    # a second answer makes a majority: the library's source takes over
    other = annotation.issue_code(ADMIN, "two").code
    causes.record_causes(other, key, [pos])
    assert cause_layer.cause_set(*key).source == "human majority (2 answers)"
    assert cause_layer.cause_set(*key).positions == (pos,)
    assert cause_layer.corpus_cause_sets() == {key: cause_layer.cause_set(*key)}


def _corpus_page_on(key, target: tuple[int, str]) -> AppTest:
    """The corpus page on ``key``'s dialogue, the causes of ``target`` shown."""
    from views import cause_layer

    at = AppTest.from_file(str(REPO / "site_pages" / "corpus.py"), default_timeout=120)
    at.run()
    at.number_input(key="corpus_dialogue").set_value(key[0]).run()
    found = cause_layer.cause_set(key[0], *target)
    label = cause_layer.target_label(*target, found)
    at.selectbox(key=f"corpus_cause_target_{key[0]}").set_value(label).run()
    assert not at.exception, at.exception
    return at


def test_the_dialogue_view_badges_exactly_the_marked_utterances(corpus):
    """One person's answers on three items (the target and the first utterance; the target and
    the first again; nothing in the dialogue): each item's dialogue badges exactly its marked
    utterances and the target as the chosen one, says the answer is one person's, and says when
    the cause is in none of the utterances."""
    from views import cause_layer

    causes.draw_sample(ADMIN, corpus, 3, seed=7)
    code = annotation.issue_code(ADMIN, "browser").code
    keys = causes.sample_keys()
    marked = {}
    for i, key in enumerate(keys):
        pos = causes.position(key[1], key[2])
        marked[key] = () if i == 2 else tuple(sorted({1, pos}))
        causes.record_causes(code, key, list(marked[key]))
    for key, chosen in marked.items():
        at = _corpus_page_on(key, (key[1], key[2]))
        pos = causes.position(key[1], key[2])
        messages = at.chat_message
        assert len(messages) == len(corpus.by_id[key[0]].utterances)
        for p, message in enumerate(messages, start=1):
            badges = " ".join(m.value for m in message.markdown)
            assert (f"cause of utterance {pos}" in badges) == (p in chosen), (key, p, badges)
            assert ("chosen utterance" in badges) == (p == pos), (key, p, badges)
        shown = re.sub(r"\\(.)", r"\1", " ".join(str(e.value) for e in (*at.info, *at.markdown)))
        assert cause_layer.ONE_ANSWER in shown, shown
        if not chosen:
            assert "none in the dialogue" in shown


def test_the_leaderboard_breaks_a_scored_entry_down_by_cause_type(corpus, monkeypatch):
    """No type has two human answers yet: every item's type is the proxy's, and each cell is
    etclib's ROUGE-L (the mean item F-measure ×100) over that type's items, with the items
    counted by the proxy itself."""
    import leaderboard as lb
    from etclib.data.task import items
    from etclib.metrics import rouge
    from etclib.tracks.predictions import dumps_jsonl

    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    its = items(corpus, "test")
    data = dumps_jsonl((it.key, it.utterance[:8]) for it in its).encode()  # scores that differ
    sid = lb.submit(data, {"name": "Cause breakdown entry", "setting": "other"}).id
    lb.process_jobs()
    at = AppTest.from_file(str(REPO / "site_pages" / "entry.py"), default_timeout=300)
    at.query_params["submission"] = sid
    at.session_state["entry_expand_cause"] = True  # drawn when opened
    at.run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "cause type" in d.value.columns)
    rows = table.set_index("cause type")
    captions = " ".join(c.value for c in at.caption)
    assert f"proxy (partner mention), {len(its):,} items" in captions, captions
    by_type: dict[str, tuple[list[str], list[str]]] = {}
    for it in its:
        preds, refs = by_type.setdefault(causes.proxy_type(it.reference, it.role), ([], []))
        preds.append(it.utterance[:8])
        refs.append(it.reference)
    assert set(rows.index) == set(by_type)
    for kind, (preds, refs) in by_type.items():
        assert int(rows.loc[kind, "items"]) == len(preds)
        assert rows.loc[kind, "source"] == f"proxy (partner mention) {len(preds)}"
        # headed by the metric's name and direction (etclib.metrics.heading), not its key
        expected = rouge.METRIC.score(preds, refs)["rougeL"]
        assert float(rows.loc[kind, "ROUGE-L ↑"]) == pytest.approx(expected, abs=0.01)
    lb.close_all()
