"""Corpus: search and filter the ETC utterances, open a dialogue, and see the statistics."""

import streamlit as st

from views import charts, corpus_stats, corpus_store
from views import corpus as cq
from views.errors import shown_errors
from views.navigation import ensure_app_navigation
from views.text import escape_markdown

ensure_app_navigation()

st.title("The ETC corpus")
st.caption(
    "997 Japanese dialogues of 10 utterances (CC BY-NC 4.0). Every utterance has its author's "
    "emotion transcription and three annotators' labels; A is the speaker role, B the listener."
)


@st.cache_data(show_spinner=False)
def _choices() -> cq.FilterChoices:
    return cq.filter_choices(corpus_store())


@st.cache_data(show_spinner=False, max_entries=512)
def _search(filters, page: int):
    return cq.search_page(corpus_store(), filters, page)


@st.cache_data(show_spinner=False, max_entries=256)
def _dialogue(dialogue_id: int):
    return cq.dialogue_view(corpus_store(), dialogue_id)


@st.cache_data(show_spinner=False)
def _stats():
    con = corpus_store()
    return corpus_stats(), cq.utterance_lengths(con), cq.big_five_scores(con)


with shown_errors(stop=True):
    choices = _choices()

view = st.segmented_control(
    "View",
    ["Browse", "Statistics"],
    default="Browse",
    key="corpus_view",
    label_visibility="collapsed",
    bind="query-params",
)

if view == "Statistics":
    with shown_errors(stop=True):
        stats, lengths, big_five = _stats()
    m = st.columns(4)
    m[0].metric("Mean utterance length", f"{stats['utterance_chars']['all']:.1f} chars")
    m[1].metric("Mean transcription length", f"{stats['transcription_chars']['all']:.1f} chars")
    m[2].metric("Fleiss κ (pooled)", f"{stats['kappa_overall']:.2f}")
    m[3].metric("Multi-label share", f"{stats['multi_label_share']:.1f}%")
    left, right = st.columns(2)
    left.plotly_chart(charts.prevalence_chart(cq.prevalence_table(stats)), key="chart_prevalence")
    right.plotly_chart(
        charts.cooccurrence_heatmap(cq.cooccurrence_matrix(stats)), key="chart_cooccurrence"
    )
    left.plotly_chart(charts.kappa_chart(cq.kappa_table(stats)), key="chart_kappa")
    right.plotly_chart(charts.big_five_chart(big_five), key="chart_big_five")
    st.plotly_chart(charts.length_histograms(lengths), key="chart_lengths")
else:
    text = st.text_input(
        "Search utterances and transcriptions (literal text)",
        key="corpus_text",
        max_chars=cq.MAX_QUERY_CHARS,
        placeholder="例: 嬉しい",
    )
    c1, c2, c3, c4 = st.columns(4)
    split = c1.selectbox("Split", choices.splits, index=None, key="corpus_split", placeholder="any")
    role = c2.selectbox("Role", choices.roles, index=None, key="corpus_role", placeholder="any")
    emotion = c3.selectbox(
        "Dialogue emotion",
        choices.dialogue_emotions,
        index=None,
        key="corpus_emotion",
        placeholder="any",
    )
    agreement = c4.selectbox(
        "Annotators' agreement",
        choices.agreement,
        index=None,
        key="corpus_agreement",
        placeholder="any",
        help="unanimous: the three label sets are identical; majority: some category has two "
        "or three votes; none: no category has two votes.",
    )
    categories = st.multiselect(
        "Aggregated label has all of", choices.categories, key="corpus_categories"
    )
    with st.expander("Personality of the utterance's author (TIPI-J Big Five, 2–14)"):
        cols = st.columns(len(choices.big_five))
        ranges = {
            trait: col.slider(
                trait, *cq.BIG_FIVE_RANGE, cq.BIG_FIVE_RANGE, key=f"corpus_b5_{trait}"
            )
            for trait, col in zip(choices.big_five, cols)
        }

    with shown_errors(stop=True):
        filters = cq.make_filters(text, split, role, emotion, categories, agreement, ranges)
        first, total = _search(filters, 1)
    pages = cq.page_count(total)
    st.markdown(f"**{total:,}** matching utterances")
    page = 1
    if pages > 1:
        page = st.pagination(pages, key=f"corpus_page_{cq.filters_key(filters)}")
    results = first if page == 1 else _search(filters, page)[0]
    if total:
        st.dataframe(
            results,
            hide_index=True,
            width="stretch",
            key="corpus_results",
            column_config={
                "dialogue_id": st.column_config.NumberColumn("dialogue", format="%d"),
                "utterance": st.column_config.TextColumn(width="large"),
                "transcription": st.column_config.TextColumn(width="large"),
            },
        )
    else:
        st.info("No utterance matches these filters.")

    st.subheader("Open a dialogue")
    default_id = int(results["dialogue_id"].iloc[0]) if total else 1
    dialogue_id = st.number_input(
        "Dialogue id",
        min_value=1,
        max_value=9999,
        value=default_id,
        step=1,
        key="corpus_dialogue",
        bind="query-params",
    )
    view = _dialogue(int(dialogue_id))
    if view is None:
        st.warning(f"There is no dialogue {int(dialogue_id)} in the public corpus.")
    else:
        st.markdown(
            f"**Dialogue {view['dialogue_id']}** · {view['split']} split · dialogue emotion: "
            f"{escape_markdown(view['dialogue_emotion'])}"
        )
        st.dataframe(
            view["utterances"],
            hide_index=True,
            width="stretch",
            key="corpus_dialogue_view",
            column_config={
                "utterance": st.column_config.TextColumn(width="large"),
                "transcription": st.column_config.TextColumn(width="large"),
            },
        )
        st.caption("Participants (TIPI-J Big Five scores, 2–14)")
        st.dataframe(view["participants"], hide_index=True, key="corpus_participants")
