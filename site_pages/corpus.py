"""Corpus: search and filter the ETC utterances, open a dialogue, see the statistics, and how the
category classifier reads the transcriptions against the annotators."""

import streamlit as st

from views import cause_layer, charts, corpus_key, corpus_stats, corpus_store
from views import corpus as cq
from views.dialogue import show_dialogue
from views.docs import doc_link
from views.errors import shown_errors
from views.text import escape_markdown, not_found

st.title("The ETC corpus")
st.caption(
    "997 Japanese dialogues of 10 utterances (CC BY-NC 4.0). Every utterance has its author's "
    "emotion transcription and three annotators' labels; A is the speaker role, B the listener."
)


@st.cache_data(show_spinner=False, max_entries=4)
def _choices(corpus: str) -> cq.FilterChoices:  # corpus: the cache key (views.corpus_key)
    return cq.filter_choices(corpus_store())


@st.cache_data(show_spinner=False, max_entries=512)
def _search(corpus: str, filters, page: int):
    return cq.search_page(corpus_store(), filters, page)


@st.cache_data(show_spinner=False, max_entries=256)
def _dialogue(corpus: str, dialogue_id: int):
    return cq.dialogue_view(corpus_store(), dialogue_id)


@st.cache_data(ttl=60, show_spinner=False)
def _cause_types():
    # Every utterance's cause type (human, LLM or proxy); labels change as annotators answer.
    return cause_layer.corpus_cause_types()


@st.cache_data(show_spinner=False, max_entries=64)
def _search_all(corpus: str, filters):
    return cq.search_page(corpus_store(), filters, 1, page_size=20_000)


@st.cache_data(ttl=30, show_spinner=False)
def _corpus_cause_sets():
    # Read at once (two reads), so a dialogue's marks are a lookup; labels change: 30 s.
    return cause_layer.corpus_cause_sets()


def _cause_sets(dialogue_id: int, targets: tuple):
    every = _corpus_cause_sets()
    found = ((t, r, every.get((int(dialogue_id), int(t), str(r)))) for t, r in targets)
    return {(int(t), str(r)): one for t, r, one in found if one is not None}


@st.cache_data(show_spinner="Loading the category classifier (trained once, in seconds)…")
def _classifier(corpus: str):
    return cq.classifier_view()


@st.cache_data(show_spinner=False, max_entries=4)
def _stats(corpus: str):
    con = corpus_store()
    return corpus_stats(), cq.utterance_lengths(con), cq.big_five_scores(con)


@st.cache_resource(show_spinner=False, max_entries=4)
def _stat_figures(corpus: str):
    # Shared by every visitor: building them took most of each visit's server time.
    stats, lengths, big_five = _stats(corpus)
    figures = {
        "chart_prevalence": charts.prevalence_chart(cq.prevalence_table(stats)),
        "chart_cooccurrence": charts.cooccurrence_heatmap(cq.cooccurrence_matrix(stats)),
        "chart_kappa": charts.kappa_chart(cq.kappa_table(stats)),
        "chart_big_five": charts.big_five_chart(big_five),
        "chart_lengths": charts.length_histograms(lengths),
    }
    return {key: charts.spec(figure) for key, figure in figures.items()}


state = st.session_state
corpus = corpus_key()
with shown_errors(stop=True):
    choices = _choices(corpus)

view = st.segmented_control(
    "View",
    ["Browse", "Statistics", "Category classifier"],
    default="Browse",
    key="corpus_view",
    label_visibility="collapsed",
    bind="query-params",
)


# A fragment: a search, filter, page or row choice reruns the browser alone.
@st.fragment
def browse() -> None:
    text = st.text_input(
        "Search utterances and transcriptions (literal text)",
        key="corpus_text",
        placeholder=f"例: 嬉しい (at most {cq.MAX_QUERY_CHARS} characters)",
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
    c5, c6 = st.columns([3, 1])
    categories = c5.multiselect(
        "Aggregated label has all of", choices.categories, key="corpus_categories"
    )
    cause_type = c6.selectbox(
        "Cause type",
        cause_layer.causes.CAUSE_TYPES + ("other",),
        index=None,
        key="corpus_cause_type",
        placeholder="any",
        help="The emotion cause type of the utterance ("
        + doc_link("causes.md", "what a cause type is")
        + "): the human majority "
        "where 2+ annotators marked its causes, else the newest LLM run, else the proxy "
        "(inter-personal when the transcription mentions the partner, other otherwise).",
    )
    with st.expander("Personality of the utterance's author (TIPI-J Big Five, 2–14)"):
        cols = st.columns(len(choices.big_five))
        ranges = {
            trait: col.slider(
                trait, *cq.BIG_FIVE_RANGE, cq.BIG_FIVE_RANGE, key=f"corpus_b5_{trait}"
            )
            for trait, col in zip(choices.big_five, cols)
        }

    results, total = None, 0
    problem = cq.query_problem(text)
    if problem:
        st.warning(problem)
    else:
        with shown_errors(stop=True):
            filters = cq.make_filters(text, split, role, emotion, categories, agreement, ranges)
            if cause_type:
                matched = cause_layer.filter_by_keys(
                    _search_all(corpus, filters)[0],
                    cause_layer.keys_of_type(_cause_types(), cause_type),
                )
                first, total = matched.iloc[: cq.PAGE_SIZE], len(matched)
            else:
                first, total = _search(corpus, filters, 1)
        pages = cq.page_count(total)
        st.markdown(f"**{total:,}** matching utterances")
        page = 1
        results_key = f"{cq.filters_key(filters)}{cause_type or ''}"
        if pages > 1:
            page = st.pagination(pages, key=f"corpus_page_{results_key}")
        if page == 1:
            results = first
        elif cause_type:
            results = matched.iloc[(page - 1) * cq.PAGE_SIZE : page * cq.PAGE_SIZE]
        else:
            results = _search(corpus, filters, page)[0]
        if total:
            st.caption("Select a row (the box at its left) to open its dialogue below.")
            table_key = f"corpus_results_{results_key}_{page}"
            event = st.dataframe(
                results,
                hide_index=True,
                width="stretch",
                key=table_key,
                on_select="rerun",
                selection_mode="single-row",
                row_height=cq.RESULT_ROW_HEIGHT,
                height=cq.RESULT_TABLE_HEIGHT,
                column_config={
                    "dialogue_id": st.column_config.NumberColumn(
                        "dialogue", format="%d", width="small"
                    ),
                    "turn": st.column_config.NumberColumn("turn", format="%d", width="small"),
                    "role": st.column_config.TextColumn("role", width="small"),
                    "label": st.column_config.TextColumn("label", width="small"),
                    "utterance": st.column_config.TextColumn(width=cq.RESULT_TEXT_WIDTH),
                    "transcription": st.column_config.TextColumn(width=cq.RESULT_TEXT_WIDTH),
                    "agreement": st.column_config.TextColumn(width="small"),
                    "split": st.column_config.TextColumn(width="small"),
                    "dialogue_emotion": st.column_config.TextColumn("emotion", width="small"),
                },
            )
            rows = event.selection.rows
            if rows and state.get("corpus_selected") != (table_key, rows[0]):
                # A row was just selected: open its dialogue (the id box below follows).
                state["corpus_selected"] = (table_key, rows[0])
                state["corpus_dialogue"] = int(results["dialogue_id"].iloc[rows[0]])
        else:
            st.info("No utterance matches these filters.")

    st.subheader("Dialogue")
    asked_dialogue = st.query_params.get("corpus_dialogue")  # as the link has it, before the box
    dialogue_id = st.number_input(
        "Dialogue id",
        min_value=1,
        max_value=9999,
        value=None,
        step=1,
        key="corpus_dialogue",
        bind="query-params",
        placeholder="select a result row above, or type an id",
    )
    if dialogue_id is None and asked_dialogue:
        # a link's number the box cannot take: said, and no other dialogue shown in its place
        st.warning(not_found("Dialogue", asked_dialogue, "in the public corpus", "check the link"))
    elif dialogue_id is None and results is not None and total:
        dialogue_id = int(results["dialogue_id"].iloc[0])
        st.caption("The first result's dialogue. Select a row above to open another.")
    if dialogue_id is not None:
        view = _dialogue(corpus, int(dialogue_id))
        if view is None:
            st.warning(
                not_found("Dialogue", int(dialogue_id), "in the public corpus", "check the number")
            )
        else:
            st.markdown(
                f"**Dialogue {view['dialogue_id']}** · {view['split']} split · dialogue emotion: "
                f"{escape_markdown(view['dialogue_emotion'])}"
            )
            st.caption(
                "A opens the dialogue (speaker role), B answers (listener role). Under each "
                "utterance: what its author wrote they felt, the aggregated label and the three "
                "annotators' labels."
            )
            known = {}
            with shown_errors():
                known = _cause_sets(
                    view["dialogue_id"],
                    tuple((int(u["turn"]), str(u["role"])) for u in view["utterances"]),
                )
            targets = {}
            for u in view["utterances"]:
                at = (int(u["turn"]), str(u["role"]))
                targets[cause_layer.target_label(*at, known.get(at))] = at
            target = st.selectbox(
                "Show the emotion causes of",
                list(targets),
                index=None,
                key=f"corpus_cause_target_{view['dialogue_id']}",
                placeholder=(
                    f"{len(known)} of its utterances have causes marked: pick one"
                    if known
                    else "pick an utterance to mark its cause utterances"
                ),
            )
            marks, chosen = {}, None
            if target is not None:
                chosen = targets[target]
                found = known.get(chosen)
                marks = cause_layer.cause_marks(found)
                st.info(escape_markdown(cause_layer.cause_summary(found)))
            show_dialogue(view["utterances"], annotators=True, marks=marks, target=chosen)
            st.caption("Participants (TIPI-J Big Five scores, 2–14)")
            st.dataframe(view["participants"], hide_index=True, key="corpus_participants")


if view == "Category classifier":
    with shown_errors(stop=True):
        clf = _classifier(corpus)
    st.subheader("The category classifier against the annotators")
    st.caption(
        "The transcription classifier of the `category` metric (TF-IDF of MeCab tokens + "
        "one-vs-rest logistic regression, trained on the train split's transcriptions and their "
        "aggregated labels, tuned on the valid split) reads the reference transcription of each "
        f"of the {clf['n_items']:,} {clf['split']} items; here is what it reads against the "
        "annotators' aggregated label (majority of three)."
    )
    per = clf["per_category"]
    m = st.columns(3)
    m[0].metric(f"Macro-F1 on {clf['split']}", f"{per['f1'].mean():.2f}")
    if clf["valid"].get("macro_f1") is not None:
        m[1].metric("Macro-F1 on valid (tuning)", f"{clf['valid']['macro_f1']:.2f}")
    m[2].metric("Categories", f"{len(per)}")
    st.caption(f"Signature: `{clf['signature']}`")
    left, right = st.columns([3, 2])
    left.vega_lite_chart(
        charts.spec(
            charts.count_heatmap(clf["confusion"], "Annotators' label × classifier's reading")
        ),
        key="chart_classifier_confusion",
    )
    right.caption(
        "**The heatmap**: multi-label pair counts. An item counts once in every (annotators' "
        "category, classifier's category) pair of its two label sets, so the diagonal holds the "
        "items where both name the category, and a row can sum to more than its items."
    )
    right.caption(
        "**The table below**: per category, one-vs-rest, the 2×2 confusion of the category's "
        "presence in the two label sets (scikit-learn's multilabel confusion matrix) with "
        "precision, recall and F1 (×100); the macro-F1 above is the mean of the F1 column."
    )
    st.dataframe(
        per,
        hide_index=True,
        width="stretch",
        key="corpus_classifier_per_category",
        column_order=(
            "category",
            "f1",
            "precision",
            "recall",
            "tp",
            "fp",
            "fn",
            "tn",
            "support",
        ),
        column_config={
            "category": st.column_config.TextColumn("category"),
            "f1": st.column_config.NumberColumn("F1", format="%.2f"),
            "precision": st.column_config.NumberColumn("precision", format="%.2f"),
            "recall": st.column_config.NumberColumn("recall", format="%.2f"),
            "tp": st.column_config.NumberColumn("both", help="annotators and classifier"),
            "fp": st.column_config.NumberColumn("classifier only"),
            "fn": st.column_config.NumberColumn("annotators only"),
            "tn": st.column_config.NumberColumn("neither"),
            "support": st.column_config.NumberColumn("items with it (annotators)"),
        },
    )
elif view == "Statistics":
    with shown_errors(stop=True):
        stats = _stats(corpus)[0]
    m = st.columns(4)
    m[0].metric("Mean utterance length", f"{stats['utterance_chars']['all']:.1f} chars")
    m[1].metric("Mean transcription length", f"{stats['transcription_chars']['all']:.1f} chars")
    m[2].metric("Fleiss κ (pooled)", f"{stats['kappa_overall']:.2f}")
    m[3].metric("Multi-label share", f"{stats['multi_label_share']:.1f}%")
    st.subheader("Labels")
    st.caption(
        "Percent of emotion transcriptions whose aggregated label has the category: by the "
        "author's role and over all of them, with the three annotators' agreement (Fleiss' κ). "
        "The same figures as the command line's corpus statistics."
    )
    st.dataframe(
        cq.label_table(stats),
        hide_index=True,
        key="corpus_label_table",
        column_config={
            "category": st.column_config.TextColumn("category"),
            "speaker": st.column_config.NumberColumn("speaker (A) %", format="%.2f"),
            "listener": st.column_config.NumberColumn("listener (B) %", format="%.2f"),
            "all": st.column_config.NumberColumn("all %", format="%.2f"),
            "kappa": st.column_config.NumberColumn("Fleiss κ", format="%.2f"),
        },
    )
    figures = _stat_figures(corpus)
    left, right = st.columns(2)
    for place, key in zip((left, right, left, right, st), figures):
        place.vega_lite_chart(figures[key], key=key)
else:
    browse()
