from streamlit.testing.v1 import AppTest

from tests.conftest import REPO, needs_corpus


@needs_corpus
def test_home_page_shows_real_corpus():
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert not at.exception
    assert any("Emotion Transcription" in t.value for t in at.title)
    labels = [m.label for m in at.metric]
    assert "Dialogues" in labels and at.metric[0].value == "997"
