"""Operator: moderation, annotator codes and annotation samples, declared only where an admin token
is configured; every action checks the token again (:func:`views.admin.admin_session`)."""

import streamlit as st

import leaderboard as lb
from etclib.core import admintoken
from etclib.data.corpus import SPLITS, load_corpus
from etclib.studies import annotation, causes
from views.admin import admin_session, moderation_table
from views.errors import shown_errors
from views.judge_vs_human import sample_sizes

st.title("Operator")
token = st.text_input("Admin token", type="password", key="op_token")
if not token:
    st.info("Give the admin token to moderate the board, issue annotator codes and draw samples.")
    st.stop()
with shown_errors(stop=True), admin_session():
    admintoken.verify(token, "operator page")

DB = str(annotation.studies_path())
tab_board, tab_codes, tab_samples = st.tabs(["Moderation", "Annotator codes", "Samples"])

with tab_board:
    submissions = None
    with shown_errors(), admin_session():
        submissions = lb.admin_submissions(token)
    if submissions is not None:
        st.dataframe(moderation_table(submissions), hide_index=True, key="op_submissions")
        ids = submissions["id"].tolist()
        sid = st.selectbox("Entry", ids, index=None, key="op_entry", placeholder="choose an id")
        note = st.text_input("Note for the moderation log", key="op_note")
        actions = {"Hide": lb.hide, "Show again": lb.unhide, "Delete": lb.delete}
        for col, (label, action) in zip(st.columns(len(actions) + 1), actions.items()):
            if col.button(label, key=f"op_{label.lower().replace(' ', '_')}", disabled=not sid):
                with shown_errors(), admin_session():
                    action(sid, token, note)
                    st.success(f"{label}: {sid}.")
    if st.button("Re-run failed jobs", key="op_rerun"):
        with shown_errors(), admin_session():
            st.success(f"Re-queued {len(lb.rerun_failed(token))} failed job(s).")

with tab_codes:
    st.caption("One code opens both studies: Judge vs Human (study 2) and Causes.")
    name = st.text_input("Annotator name (a note for you)", key="op_annotator")
    if st.button("Issue a code", key="op_issue"):
        with shown_errors(), admin_session():
            issued = annotation.issue_code(token, name)
            st.success(f"Code for {issued.annotator_id}; it is shown only once:")
            st.code(issued.code, language=None)
    with shown_errors():
        st.dataframe(annotation.annotators(db=DB), hide_index=True, key="op_annotators")

with tab_samples:
    st.subheader("Judge vs Human: atomic-unit decisions")
    judged = annotation.submissions(db=DB)
    submission = st.selectbox(
        "Judged submission",
        judged["submission_id"].tolist() if not judged.empty else [],
        index=None,
        key="op_units_submission",
        placeholder="no judged submission yet" if judged.empty else "choose one",
    )
    per_label = st.number_input("Units per judge label", 1, 500, 20, key="op_units_per_label")
    if st.button("Draw a sample", key="op_units_draw", disabled=submission is None):
        with shown_errors(), admin_session():
            sizes = annotation.draw_sample(token, submission, int(per_label))
            st.success(f"Sample per judge label: {sample_sizes(sizes)}")
    st.subheader("Causes")
    size = st.number_input("Sample size (items)", 1, 1010, 100, key="op_causes_size")
    split = st.selectbox("Split", SPLITS, index=SPLITS.index("test"), key="op_causes_split")
    if st.button("Draw the cause sample", key="op_causes_draw"):
        with shown_errors(), admin_session():
            n = causes.draw_sample(token, load_corpus(), int(size), split=split)
            st.success(f"The cause sample holds {n} items.")
