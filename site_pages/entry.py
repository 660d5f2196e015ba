"""Entry: one entry of a board, its scores, breakdowns and items (``entry?submission=ID``), the
page that a ranking row, a shared link, Submit and the Leaderboard's picker open."""

import functools

import streamlit as st

import leaderboard as lb
from etclib import tracks
from views import board, cause_layer, charts, chat, fields, own_entries
from views.docs import doc_link
from views.errors import shown_errors
from views.navigation import link_to
from views.text import escape_markdown, not_found


@st.cache_data(show_spinner="Computing intervals…", max_entries=64)
def _detail(database: str, submission_id: str, version: str):
    # Per board version: a visitor coming back to an entry does not read its rows again.
    try:
        return lb.detail(submission_id), lb.per_item(submission_id)
    except lb.NotFoundError:
        return None, None


@st.cache_resource(show_spinner=False, max_entries=32)
def _breakdown_figure(database: str, version: str, submission_id: str, metric: str):
    parts = lb.breakdown(submission_id, metric)
    return None if parts.empty else charts.spec(charts.breakdown_bars(parts, metric))


@st.cache_data(ttl=30, show_spinner=False, max_entries=16)
def _by_cause(database: str, submission_id: str, status: str, _items):
    # Labels change as annotators answer: 30 s. Every metric, so a metric switch reuses it.
    cols = cause_layer.breakdown_metrics(_items, None, board.metric_order())
    return cause_layer.cause_breakdown(_items, cols)


@st.cache_data(show_spinner=False, max_entries=16)
def _items_csv(database: str, submission_id: str, version: str) -> bytes:
    return lb.export_csv("items", submission_id=submission_id).encode("utf-8")


track_names = lb.tracks()
sid = st.query_params.get("submission")
with shown_errors(stop=True):
    version = lb.board_version()
    info, items = _detail(board.database_key(), sid, version) if sid else (None, None)
    track = info["submission"]["track"] if info else None
    everything = lb.ranking(track=track) if track in track_names else None
    reported = bool(info) and info["submission"]["kind"] == "reported"
    published = lb.reported() if reported and tracks.get(track).reported else None
ids = board.entry_ids(everything, published) if everything is not None else {}
if sid not in ids:  # unknown, hidden, withdrawn or deleted: never another entry in its place
    st.title("Entry")
    if sid:
        st.warning(not_found("Entry", sid, "on the site's boards"))
    else:
        st.info("This page shows one entry: open it from a board's ranking.")
    link_to("site_pages/leaderboard.py", "The leaderboard", icon="🏆")
    st.stop()

order = list(everything["id"])  # the board's entries, best first
row = everything.iloc[order.index(sid)] if sid in order else {}
view = board.detail_view(info, row.get("baseline", ""))
st.title(escape_markdown(view["title"]), anchor=False)
st.markdown(f"{view['badge']} · status: {view['status']}")
if not reported:
    with shown_errors():
        st.markdown(own_entries.standing_view(lb.standing(sid), tracks.get(track).title)[0])
link_to(
    "site_pages/leaderboard.py",
    f"The {track_names[track]} board",
    icon="🏆",
    query_params={"track": track},
)
metric = board.link_value(
    st.query_params, "metric", board.metric_choices(everything, track)
) or everything.attrs.get("sort_by")
if sid in order and len(order) > 1:
    above = order.index(sid) - 1
    order.remove(sid)
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    other = c1.selectbox(
        "Compare with…",
        order,
        index=max(above, 0),  # the entry ranked just above, else the first
        key="entry_compare_with",
        format_func=ids.get,
    )
    with c2:
        link_to(
            "site_pages/compare.py",
            "Compare with the one above"
            if other == order[max(above, 0)] and above >= 0
            else "Compare with it",
            icon="🆚",
            query_params={"track": track, "a": other, "b": sid},
        )
fields.table(view["fields"], "entry_fields")
if chat.links_to_card(info["submission"]):
    st.caption(chat.CARD_NOTE)
if view["description"]:
    st.text(view["description"])
if view["scores"] is not None:
    scores = view["scores"]
    fields.table(scores, "entry_scores", column_order=[c for c in scores if c != "group"])
if not reported and metric:
    with shown_errors():
        figure = _breakdown_figure(board.database_key(), version, sid, metric)
        if figure is not None:
            st.vega_lite_chart(figure, key="entry_breakdown_chart")
# Each expander is drawn when opened (on_change="rerun"): a closed one costs the browser
# nothing and the server no breakdown by cause.
for name, table in view["breakdown"].items():
    shown = st.expander(
        f"Breakdown by {name}: every metric", key=f"entry_expand_{name}", on_change="rerun"
    )
    with shown:
        if shown.open:
            st.caption(board.BREAKDOWN_NOTE)
            fields.table(table, f"entry_breakdown_{name}", hide_index=None)
if not reported:
    shown = st.expander("By cause type", key="entry_expand_cause", on_change="rerun")
    with shown_errors(), shown:
        if shown.open:
            by_cause, cause_caption = _by_cause(board.database_key(), sid, view["status"], items)
            if by_cause.empty:
                st.caption("No per-item scores to break down by cause type yet.")
            else:
                st.caption(
                    "Mean per-item score (×100) by the emotion cause type of the item "
                    f"({doc_link('causes.md', 'what a cause type is')}); {cause_caption}."
                )
                by_cause = board.labelled(board.metric_first(by_cause, metric))
                fields.table(by_cause, "entry_by_cause")
if view["verbosity"]:
    cols = st.columns(len(view["verbosity"]))
    for col, (label, value) in zip(cols, view["verbosity"].items()):
        col.metric(label, value)

if not reported:
    st.caption(tracks.get(track).items_caption)
    fields.table(
        board.items_view(items), "entry_items", {"prediction": "large", "reference": "large"}
    )
    st.download_button(
        "This entry's items (CSV)",
        functools.partial(_items_csv, board.database_key(), sid, version),
        file_name=f"etc_items_{sid}.csv",
        mime="text/csv",
        key="entry_dl_items",
        on_click="ignore",
    )
