"""Links that name nothing there is (an unknown, hidden, deleted or other track's id; a dialogue
number the corpus lacks): the Compare, Entry and Corpus pages say it was not found, in a visitor's
words with the id cut to a readable length, and show nothing else in its place."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from tests.site_apptest import fresh_board, opened  # noqa: F401 - fresh_board: autouse

ADMIN = "a-test-admin-token-of-32-characters"


@pytest.fixture
def board(tiny_corpus, monkeypatch):
    """Tiny-corpus entries: two public transcription ones, a hidden and a deleted one, and one
    on the categories track."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    its = split_items(load_corpus(tiny_corpus), "test")
    ids = {}
    for name, text in (
        ("plain", lambda it: "嬉しかった。"),
        ("oracle", lambda it: it.reference),
        ("hidden", lambda it: it.utterance[:3] + "と思った"),
        ("deleted", lambda it: it.utterance[:2] + "と感じた"),
    ):
        data = dumps_jsonl((it.key, text(it)) for it in its).encode("utf-8")
        ids[name] = lb.submit(data, {"name": name}).id
    labels = dumps_jsonl(((it.key, it.label) for it in its), track="erc").encode("utf-8")
    ids["categories"] = lb.submit(labels, {"name": "gold labels"}).id
    lb.process_jobs()
    lb.hide(ids["hidden"], ADMIN)
    lb.delete(ids["deleted"], ADMIN)
    return ids


def said(at: AppTest) -> str:
    parts = [*at.warning, *at.error, *at.info, *at.markdown, *at.caption]
    return "\n".join(str(p.value) for p in parts)


@pytest.mark.parametrize("which", ["unknown", "hidden", "deleted", "long", "categories"])
def test_compare_says_entry_b_was_not_found(board, which):
    asked = {
        "unknown": "deadbeef0000",
        "long": "x" * 20_000,
    }.get(which) or board[which]
    at = opened("site_pages/compare.py", track="transcription", a=board["plain"], b=asked)
    text = said(at)
    shown = asked if len(asked) <= 24 else asked[:23] + "…"
    assert f"Entry B “{shown}” was not found on the transcriptions board" in text
    assert "x" * 24 not in text  # a long id is never quoted whole
    assert "python -m" not in text and "leaderboard status" not in text
    # nothing put in its place: A as linked, B left for the visitor to choose, no table
    assert at.selectbox(key="cmp_a").value == board["plain"]
    assert at.selectbox(key="cmp_b").value is None
    assert not [d for d in at.dataframe if "verdict" in d.value.columns]


def test_compare_without_a_track_finds_the_board_of_the_linked_entry(board):
    at = opened("site_pages/compare.py", a=board["oracle"], b="deadbeef0000")
    assert at.segmented_control(key="cmp_track").value == "transcription"
    assert "Entry B “deadbeef0000” was not found" in said(at)


@pytest.mark.parametrize("which", ["unknown", "hidden", "deleted", "long", None])
def test_an_entry_link_says_the_entry_was_not_found(board, which):
    asked = {"unknown": "deadbeef0000", "long": "x" * 20_000}.get(which) or board.get(which)
    # an entry's link of old (the Leaderboard's) leads to the same page
    for page in ("site_pages/entry.py", "site_pages/leaderboard.py")[: 2 if asked else 1]:
        at = opened(page, **({"submission": asked} if asked else {}))
        text = said(at)
        if asked:
            shown = asked if len(asked) <= 24 else asked[:23] + "…"
            assert f"Entry “{shown}” was not found on the site's boards" in text
            assert "x" * 24 not in text
        else:
            assert "open it from a board's ranking" in text
        assert [t.value for t in at.title] == ["Entry"]
        assert not at.dataframe  # no other entry's detail in its place
        assert any(p.proto.page.endswith("leaderboard") for p in at.page_link)


def test_an_entry_link_of_old_opens_the_entrys_page(board):
    at = opened("site_pages/leaderboard.py", submission=board["categories"], metric="macro_f1")
    assert [t.value for t in at.title] == ["gold labels"]
    url = {k: v if isinstance(v, str) else v[0] for k, v in at.query_params.items()}
    assert url == {"submission": board["categories"], "metric": "macro_f1"}
    (back,) = [p.proto for p in at.page_link if p.proto.page.endswith("leaderboard")]
    assert back.label == "The categories board" and back.query_string == "track=erc"
    assert "was not found" not in said(at)


@pytest.mark.parametrize("asked", ["99999", "abc"])
def test_corpus_says_the_linked_dialogue_was_not_found(tiny_corpus, monkeypatch, asked):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    at = opened("site_pages/corpus.py", corpus_dialogue=asked)
    assert f"Dialogue “{asked}” was not found in the public corpus: check the link." in said(at)
    # not the first result's dialogue in its place
    assert not [m for m in at.markdown if m.value.startswith("**Dialogue ")]
