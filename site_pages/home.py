"""Home: what the ETC task is, a real corpus dialogue, the top of the leaderboard, every page."""

import streamlit as st

from views import charts, corpus_key, corpus_stats, example_dialogue, fields
from views.board import (
    chart_table,
    database_key,
    floor_values_of,
    honesty_note,
    metric_label,
    top_table,
    trivial_warning,
)
from views.dialogue import show_dialogue
from views.errors import shown_errors
from views.navigation import declared_pages
from views.text import escape_markdown

st.title("Emotion Transcription in Conversation")
st.markdown(
    "Given a Japanese dialogue up to an utterance, a system writes, in natural language, what the "
    "speaker felt or intended at that moment, **as the speaker themselves described it**. "
    "The ETC corpus has 997 dialogues in which every participant wrote such an *emotion "
    "transcription* for each of their utterances; the benchmark asks for all 1,010 utterances "
    "of the 101 test dialogues and scores the predictions against the participants' own words."
)


@st.cache_data(show_spinner=False, max_entries=4)
def _stats(corpus: str):  # corpus: the cache key (views.corpus_key)
    return corpus_stats()


@st.cache_data(show_spinner=False, max_entries=4)
def _example(corpus: str):
    d = example_dialogue()
    return None if d is None else {**d, "utterances": d["utterances"].to_dict("records")}


@st.cache_data(show_spinner=False, max_entries=4)
def _top(database: str, version: str):
    # Cached per board version: a new score or submission changes ``version``.
    import leaderboard as lb

    ranking = lb.ranking()
    top, metric = top_table(5)
    floors = floor_values_of(ranking, metric)
    bars = chart_table(ranking.head(5), metric)
    return top, metric, honesty_note(ranking), floors, len(ranking), trivial_warning(ranking), bars


@st.cache_resource(show_spinner=False, max_entries=4)
def _top_chart(database: str, version: str, title: str):
    # Built once per board version and shared by every visitor.
    _, metric, _, floors, _, _, bars = _top(database, version)
    return charts.spec(charts.score_bars(bars, metric, floors, title=title))


with shown_errors(stop=True):
    corpus = corpus_key()
    stats = _stats(corpus)
    example = _example(corpus)

board = None
with shown_errors():
    import leaderboard as lb

    version = lb.board_version()
    board = _top(database_key(), version)
if board is not None and board[2]:
    st.warning(board[2] + " See the Leaderboard and About pages.", icon="⚠️")
if board is not None and board[5]:
    st.warning(board[5], icon="⚠️")

cols = st.columns(4)
cols[0].metric("Dialogues", f"{stats['dialogues']:,}")
cols[1].metric("Participants", f"{stats['participants']:,}")
cols[2].metric("Utterances", f"{stats['utterances']:,}")
cols[3].metric("Annotator agreement (Fleiss κ)", f"{stats['kappa_overall']:.2f}")

st.subheader("Top of the leaderboard")
if board is not None:
    top, metric, _, floors, n_entries, _, bars = board
    if top.empty:
        st.info("No scored entry yet: be the first on the Submit page.")
    else:
        label = metric_label(metric)
        floor_text = ", ".join(f"{name} {value:.2f}" for name, value in floors.items())
        st.caption(
            f"The first {len(top)} of {n_entries} entries scored by this site, ranked by "
            f"{label} (×100)."
            + (f" Trivial baselines (floors): {floor_text}." if floor_text else "")
            + " The paper's reported numbers are on the Leaderboard page, apart."
        )
        table, chart = st.columns([3, 2], gap="large")
        # a static table: whole names, wrapped on a phone (a data grid cuts them)
        table.table(top.rename(columns=fields.label), hide_index=True)
        chart.vega_lite_chart(
            _top_chart(database_key(), version, f"Top {len(top)}: {label} (×100)"),
            key="home_top_chart",
        )

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
    st.subheader("Explore")
    for page in declared_pages():  # as streamlit_app.py declared them
        if page.path != "site_pages/home.py" and not page.hidden:
            st.page_link(page.path, label=page.title, icon=page.icon, help=page.blurb)
            st.caption(page.blurb)
