"""The site's library (views): escaping, tables, templates, choices, without Streamlit."""

from __future__ import annotations

import pytest

from tests.conftest import needs_corpus


@needs_corpus
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_template_is_valid_once_filled(fmt):
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from views.board import template_bytes, validate_upload

    data = template_bytes(fmt)
    check = validate_upload(data, f"template.{fmt}")
    n = len(items(load_corpus(), "test"))
    assert check.ok and check.items == n == 1010
    assert check.warnings == [f"{n} predictions are empty; they score 0."]


@needs_corpus
def test_validate_upload_reports_lines():
    from views.board import problems_table, validate_upload

    check = validate_upload(b'{"dialogue_id": 14, "turn": 1}\nnot json\n', "x.jsonl")
    assert not check.ok
    t = problems_table(check.problems)
    assert t["line"].tolist()[:2] == ["1", "2"]


@needs_corpus
def test_make_filters_and_pages(tmp_path):
    from etclib.data.corpus import load_corpus
    from views import corpus as cq
    from views import corpus_store

    corpus = load_corpus()
    f = cq.make_filters("  相手  ", big_five={"openness": (2, 14), "neuroticism": (10, 14)})
    assert f.text == "相手" and f.big_five == {"neuroticism": (10, 14)}
    con = corpus_store()
    page1, total = cq.search_page(con, f, 1, page_size=10)
    expected = sum(
        ("相手" in u.text or "相手" in u.transcription)
        and corpus.participants[u.participant_id].scores["neuroticism"] >= 10
        for u in corpus.utterances
    )
    assert total == expected and len(page1) == min(10, expected)
    last, _ = cq.search_page(con, f, cq.page_count(total, 10), page_size=10)
    assert len(last) == total - 10 * (cq.page_count(total, 10) - 1)
    assert cq.page_count(0) == 1


@needs_corpus
def test_lengths_and_big_five_tables():
    from etclib.data.corpus import load_corpus
    from views import corpus as cq
    from views import corpus_store

    corpus = load_corpus()
    lengths = cq.utterance_lengths(corpus_store())
    assert len(lengths) == len(corpus.utterances)
    assert lengths["transcription_chars"].tolist() == [
        len(u.transcription) for u in corpus.utterances
    ]
    b5 = cq.big_five_scores(corpus_store())
    speakers = {u.participant_id for u in corpus.utterances}
    assert set(b5["participant_id"]) == speakers


def test_finetuned_choice_reaches_its_own_server(monkeypatch):
    """The fine-tuned model is served apart from OPENAI_*: its choice talks to its own URL."""
    from etclib.data.task import chat_item
    from tests.fakes import FakeLLMServer
    from views.chat import choice, make_backend

    with FakeLLMServer(
        lambda req: "相手に共感してもらえて嬉しかった", models=("swallow-sft",)
    ) as server:
        monkeypatch.setenv("ETC_FINETUNED_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("ETC_FINETUNED_MODEL", "swallow-sft")
        c = choice("finetuned")
        assert c.usable and c.options["model"] == "swallow-sft"
        backend = make_backend("finetuned")
        text = "".join(backend.stream(chat_item([("A", "昨日、友達に会えました。")])))
        assert text == "相手に共感してもらえて嬉しかった"
        assert server.count("openai-stream") == 1
        assert server.requests[-1].body["model"] == "swallow-sft"


def test_shown_errors_prints_the_message_literally_and_can_stop():
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        from etclib.core.errors import DataError
        from views.errors import shown_errors

        with shown_errors("Cannot load: "):
            raise DataError("[x](https://evil.example) **file** <b>")
        st.text("after the first")
        with shown_errors(stop=True):
            raise DataError("fatal")
        st.text("never shown")

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        r"Cannot load\: \[x\]\(https\:"
        + "\u2060"
        + r"//evil\.example\) \*\*file\*\* \<b\>",  # U+2060: no auto-link
        "fatal",
    ]
    assert [t.value for t in at.text] == ["after the first"]
