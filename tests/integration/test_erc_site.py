"""The categories (ERC) track on the chat and corpus pages: the library helpers they
call (etclib/erc.py) and the pages through ``streamlit.testing.v1.AppTest``.

Expected label sets and counts come from the classifiers called directly and from plain set
arithmetic, never from the pages' helpers. The classifiers and the corpus store are the run's
(the conftest's ``warm_cache``, copied once into this module's shared cache directory), not built
again per test.
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from etclib.data.corpus import CATEGORIES
from tests.conftest import REPO, needs_corpus

pytestmark = [needs_corpus]


@pytest.fixture(scope="module")
def shared(tmp_path_factory, warm_cache):
    from tests.serve import copy_warm_cache

    shared = tmp_path_factory.mktemp("erc-site")
    copy_warm_cache(warm_cache, shared / "cache", shared / "etc.duckdb")
    return shared


@pytest.fixture(autouse=True)
def _shared_caches(_isolated, shared, monkeypatch):
    monkeypatch.setenv("ETC_CACHE_DIR", str(shared / "cache"))
    monkeypatch.setenv("ETC_STORE_DB", str(shared / "etc.duckdb"))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


def _plain(markdown: str) -> str:
    """A caption without Markdown's escapes and bold marks."""
    return markdown.replace("\\", "").replace("**", "")


def _reads(corpus):
    """(aggregated label sets, the transcription classifier's readings) on test, directly."""
    from etclib.data.task import items
    from etclib.tracks.categories.classifier import cached

    its = items(corpus, "test")
    return [set(it.label) for it in its], [
        set(r) for r in cached(corpus, "transcription").predict_texts([it.reference for it in its])
    ]


def test_per_category_confusion_is_set_arithmetic(corpus):
    from etclib.tracks.categories.analysis import classifier_confusion, classifier_per_category

    gold, read = _reads(corpus)
    table = classifier_per_category(corpus, "test").set_index("category")
    assert list(table.index) == list(CATEGORIES)
    pairs = classifier_confusion(corpus, "test")
    for c in CATEGORIES:
        tp = sum(c in g and c in r for g, r in zip(gold, read))
        fp = sum(c not in g and c in r for g, r in zip(gold, read))
        fn = sum(c in g and c not in r for g, r in zip(gold, read))
        tn = len(gold) - tp - fp - fn
        row = table.loc[c]
        assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (tp, fp, fn, tn)
        assert row["support"] == tp + fn
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        assert row["precision"] == pytest.approx(100 * p)
        assert row["recall"] == pytest.approx(100 * r)
        assert row["f1"] == pytest.approx(100 * (2 * p * r / (p + r) if p + r else 0.0))
        # the pair counts' diagonal is the items where both name the category
        assert pairs.loc[c, c] == tp


def test_chat_categories_takes_a_created_backend(corpus):
    from etclib import tracks
    from etclib.tracks.categories.analysis import chat_categories

    lines = [("A", "試験に合格したよ！"), ("B", "本当に？おめでとう！")]
    backend = tracks.get("erc").backend("tfidf", corpus=corpus)
    assert chat_categories(lines, backend) == chat_categories(lines, "tfidf", corpus=corpus)


def test_chat_shows_the_erc_baselines_categories_under_each_utterance(corpus):
    from etclib import tracks
    from etclib.data.task import chat_item
    from etclib.tracks.categories.labels import japanese
    from views import chat

    assert chat.erc_backend_name() == "tfidf"  # the ERC track's default, which reads dialogues
    at = AppTest.from_file(str(REPO / "site_pages" / "chat.py"), default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    lines = [("A", "昨日、ずっと行きたかった大学に合格したんだ！"), ("B", "すごい！おめでとう！")]
    for _, text in lines:
        at.chat_input(key="chat_input").set_value(text).run()
        assert not at.exception, at.exception
    erc = tracks.get("erc").backend("tfidf", corpus=corpus)
    expected = [erc.predict([chat_item(lines[: i + 1])])[0] for i in range(len(lines))]
    shown = [
        _plain(c.value) for c in at.caption if c.value.startswith("Predicted emotion categories")
    ]
    assert len(shown) == len(lines)
    for caption, labels in zip(shown, expected):
        assert "tfidf" not in caption  # the classifier is named once, in words, at the top
        for c in labels:
            assert f"{c} ({japanese([c])})" in caption
        for c in set(CATEGORIES) - set(labels):
            assert f"{c} (" not in caption


def test_chat_replay_shows_categories_beside_the_annotators_label(corpus):
    from etclib import tracks
    from etclib.data.task import dialogue_items

    at = AppTest.from_file(str(REPO / "site_pages" / "chat.py"), default_timeout=300)
    at.run()
    at.radio(key="chat_mode").set_value("Replay a corpus dialogue").run()
    did = int(at.selectbox(key="chat_replay_id").value)
    at.button(key="chat_replay_next").click().run()
    at.button(key="chat_replay_next").click().run()
    assert not at.exception, at.exception
    its = dialogue_items(corpus.by_id[did])[:2]
    predicted = tracks.get("erc").backend("tfidf", corpus=corpus).predict(its)
    captions = [_plain(c.value) for c in at.caption]
    ours = [c for c in captions if c.startswith("Predicted emotion categories")]
    theirs = [c for c in captions if c.startswith("Annotators' aggregated label")]
    assert len(ours) == len(theirs) == 2
    for mine, gold, labels, it in zip(ours, theirs, predicted, its):
        assert all(f"{c} (" in mine for c in labels)
        assert all(f"{c} (" in gold for c in it.label)
        assert sum(f"{c} (" in gold for c in CATEGORIES) == len(it.label)


def test_corpus_page_shows_the_classifiers_confusion(corpus):
    from sklearn.metrics import f1_score

    from etclib.tracks.categories.labels import indicator

    at = AppTest.from_file(str(REPO / "site_pages" / "corpus.py"), default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    at.session_state["corpus_view"] = "Category classifier"
    at.run()
    assert not at.exception, at.exception
    assert any("against the annotators" in h.value for h in at.subheader)
    gold, read = _reads(corpus)
    macro = 100 * f1_score(indicator(gold), indicator(read), average="macro", zero_division=0)
    got = {m.label: m.value for m in at.metric}
    assert got["Macro-F1 on test"] == f"{macro:.2f}"  # two decimals, as every score
    (table,) = [d.value for d in at.dataframe]  # (AppTest does not keep a dataframe's key)
    assert list(table["category"]) == list(CATEGORIES)
    assert any("multi-label pair counts" in c.value for c in at.caption)


def test_leaderboard_page_shows_like_for_like_and_na_breakdowns(corpus):
    """The categories board: the person row, then the same references for each entry; an
    entry's breakdown by category shows n/a for categories absent from a subset, and says so."""
    import leaderboard as lb
    from etclib import tracks
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    its = items(corpus, "test")
    pred = tracks.get("erc").backend("majority", corpus=corpus).predict(its)
    data = dumps_jsonl([(it.key, p) for it, p in zip(its, pred)], "erc").encode()
    receipt = lb.submit(data, {"name": "all neutral"}, file_name="erc.jsonl")
    lb.process_jobs()
    at = AppTest.from_file(str(REPO / "site_pages" / "leaderboard.py"), default_timeout=300)
    at.query_params["track"] = "erc"
    at.run()
    assert not at.exception, at.exception
    tables = [df.value for df in at.dataframe if "name" in df.value.columns]
    (like,) = [t for t in tables if len(t) == 2 and t["name"].iloc[0] == "a person"]
    assert "all neutral" in like["name"].iloc[1]
    # the entry on the person's references is the loo_* score, not its board column
    row = lb.ranking(track="erc").set_index("id").loc[receipt.id]
    assert like["Macro-F1 ↑"].iloc[1] == pytest.approx(row["loo_macro_f1"], abs=0.01)
    assert like["Macro-F1 ↑"].iloc[1] != pytest.approx(row["macro_f1"], abs=0.01)
    assert any("Like for like" in c.value for c in at.caption)
    at = AppTest.from_file(str(REPO / "site_pages" / "entry.py"), default_timeout=300)
    at.query_params["submission"] = receipt.id
    at.session_state["entry_expand_category"] = True  # drawn when opened
    at.run()
    assert not at.exception, at.exception
    from views.board import metric_label

    joy = metric_label("f1_joy")  # the column's heading, from the metric registry
    by_category = next(
        df.value for df in at.dataframe if joy in df.value.columns and "neutral" in df.value.index
    )
    # the items labelled neutral alone hold no joy, and the entry predicts none: n/a
    assert by_category.loc["neutral", joy] == "n/a"
    assert by_category.loc["joy", joy] == "0.00"
    assert any("left out of the subset's macro-F1" in c.value for c in at.caption)


def test_the_chat_names_its_category_model_without_importing_scikit_learn(tmp_path):
    """Listing the category backend (its availability) does not import scikit-learn: about a
    second of the Chat page's first render went to that import (with SciPy) before any
    category was asked for."""
    import subprocess
    import sys

    probe = (
        "import sys; from views import chat_categories as c; label = c.erc_label(); "
        "print(c.erc_status().usable, 'sklearn' in sys.modules, label.split(':')[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True", "False", "tfidf"]


def test_the_category_backend_is_unusable_without_scikit_learn(monkeypatch):
    import importlib.util

    from etclib import tracks
    from etclib.tracks.categories import classifier

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sklearn" else find_spec(name, *a),
    )
    status = tracks.get("erc").backend_status("tfidf")
    assert not status.usable and status.reason == classifier.MISSING_SKLEARN
