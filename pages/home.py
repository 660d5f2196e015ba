"""Home: what the ETC task is, a real corpus dialogue, the top of the leaderboard, every page."""

import streamlit as st

from views import corpus_stats, example_dialogue
from views.board import database_key, top_table
from views.dialogue import show_dialogue
from views.errors import shown_errors
from views.navigation import declared_pages, ensure_app_navigation
from views.text import escape_markdown

ensure_app_navigation()

st.title("Emotion Transcription in Conversation")
st.markdown(
    "Given a Japanese dialogue up to an utterance, a system writes, in natural language, what the "
    "speaker felt or intended at that moment, **as the speaker themselves described it**. "
    "The ETC corpus has 997 dialogues in which every participant wrote such an *emotion "
    "transcription* for each of their utterances; the benchmark asks for all 1,010 utterances "
    "of the 101 test dialogues and scores the predictions against the participants' own words."
)


@st.cache_data(show_spinner=False)
def _stats():
    return corpus_stats()


@st.cache_data(show_spinner=False)
def _example():
    d = example_dialogue()
    return None if d is None else {**d, "utterances": d["utterances"].to_dict("records")}


@st.cache_data(ttl=30, show_spinner=False)
def _top(database: str):
    return top_table(5)


with shown_errors(stop=True):
    stats = _stats()
    example = _example()

cols = st.columns(4)
cols[0].metric("Dialogues", f"{stats['dialogues']:,}")
cols[1].metric("Participants", f"{stats['participants']:,}")
cols[2].metric("Utterances", f"{stats['utterances']:,}")
cols[3].metric("Annotator agreement (Fleiss κ)", f"{stats['kappa_overall']:.2f}")

left, right = st.columns([3, 2], gap="large")
with left:
    if example:
        st.subheader(f"An example from the test split: dialogue {example['dialogue_id']}")
        st.caption(
            f"Dialogue emotion given to the pair: {escape_markdown(example['dialogue_emotion'])}. "
            "A opens the dialogue (speaker role), B answers (listener role). Under each "
            "utterance: what its author wrote they felt, and the annotators' label."
        )
        show_dialogue(example["utterances"])

with right:
    st.subheader("Top of the leaderboard")
    with shown_errors():
        top, metric = _top(database_key())
        if top.empty:
            st.info("No scored submission yet: be the first on the Submit page.")
        else:
            st.caption(f"Ranked by {metric} (×100). Reported rows are the paper's own numbers.")
            st.dataframe(top, hide_index=True, width="stretch")
    st.subheader("Explore")
    for page in declared_pages():  # as streamlit_app.py declared them
        if page.path != "pages/home.py":
            st.page_link(page.path, label=page.title, icon=page.icon, help=page.blurb)
            st.caption(page.blurb)
