import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.conftest import REPO, needs_corpus


@needs_corpus
def test_home_page_shows_real_corpus():
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert not at.exception
    assert any("Emotion Transcription" in t.value for t in at.title)
    labels = [m.label for m in at.metric]
    assert "Dialogues" in labels and at.metric[0].value == "997"


@needs_corpus
def test_home_shows_its_own_corpus_after_a_run_on_another(tiny_corpus, monkeypatch, tmp_path):
    """Streamlit's caches outlive a page run: Home's corpus data is cached per corpus
    (views.corpus_key), so what a run on another corpus in this process cached (a test's tiny
    corpus) is never shown for the real one."""
    from tests.conftest import REAL_CORPUS

    st.cache_data.clear()
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_STORE_DB", str(tmp_path / "tiny.duckdb"))
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert not at.exception and at.metric[0].value != "997"
    monkeypatch.setenv("ETC_DATA_DIR", str(REAL_CORPUS))
    monkeypatch.setenv("ETC_STORE_DB", str(tmp_path / "real.duckdb"))
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert not at.exception and at.metric[0].value == "997"
