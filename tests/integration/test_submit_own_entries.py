"""The Submit page and a submitter's own entries (AppTest, tiny corpus): the private edit link
shown once, the main scores with intervals and the rank once scored, the quota left, the page
opened with the link renaming the entry, editing its model facts and making it private, every
change in its history; a link that names no entry; a baseline's predictions named as such."""

from __future__ import annotations

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
def its(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    monkeypatch.setenv("ETC_LB_WORKERS", "0")  # the test scores the queue itself
    monkeypatch.setenv("ETC_LB_DAILY_LIMIT", "4")
    samples.forget()
    st.cache_data.clear()
    st.cache_resource.clear()
    yield split_items(load_corpus(tiny_corpus), "test")
    samples.forget()


def page(**params: str) -> AppTest:
    return opened("site_pages/submit.py", **params)


def said(at: AppTest) -> str:
    parts = [*at.markdown, *at.caption, *at.info, *at.success, *at.warning, *at.error]
    return "\n".join(str(p.value) for p in parts)


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.proto.label == label)


def submit(at: AppTest, data: bytes, name: str, **fields: str) -> None:
    at.file_uploader(key="submit_file").upload("preds.jsonl", data).run()
    at.text_input(key="submit_name").set_value(name)
    for key, value in fields.items():
        at.text_input(key=f"submit_{key}").set_value(value)
    button(at, "Submit for scoring").click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_submit_shows_the_link_once_then_the_owner_changes_the_entry(its):
    at = page()
    assert "You can submit 4 more today (of 4 per network address" in said(at)
    data = dumps_jsonl((it.key, it.utterance[:5] + "と思った") for it in its).encode("utf-8")
    submit(at, data, "Mine", parameters="8")
    link = at.code[0].value
    key = link.partition("?edit=")[2]
    sid, _, secret = key.partition(".")
    assert link.endswith(f"/submit?edit={key}") and len(secret) >= 32
    assert "Your private edit link, shown only now" in said(at)
    lb.process_jobs()
    at.run()
    assert "Rank 1 (band 1) of 1 on the transcriptions board, by ROUGE-L ↑" in said(at)
    scores = next(d.value for d in at.dataframe if "score [95% CI]" in d.value.columns)
    board = lb.ranking().set_index("id").loc[sid]
    rouge = scores.set_index("metric").loc["ROUGE-L ↑", "score [95% CI]"]
    assert rouge == f"{board['rougeL']:.2f} [{board['rougeL_lo']:.2f}, {board['rougeL_hi']:.2f}]"

    # another browser, opened with the link: the entry is theirs to change
    mine = page(edit=key)
    assert not mine.code  # the link is never shown again
    assert "Your entries" in [h.value for h in mine.subheader]
    mine.text_input(key=f"submit_own_{sid}_name").set_value("Mine v2")
    mine.text_input(key=f"submit_own_{sid}_licence").set_value("MIT")
    mine.selectbox(key=f"submit_own_{sid}_open_weights").set_value("yes")
    button(mine, "Save changes").click().run()
    assert "Saved." in said(mine)
    row = lb.ranking().set_index("id").loc[sid]
    assert (row["name"], row["licence"], row["open_weights"], row["parameters"]) == (
        "Mine v2",
        "MIT",
        "yes",
        "8",
    )
    button(mine, "Make it private").click().run()
    assert sid not in set(lb.ranking()["id"])
    history = next(d.value for d in mine.dataframe if "when (UTC)" in d.value.columns)
    changes = history[history["what"] != "status"]
    assert list(zip(changes["what"], changes["to"])) == [
        ("name", "Mine v2"),
        ("open weights", "yes"),
        ("licence", "MIT"),
        ("visibility", "private: only you see it"),
    ]
    # withdrawing asks to be sure first
    assert button(mine, "Withdraw").proto.disabled
    mine.checkbox(key=f"submit_own_sure_{sid}").check().run()
    button(mine, "Withdraw").click().run()
    assert lb.owned_entries(lb.Owner(edit_keys=(key,)))["visibility"].tolist() == ["withdrawn"]


def test_a_link_naming_no_entry_says_so(its):
    at = page(edit="0123456789ab.not-a-key")
    assert "This edit link names no entry" in said(at)
    assert "Your entries" not in [h.value for h in at.subheader]


def test_a_baselines_predictions_are_named_and_the_name_is_not_used(its):
    lb.seed_baselines(reported=False, backends=["copy"])
    at = page()
    data = dumps_jsonl((it.key, it.utterance) for it in its).encode("utf-8")
    submit(at, data, "My clever model")
    assert (
        "These predictions are the same as the baseline “Copy of the utterance (etclib)” ("
    ) in said(at).replace("\\", "")
    assert (
        "already on the board: nothing was stored, and the name “My clever model” was not used."
    ) in said(at).replace("\\", "")
    assert not at.code  # no edit link: nothing is the visitor's


def uploads_held(name: str) -> int:
    """The uploaded files named ``name`` that any object of this process still holds (a page's
    state or namespace)."""
    import gc

    from streamlit.runtime.uploaded_file_manager import UploadedFile

    gc.collect()
    return sum(isinstance(o, UploadedFile) and o.name == name for o in gc.get_objects())


def test_the_page_keeps_no_copy_of_a_file_once_refused_or_stored(its):
    """A tab closed after its upload was refused or stored leaves no copy of the file behind:
    its session would otherwise keep it until it ends, two minutes later."""
    at = page()
    at.file_uploader(key="submit_file").upload("refused-once.jsonl", b"{}\n" * 5_000).run()
    assert "was refused" in said(at)
    assert uploads_held("refused-once.jsonl") == 0
    data = dumps_jsonl((it.key, it.utterance[:5] + "と思った") for it in its).encode("utf-8")
    at.file_uploader(key="submit_file").upload("stored-once.jsonl", data).run()
    assert "valid, " in said(at) and uploads_held("stored-once.jsonl") >= 1  # kept until stored
    at.text_input(key="submit_name").set_value("Stored")
    button(at, "Submit for scoring").click().run()
    assert "Received as submission" in said(at)
    assert uploads_held("stored-once.jsonl") == 0
