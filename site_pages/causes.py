"""Emotion causes: people mark which utterances a transcription's state comes from (RECCON);
agreement among people, an LLM run and the lexical proxy (docs/causes.md)."""

import pandas as pd
import streamlit as st

from etclib.core.jsonl import dumps_line
from etclib.data.corpus import load_corpus
from etclib.studies import annotation, causes
from views import annotators, charts
from views import causes as cv
from views.docs import doc_link
from views.errors import shown_errors
from views.judge_vs_human import NONE_RUN, number
from views.navigation import link_to


@st.cache_resource(show_spinner=False)
def _corpus():
    return load_corpus()


@st.cache_data(show_spinner=False, ttl=30)
def _runs(db: str) -> pd.DataFrame:
    return causes.list_runs(db=db)


@st.cache_data(show_spinner="Computing agreement…", ttl=10)
def _agreement(db: str, run_id: str | None) -> causes.CauseAgreement:
    return causes.cause_agreement(_corpus(), run_id, db=db)


@st.cache_data(show_spinner=False)
def _proxy_share() -> dict:
    return causes.proxy_share(_corpus().utterances)


st.title("Emotion causes")
st.markdown(
    "Where does the state in an emotion transcription come from? After RECCON (Poria et al., "
    "*Recognizing Emotion Cause in Conversations*), each item gets the set of utterances, up to "
    "and including its own, that the transcription is about, and a **cause type** derived from "
    "it: **no-context** (only the target utterance), **inter-personal** (the partner's "
    "utterances), **self-contagion** (the author's own earlier utterances), **hybrid** (both), "
    "**latent** (not in the dialogue). More in "
    + doc_link("causes.md", "how causes are defined and annotated")
    + "."
)

DB = str(annotation.studies_path())
with shown_errors(stop=True):
    corpus = _corpus()

# Only the open tab runs (on_change="rerun"): a visit builds no agreement and draws no chart.
tab_annotate, tab_results = st.tabs(list(cv.TABS), key="causes_tab", on_change="rerun")

if tab_annotate.open:
    with tab_annotate:
        code = ""
        if annotators.issued(DB) == 0:  # a fresh install: no code can open the box
            st.info(annotators.without_annotators("causes"))
            st.markdown(annotators.INSTEAD["causes"])
            link_to(annotators.JUDGE_VS_HUMAN, "Judge vs Human", "⚖️")
        else:
            code = st.text_input(
                "Annotator code",
                type="password",
                key="causes_code",
                help="The same codes as the Judge vs Human study; given by the maintainers.",
            )
        annotator = None
        if code:
            with shown_errors():
                annotator = annotation.annotator_for_code(code)
        saved = st.session_state.pop("causes_saved", None)
        if saved:
            st.success(saved)
        if annotator:
            key, done, total = None, 0, 0
            with shown_errors():
                done, total = causes.progress(code)
                key = causes.next_item(code)
            st.progress(
                min(done / total, 1.0) if total else 0.0, text=f"{done} of {total} answered"
            )
            if key is None:
                st.success(
                    "Nothing left for you in the sample (every item you have not answered has its "
                    "three annotators): thank you."
                )
            else:
                dialogue = corpus.by_id[key[0]]
                rows = cv.candidates(dialogue, key[1], key[2])
                target = rows[-1]
                st.caption(
                    f"Dialogue {key[0]} · turn {key[1]} · {key[2]} ({target['letter']}) · "
                    f"prompt emotion: {dialogue.dialogue_emotion}"
                )
                st.markdown(
                    f"**Emotion transcription** that {target['letter']} wrote for utterance "
                    f"[{target['position']}]:"
                )
                item = next(u for u in dialogue.utterances if u.key == key)
                st.info(item.transcription)
                st.markdown(
                    "Tick every utterance this state is **about** (what was felt about or in response "
                    "to), the target included; or tick *not in the dialogue*."
                )
                stem = f"causes_pick_{key[0]}_{key[1]}_{key[2]}"
                ticked = [
                    c["position"]
                    for c in rows
                    if st.checkbox(cv.candidate_label(c), key=f"{stem}_{c['position']}")
                ]
                latent = st.checkbox(
                    "Not in the dialogue (latent: the cause is mentioned nowhere above)",
                    key=f"{stem}_latent",
                )
                problem = None
                if ticked and latent:
                    problem = "Either tick utterances or 'not in the dialogue', not both."
                elif not ticked and not latent:
                    problem = "Tick at least one utterance, or 'not in the dialogue'."
                if st.button("Save causes", key="causes_submit", disabled=problem is not None):
                    with shown_errors():
                        stored = causes.record_causes(code, key, [] if latent else ticked)
                        _agreement.clear()
                        st.session_state["causes_saved"] = (
                            f"Saved item {key[0]}/{key[1]}/{key[2]}: {stored.cause_type}."
                        )
                        st.rerun()
                if problem:
                    st.caption(problem)

if tab_results.open:
    with tab_results:
        runs = pd.DataFrame()
        with shown_errors():
            runs = _runs(DB)
        names = cv.run_names(runs)
        run_id = st.selectbox(
            "LLM run",
            list(names),
            index=1 if len(names) > 1 else 0,
            format_func=names.get,
            key="causes_run",
            help="Runs are made by the site's operator: "
            + doc_link("causes.md#labelling-with-an-llm", "labelling with an LLM")
            + ".",
        )
        run = None if run_id == NONE_RUN else run_id
        if run:
            chosen = runs[runs["run_id"] == run].iloc[0]
            st.caption(
                f"Signature: `{chosen['signature']}` · {chosen['n_failed']} unusable answers"
            )
        result = None
        with shown_errors():
            result = _agreement(DB, run)
        share = _proxy_share()
        st.metric(
            "Proxy: transcriptions that refer to the partner",
            f"{share['share']:.1f}%",
            help=(
                "A first, lexical approximation of inter-personal causes (相手, あいて, あなた, and "
                "the partner's role noun), over all 9,970 transcriptions: "
                f"speaker {share['speaker']:.1f}%, listener {share['listener']:.1f}%."
            ),
        )
        if result is None or result.empty:
            st.info(
                "No human cause labels yet: agreement appears here once annotators have answered."
            )
        else:
            cols = st.columns(4)
            cols[0].metric("Answers", f"{result.n_answers}")
            cols[1].metric("Items with 3 answers", f"{result.n_complete} of {result.n_items}")
            cols[2].metric("Annotators", f"{result.n_annotators}")
            table = result.table.set_index("decision")
            cols[3].metric(
                "People: α on cause utterances",
                number(table.loc["cause utterance", "humans"]),
                help="Krippendorff's α (nominal) over (target, candidate) cause yes/no decisions",
            )
            st.dataframe(
                cv.agreement_table(result.table, run is not None, True),
                hide_index=True,
                key="causes_agreement_table",
            )
            st.caption(
                "Cause utterance: Krippendorff's α over every answer; cause type and partner "
                "involved: Fleiss' κ over items with three answers. The yardstick puts each answer "
                "slot against the other two's consensus; the LLM and the proxy are set against the "
                "majority (2 of 3) and the same consensuses. The proxy row is a lexical "
                "approximation (does the transcription refer to the partner?)."
            )
            pair_f1 = cv.pair_f1_table(result.pair_f1)
            if not pair_f1.empty:
                st.dataframe(pair_f1, hide_index=True, key="causes_pair_f1_table")
                st.caption(cv.PAIR_F1_NOTE)
            left, right = st.columns(2)
            if result.type_confusion is not None:
                left.vega_lite_chart(
                    charts.spec(
                        charts.count_heatmap(
                            result.type_confusion, "Human majority × LLM cause type"
                        )
                    ),
                    key="causes_type_confusion",
                )
            if result.proxy_confusion is not None:
                right.vega_lite_chart(
                    charts.spec(
                        charts.count_heatmap(result.proxy_confusion, "Partner involved × proxy")
                    ),
                    key="causes_proxy_confusion",
                )
        llm_dist = human_dist = None
        with shown_errors():
            llm_dist = causes.type_distribution("llm", run_id=run, db=DB) if run else None
            human_dist = causes.type_distribution("human", db=DB)
        st.subheader("Cause-type shares beside RECCON's")
        shares = cv.shares_table(llm_dist, human_dist)
        if not (llm_dist or human_dist):
            st.info(cv.SHARES_PENDING)
        chart, table = st.columns([3, 2])
        chart.vega_lite_chart(charts.spec(charts.shares_bars(shares)), key="causes_shares_chart")
        table.dataframe(shares, hide_index=True, key="causes_shares_table")
        table.caption(
            "Shares (%) over type labels, counted as RECCON's Table 2 counts them: an item whose "
            "causes include its own utterance and context carries two labels (no-context and the "
            "context's type)."
        )
        st.download_button(
            "Download the cause layer (JSONL, CC BY-NC 4.0)",
            "\n".join(dumps_line(r) for r in causes.export_records(db=DB)),
            file_name="etc_causes.jsonl",
            mime="application/jsonl",
            key="causes_export",
        )
