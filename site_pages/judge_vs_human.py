"""Judge versus human: LLM judges beside people, and people beside each other.

Three studies (docs/judge_vs_human.md, for maintainers): emotion categories (an LLM labels transcriptions like
ETC's annotators), atomic-unit decisions (people re-check the scoring judge), Likert ratings
(uploaded LLM and human ratings, with EmplifAI's published comparison); and how the scoring
judge compares with the paper's (`etclib judge calibrate`, docs/judge.md).
"""

from pathlib import Path

import pandas as pd
import streamlit as st

from etclib.data.corpus import load_corpus
from etclib.studies import annotation, judge_calibration, labeljudge, ratings
from views import annotators, charts
from views import judge_vs_human as jvh
from views.errors import shown_errors

RESAMPLES = 300  # bootstrap resamples for the site's intervals (the CLI uses 1000)


@st.cache_resource(show_spinner=False)
def _corpus():
    return load_corpus()


@st.cache_data(show_spinner=False, ttl=30)
def _runs(db: str) -> pd.DataFrame:
    return labeljudge.list_runs(db=db)


@st.cache_data(show_spinner="Computing agreement…")
def _label_study(db: str, split: str, run_id: str | None, signature: str) -> labeljudge.LabelStudy:
    # ``signature`` is part of the cache key so a replaced run is recomputed.
    return labeljudge.label_study(_corpus(), split, run_id, n_resamples=RESAMPLES, db=db)


@st.cache_data(show_spinner=False, ttl=10)
def _submissions(db: str) -> pd.DataFrame:
    return annotation.submissions(db=db)


@st.cache_data(show_spinner=False, ttl=10)
def _annotation_results(db: str, submission_id: str | None) -> annotation.AnnotationResults:
    return annotation.results(submission_id, n_resamples=RESAMPLES, db=db)


@st.cache_data(show_spinner=False, ttl=30)
def _calibrations(db: str) -> pd.DataFrame:
    return judge_calibration.list_runs(db=db)


@st.cache_data(show_spinner=False)
def _emplifai(folder: str) -> ratings.EmplifAI | None:
    return ratings.load_emplifai(Path(folder) / ratings.EMPLIFAI_FILE)


@st.cache_resource(show_spinner=False)
def _emplifai_chart(folder: str):
    # Published figures: one chart per server, shared.
    return charts.spec(
        charts.identity_scatter(
            _emplifai(folder).table,
            "human_mean",
            "llm_mean",
            "system",
            "Mean score per system and metric (judge vs people)",
            1.0,
            5.0,
        )
    )


st.title("Judge versus human")
st.markdown(
    "How far can an LLM judge stand in for people? Each study puts the judge's agreement with "
    "people beside **the human yardstick**: how well people agree with each other on the same "
    "task. A judge that agrees with people about as well as they agree among themselves is as "
    "good a rater as a person."
)
with st.expander("Definitions"):
    st.markdown(jvh.DEFINITIONS)

DB = str(annotation.studies_path())  # part of every cache key: one cache per database
with shown_errors(stop=True):
    corpus = _corpus()

# Only the open tab runs (on_change="rerun"): a visit draws one study, not three.
tab_labels, tab_units, tab_ratings, tab_calibration = st.tabs(
    list(jvh.TABS), key="jvh_tab", on_change="rerun"
)

# --- study 1 ---------------------------------------------------------------------------------
if tab_labels.open:
    with tab_labels:
        st.header("Study 1: emotion categories")
        st.markdown(
            "ETC's three annotators labelled every emotion transcription with seven categories "
            "(multi-label). An LLM, the judge, is asked to do the same. Per category: Cohen's κ "
            "of the judge against the human majority (≥ 2 of 3), the judge against each pair of "
            "annotators' consensus (both chose it), each annotator against the other two's consensus "
            "(the yardstick), and Fleiss' κ of the three annotators with and without the judge."
        )
        runs = pd.DataFrame()
        with shown_errors():
            runs = _runs(DB)
        run_names = jvh.run_names(runs)
        run_id = st.selectbox(
            "Judge run",
            list(run_names),
            format_func=run_names.get,
            key="jvh_run",
            help=f"Runs are made by the benchmark's maintainers: {jvh.HOW_LINK}.",
        )
        if runs.empty:
            st.info(
                "No judge run is stored yet, so only the human yardstick is shown. The "
                f"benchmark's maintainers add one ({jvh.HOW_LINK})."
            )
        chosen = (
            None if run_id == jvh.NONE_RUN else runs[runs["run_id"] == run_id].iloc[0].to_dict()
        )
        if chosen is None:
            split = st.selectbox("Split", ["test", "valid", "train", "all"], key="jvh_split")
        else:
            split = chosen["split"]
            st.caption(
                f"Signature: `{chosen['signature']}` · {chosen['n_failed']} unusable answers"
            )
        study = None
        with shown_errors():
            study = _label_study(
                DB,
                split,
                None if chosen is None else run_id,
                "" if chosen is None else chosen["signature"],
            )
        if study is not None:
            title = f"Agreement per category ({study.n_items} transcriptions, {study.split})"
            # Only the open tab is drawn: a visit draws no chart.
            as_table, as_chart = st.tabs(
                list(jvh.LABEL_VIEWS), key="jvh_label_view", on_change="rerun"
            )
            if as_table.open:
                with as_table:
                    st.caption(title)
                    st.dataframe(
                        jvh.label_table(study.table, chosen is not None),
                        hide_index=True,
                        key="jvh_label_table",
                    )
            if as_chart.open:
                with as_chart:
                    st.vega_lite_chart(
                        charts.spec(charts.agreement_bars(study.table, chosen is not None, title)),
                        key="jvh_label_bars",
                    )
            with st.expander("The yardstick per annotator"):
                st.dataframe(
                    jvh.yardstick_table(study.yardstick), hide_index=True, key="jvh_yardstick_table"
                )
                st.caption(
                    "Annotator slots 1–3 as stored in the corpus. The other two's consensus counts a "
                    "category as chosen only when both chose it."
                )
            if study.confusion is not None:
                left, right = st.columns(2)
                left.vega_lite_chart(
                    charts.spec(
                        charts.count_heatmap(
                            study.confusion, "Human majority × judge (multi-label co-occurrence)"
                        )
                    ),
                    key="jvh_label_confusion",
                )
                category = right.selectbox("Category", list(study.binary), key="jvh_label_category")
                right.vega_lite_chart(
                    charts.spec(
                        charts.count_heatmap(study.binary[category], f"{category}: chosen or not")
                    ),
                    key="jvh_label_binary",
                )

# --- study 2 ---------------------------------------------------------------------------------
if tab_units.open:
    with tab_units:
        st.header("Study 2: atomic-unit decisions")
        st.markdown(
            "The scoring judge decides, for each atomic unit of inner state and a target "
            "transcription, **Supported / Neutral / Not Supported**. Every time the leaderboard "
            "scores a submission with the judge, its decisions are stored here and a seeded sample "
            f"of up to {jvh.auto_per_stratum()} per judge label and side (a unit of the "
            "prediction checked against the reference, or the reverse) joins the pool. People "
            "with an annotator code re-check them; the judge's answer is shown only after theirs, "
            "and each decision is given to two people before a third."
        )
        pool = None
        with shown_errors():
            pool = annotation.pool(db=DB)  # one cheap query: always current
        if pool is not None:
            cols = st.columns(4)
            cols[0].metric("Decisions in the pool", f"{pool['sampled']:,}")
            cols[1].metric(
                "Waiting for answers",
                f"{pool['waiting']:,}",
                help=f"Sampled decisions with fewer than {annotation.ANSWERS_PER_DECISION} answers",
            )
            cols[2].metric("Answers given", f"{pool['answers']:,}")
            cols[3].metric("Annotators who answered", f"{pool['annotators']:,}")
        subs = pd.DataFrame()
        with shown_errors():
            subs = _submissions(DB)
        sub_options = ["all"] + (subs["submission_id"].tolist() if not subs.empty else [])
        submission = st.selectbox("Submission", sub_options, key="jvh_submission")
        submission_id = None if submission == "all" else submission
        if subs.empty:
            st.info(
                "No judge decisions are stored yet: they arrive when the leaderboard scores a "
                "submission with the LLM judge, which this site does only when a judge provider "
                "is configured."
            )

        st.subheader("Annotate")
        code = ""
        if annotators.issued(DB) == 0:  # a fresh install: no code can open the box
            st.info(annotators.without_annotators("units"))
            st.markdown(annotators.INSTEAD["units"])
        else:
            code = st.text_input(
                "Annotator code",
                type="password",
                key="jvh_code",
                help="Codes are given by the benchmark's maintainers.",
            )
        known = False
        if code:
            with shown_errors():
                known = annotation.annotator_for_code(code) is not None
        if not known:
            code = ""
        if code:
            revealed = st.session_state.get("jvh_revealed")
            if revealed:
                text = f"You answered **{revealed['answer']}**; the judge said **{revealed['judge']}**."
                (st.success if revealed["answer"] == revealed["judge"] else st.warning)(text)
                if st.button("Next unit", key="jvh_next"):
                    del st.session_state["jvh_revealed"]
                    st.rerun()
            else:
                decision, done, total = None, 0, 0
                with shown_errors():
                    done, total = annotation.progress(code, submission_id)
                    decision = annotation.next_decision(code, submission_id)
                st.progress(done / total if total else 0.0, text=f"{done} of {total} answered")
                if decision is None:
                    st.success("Nothing left to check in this sample: thank you.")
                else:
                    side = "prediction" if decision.side == "precision" else "reference"
                    other = "reference" if decision.side == "precision" else "prediction"
                    st.caption(
                        f"Item {decision.dialogue_id}/{decision.turn}/{decision.role} · a unit of the {side}"
                    )
                    st.markdown("**Unit**")
                    st.text(decision.unit)
                    st.markdown(f"**Target transcription** (the {other})")
                    st.text(decision.target)
                    answer = st.radio(
                        "Is the unit supported by the target, by its surface content only?",
                        annotation.LABELS,
                        index=None,
                        key=f"jvh_answer_{decision.decision_id}",
                    )
                    if st.button("Submit answer", key="jvh_submit", disabled=answer is None):
                        with shown_errors():
                            stored = annotation.record_answer(code, decision.decision_id, answer)
                            st.session_state["jvh_revealed"] = {
                                "answer": answer,
                                "judge": stored.label,
                            }
                            _annotation_results.clear()
                            _submissions.clear()
                            st.rerun()

        st.subheader("Results")
        res = None
        with shown_errors():
            res = _annotation_results(DB, submission_id)
        if res is not None and res.empty:
            st.info("No answers yet: agreement appears here once annotators have answered.")
        elif res is not None:
            cols = st.columns(4)
            cols[0].metric(
                "Answers",
                f"{res.n_answers}",
                help=f"{res.n_decisions} decisions, {res.n_annotators} annotators",
            )
            cols[1].metric(
                "Judge–human κ",
                jvh.number(res.judge_human_kappa),
                help=f"95% CI {jvh.interval(res.judge_human_kappa, res.judge_human_low, res.judge_human_high)}",
            )
            cols[2].metric(
                "Human–human κ",
                jvh.number(res.human_human_kappa),
                help=f"Fleiss' κ on the first two answers of {res.n_double} decisions",
            )
            cols[3].metric(
                "Human–human α", jvh.number(res.human_human_alpha), help="Krippendorff's α, nominal"
            )
            left, right = st.columns(2)
            left.vega_lite_chart(
                charts.spec(charts.count_heatmap(res.confusion, "Judge × human answers")),
                key="jvh_unit_confusion",
            )
            with right:
                st.markdown("**If people's labels replaced the judge's on re-checked units**")
                st.dataframe(
                    jvh.unit_metrics_table(res.metrics), hide_index=True, key="jvh_unit_metrics"
                )
            st.download_button(
                "Download answers (CSV)",
                annotation.export_csv(submission_id),
                file_name="judge_vs_human_answers.csv",
                mime="text/csv",
                key="jvh_export",
            )

# --- study 3 ---------------------------------------------------------------------------------
if tab_ratings.open:
    with tab_ratings:
        st.header("Study 3: Likert ratings")
        st.markdown(
            "Upload a CSV of ratings with columns `item, system, metric, rater_kind, rater_id, score` "
            "(`rater_kind` is `llm` or `human`). Per system and metric: LLM and human means side by "
            "side, Pearson's r with its p-value and 95% interval, and the mean absolute difference. "
            "Where one side gave every item the same score, r is undefined and the constant and the "
            "mean absolute difference are shown instead."
        )
        st.download_button(
            "Example CSV",
            ratings.EXAMPLE_CSV,
            file_name="ratings_example.csv",
            mime="text/csv",
            key="jvh_ratings_example",
        )
        upload = st.file_uploader("Ratings CSV", type=["csv"], key="jvh_ratings_upload")
        rated = None
        if upload is not None:
            with shown_errors():  # the message lists the file's problems line by line
                rated = ratings.parse_ratings(upload.getvalue(), upload.name)
        if rated is not None:
            compared = ratings.compare_ratings(rated)
            st.dataframe(jvh.ratings_table(compared), hide_index=True, key="jvh_ratings_table")
            pairs = compared[["system", "metric"]].to_records(index=False).tolist()
            pick = st.selectbox(
                "System and metric",
                pairs,
                format_func=lambda p: f"{p[0]} · {p[1]}",
                key="jvh_ratings_pick",
            )
            points = ratings.paired_scores(rated, *pick)
            lo = float(min(points["llm"].min(), points["human"].min()))
            hi = float(max(points["llm"].max(), points["human"].max()))
            st.vega_lite_chart(
                charts.spec(
                    charts.identity_scatter(
                        points, "human", "llm", None, f"{pick[0]} · {pick[1]}: per item", lo, hi
                    )
                ),
                key="jvh_ratings_scatter",
            )

        st.subheader(
            "For comparison, another dataset: EmplifAI (Gemini-2.5-Flash judge vs crowd workers)"
        )
        st.info(
            "No Likert ratings of ETC predictions are published yet, so the figures below are "
            "**not ETC's**: they come from EmplifAI, a different dataset of empathetic dialogue "
            "responses, whose paper compared an LLM judge with crowd workers. They show how such a "
            "comparison reads; your own upload above is the ETC study."
        )
        emplifai = None
        with shown_errors():
            emplifai = _emplifai(str(ratings.reference_dir()))
        if emplifai is None:
            st.info(
                "The EmplifAI reference figures are not installed on this site, so the published "
                f"comparison cannot be shown ({jvh.HOW_LINK})."
            )
        else:
            st.caption(f"{emplifai.source} {emplifai.setting}")
            st.vega_lite_chart(
                _emplifai_chart(str(ratings.reference_dir())), key="jvh_emplifai_scatter"
            )
            st.dataframe(
                jvh.emplifai_table(emplifai.table), hide_index=True, key="jvh_emplifai_table"
            )
            st.markdown(f"**Constant rule.** {emplifai.constant_rule}")
            st.caption(
                "*Printed in place of r* and *printed mean absolute difference*: what the paper "
                "printed where r is undefined. That difference equals 5 minus the printed value, "
                "which is what the rule gives when the judge always says 5; but the printed values "
                "differ from Table 5's human means, from which the rule gives *5 − people's mean*."
            )
            st.markdown(f"**Finding.** {emplifai.finding}  \n*p-values:* {emplifai.p_note}")

# --- study 4 ---------------------------------------------------------------------------------
if tab_calibration.open:
    with tab_calibration:
        st.header("Study 4: how this judge compares with the paper's")
        st.markdown(
            "The paper's judge (Gemini-2.5-Flash with the paper's prompts) finds **1.35 (SD 0.64)** "
            "atomic units per test reference (Table 3). A calibration run decomposes the "
            "test references with a judge and prompt set and puts its mean beside the paper's, "
            "with a verdict: close when the difference is at most 0.2 of the paper's SD, somewhat "
            "off up to 0.5, far beyond. Two checks go with it: references judged against "
            "themselves (F1 near 100) and against another dialogue's reference (F1 near 0)."
        )
        runs = pd.DataFrame()
        with shown_errors():
            runs = _calibrations(DB)
        if runs.empty:
            st.info(
                f"No calibration is stored yet: the benchmark's maintainers run one ({jvh.HOW_LINK})."
            )
        else:
            names = jvh.calibration_names(runs)
            run_id = st.selectbox(
                "Calibration run", list(names), format_func=names.get, key="jvh_calibration"
            )
            report = jvh.calibration_report(runs, run_id)
            st.caption(f"Signature: `{report['signature']}`")
            st.dataframe(
                jvh.calibration_table(report), hide_index=True, key="jvh_calibration_table"
            )

st.subheader("How these studies are made", anchor=jvh.HOW_ANCHOR)
st.markdown(jvh.HOW_MADE)
