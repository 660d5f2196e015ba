"""Leaderboard: ranking with intervals and rank bands, charts, one submission's detail, exports."""

import functools

import streamlit as st

import leaderboard as lb
from etclib import tracks
from leaderboard import compare as lb_compare
from views import board, cause_layer, charts, chat, fields
from views import compare as compare_view
from views.docs import doc_link
from views.errors import shown_errors
from views.navigation import link_to
from views.text import escape_markdown, not_found

st.title("Leaderboard")


@st.cache_data(show_spinner="Computing intervals…", max_entries=64)
def _detail(database: str, submission_id: str, version: str):
    # Per board version: a visitor coming back to an entry does not read its rows again.
    return lb.detail(submission_id), lb.per_item(submission_id)


@st.cache_resource(show_spinner=False, max_entries=32)
def _breakdown_figure(database: str, version: str, submission_id: str, metric: str):
    parts = lb.breakdown(submission_id, metric)
    return None if parts.empty else charts.spec(charts.breakdown_bars(parts, metric))


@st.cache_data(ttl=30, show_spinner=False, max_entries=16)
def _by_cause(database: str, submission_id: str, status: str, _items):
    # Labels change as annotators answer: 30 s. Every metric, so a metric switch reuses it.
    cols = cause_layer.breakdown_metrics(_items, None, board.metric_order())
    return cause_layer.cause_breakdown(_items, cols)


@st.cache_data(show_spinner=False, max_entries=12)
def _export(database: str, version: str, key: str, track: str) -> bytes:
    # Built on the first click, then the same bytes for every click on this board version.
    return board.export_file(key, track)


@st.cache_data(show_spinner=False, max_entries=16)
def _items_csv(database: str, submission_id: str, version: str) -> bytes:
    return lb.export_csv("items", submission_id=submission_id).encode("utf-8")


@st.cache_data(show_spinner=False, max_entries=4)
def _reported(database: str, version: str):
    return lb.reported()


@st.cache_resource(show_spinner=False, max_entries=32)
def _charts(database, version, track, metric, filters, with_reported, _ranking, _shown, _published):
    # Built once per view and board version, and shared: a rerun of the tab builds none again.
    figures = board.chart_figures(_ranking, _shown, _published if with_reported else None, metric)
    return {k: f if isinstance(f, str) else charts.spec(f) for k, f in figures.items()}


# The view lives in the URL, so a link reproduces it (Streamlit's own binding would put the
# options' labels there).
track_names = lb.tracks()  # transcription -> "transcriptions", erc -> "categories"
asked = st.query_params.get("track")
wanted = st.query_params.get("submission")
if asked not in track_names and wanted:
    with shown_errors(stop=True):
        asked = board.board_of(wanted)  # a link to an entry opens the board it is on
track = st.segmented_control(
    "Track",
    list(track_names),
    default=asked if asked in track_names else next(iter(track_names)),
    format_func=lambda t: track_names[t],
    key="lb_track",
    help="; ".join(f"{t.title}: {t.description}" for t in tracks.TRACKS.values()),
) or next(iter(track_names))

with shown_errors(stop=True):
    version = lb.board_version()
    everything = lb.ranking(track=track)
    published = _reported(board.database_key(), version)
    if not tracks.get(track).reported:
        published = published.iloc[0:0]
board.keep_in_url(st.query_params, "track", track, next(iter(track_names)))

ids = board.entry_ids(everything, published)  # every entry a link or the picker may name
if wanted and wanted not in ids:
    st.warning(not_found("Entry", wanted, f"on the {track_names[track]} board"))
elif wanted:  # the link's entry is drawn below the board: say so where the visitor lands
    st.info(
        f"The details of {escape_markdown(ids[wanted])} are below the board: [go to them](#entry)."
    )
note = board.honesty_note(everything)
if note:
    st.warning(note, icon="⚠️")


def _open_row() -> None:
    # A row's selection (a callback: only when it changes) opens that entry's detail.
    rows = st.session_state["lb_table"].selection.rows
    ids = st.session_state.get("lb_table_ids") or []
    if rows and rows[0] < len(ids):
        st.session_state["lb_detail"] = ids[rows[0]]
        st.session_state["lb_open_detail"] = True


# A fragment: a metric, filter or tab change reruns the board alone.
@st.fragment
def board_view(track: str, everything, published) -> None:
    metrics = board.metric_choices(everything, track) or board.metric_order(track)
    default_metric = everything.attrs.get("sort_by")
    c1, c2, c3, c4 = st.columns([3, 3, 2, 2])
    url = st.query_params
    start = board.link_value(url, "metric", metrics) or default_metric
    metric = c1.selectbox(
        "Metric",
        metrics,
        index=metrics.index(start) if start in metrics else 0,
        key="lb_metric",
        format_func=board.metric_label,
        help=f"The ranking metric by default. {lb.ranking_rule(track)}",
    )
    weights = [v for v in lb.OPEN_WEIGHTS if v]
    # field: (its column, label, options, query parameter, widget key, placeholder)
    filters = {
        "setting": (c2, "Setting", lb.SETTINGS, "setting", "lb_settings", "all settings"),
        "saw_test": (c3, "Saw test data", lb.SAW_TEST, "saw_test", "lb_saw_test", "any"),
        "open_weights": (c4, "Open weights", weights, "weights", "lb_weights", "any"),
    }
    only = {  # a filtered board is ranked among the entries it shows (bands and banner too)
        field: col.multiselect(
            label,
            options,
            board.link_value(url, name, options, many=True),
            key=key,
            placeholder=hint,
        )
        for field, (col, label, options, name, key, hint) in filters.items()
    }
    board.keep_in_url(url, "metric", metric, default_metric)
    for field, (*_, name, _, _) in filters.items():
        board.keep_in_url(url, name, only[field], [])

    with shown_errors(stop=True):
        ranking = (
            lb.ranking(sort_by=metric, track=track) if metric != default_metric else everything
        )
        shown = (
            lb.ranking(sort_by=metric, track=track, only=only) if any(only.values()) else ranking
        )
    trivial_note = board.trivial_warning(shown)
    if trivial_note:
        st.warning(trivial_note, icon="⚠️")

    # Only the open tab runs: a chart costs a browser its charting script and drawing.
    tab_table, tab_charts = st.tabs(list(board.VIEWS), key="lb_view", on_change="rerun")
    if tab_table.open:
        with tab_table:
            if ranking.empty:
                st.info(
                    "No scored entry yet. Submit predictions on the Submit page"
                    + (
                        "; the paper's published numbers are listed below."
                        if not published.empty
                        else "."
                    )
                )
            elif shown.empty:
                st.info("No entry matches these filters: clear one of them.")
            else:
                st.caption(
                    f"{ranking.attrs.get('ranking_rule', '')} Ranked here by **{board.metric_label(metric)}** (×100); "
                    f"{ranking.attrs.get('resamples', '?')} bootstrap resamples, seed "
                    f"{ranking.attrs.get('seed', '?')}. {board.filtered_note(shown, ranking)}"
                    f"{board.legend(ranking)}"
                )
                choices = board.column_choices(shown, track)
                usual = board.default_columns(choices)
                with st.popover("Columns", icon="🧱"):
                    columns = st.multiselect(
                        "Columns shown besides rank, name, score and marks",
                        list(choices),
                        board.link_value(url, "columns", list(choices), many=True) or usual,
                        format_func=choices.get,
                        key="lb_columns",
                    )
                board.keep_in_url(url, "columns", columns, usual)
                st.session_state["lb_table_ids"] = list(shown["id"])
                st.caption("Select a row to see that entry's details below.")
                table = board.board_table(shown, metric, track, columns)
                st.dataframe(
                    table,
                    hide_index=True,
                    width="stretch",
                    key="lb_table",
                    on_select=_open_row,
                    selection_mode="single-row",
                    column_config=board.ranking_config(table, metric),
                    row_height=board.RANKING_ROW_HEIGHT,
                )
                if st.session_state.pop("lb_open_detail", False):
                    st.rerun()  # the detail is outside this fragment: the whole page
                with shown_errors():
                    reference = board.reference_table(track, metric)
                    if not reference.empty:
                        st.caption(tracks.get(track).reference_caption)
                        fields.table(reference, "lb_reference")
                    like = board.like_for_like_table(shown, track, metric)
                    if not like.empty:
                        st.caption(tracks.get(track).like_for_like_caption)
                        fields.table(like, "lb_like_for_like")
                with st.expander("Signatures of the board's columns"):
                    st.json(ranking.attrs.get("signatures", {}))

    if tab_charts.open:
        with tab_charts:
            with_reported = st.toggle(
                "Show the paper's reported numbers in the charts (grey; other signature)",
                key="lb_with_reported",
                disabled=published.empty,
                help="No published result is loaded on this site." if published.empty else None,
            )
            figures = {}
            with shown_errors():
                figures = _charts(
                    board.database_key(),
                    version,
                    track,
                    metric,
                    tuple((k, tuple(v)) for k, v in only.items()),
                    with_reported,
                    ranking,
                    shown,
                    published,
                )
            left, right = st.columns(2)
            wide = "lb_per_category" not in figures
            for key, figure in figures.items():
                place = {"lb_bars": left, "lb_over_time": st if wide else left}.get(key, right)
                if isinstance(figure, str):
                    place.info(figure)
                else:
                    place.vega_lite_chart(figure, key=key)

    # which rank differences are real: every pair of the top 10, on demand (45 tests)
    if st.toggle("Pairwise tests of the top 10 on this metric", key="lb_pairwise"):
        with shown_errors():
            matrix = lb_compare.pairwise(track=track, sort_by=metric)
            st.vega_lite_chart(
                charts.spec(compare_view.pairwise_figure(matrix)), key="lb_pairwise_chart"
            )


board_view(track, everything, published)

st.subheader("Published results (reported)")
if published.empty:
    st.caption("No published result is loaded on this site.")
else:
    fields.table(board.reported_table(published), "lb_reported")

# --- one submission ------------------------------------------------------------------------------

st.subheader("Details of one entry", anchor="entry")
ranking = everything  # entries and statuses (the order of the chosen metric is the fragment's)
metric = st.session_state.get("lb_metric") or everything.attrs.get("sort_by")
if not ids:
    st.caption("Nothing to show yet.")
    st.stop()
# None until a visitor picks one: an entry's detail is built when asked for, not on every visit.
sid = st.selectbox(
    "Entry",
    list(ids),
    index=list(ids).index(wanted) if wanted in ids else None,
    key="lb_detail",
    format_func=lambda i: f"{ids[i]}  ({i})",
    placeholder="Choose an entry (or select its row above) to see its scores and items",
)
board.keep_in_url(st.query_params, "submission", sid, None)
if sid is not None:
    with shown_errors(stop=True):
        info, items = _detail(board.database_key(), sid, version)
    view = board.detail_view(info)
    st.markdown(
        f"**{escape_markdown(view['title'])}** · {view['badge']} · status: {view['status']}"
    )
    order = [i for i in ranking["id"] if i != sid]
    if sid in set(ranking["id"]) and order:
        above = list(ranking["id"]).index(sid) - 1
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        other = c1.selectbox(
            "Compare with…",
            order,
            index=max(above, 0),  # the entry ranked just above, else the first
            key=f"lb_compare_with_{sid}",
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
    fields.table(view["fields"], "lb_detail_fields")
    if chat.links_to_card(info["submission"]):
        st.caption(chat.CARD_NOTE)
    if view["description"]:
        st.text(view["description"])
    if view["scores"] is not None:
        scores = view["scores"]
        fields.table(scores, "lb_detail_scores", column_order=[c for c in scores if c != "group"])
    if info["submission"]["kind"] != "reported" and metric:
        with shown_errors():
            figure = _breakdown_figure(board.database_key(), version, sid, metric)
            if figure is not None:
                st.vega_lite_chart(figure, key="lb_breakdown_chart")
    # Each expander is drawn when opened (on_change="rerun"): a closed one costs the browser
    # nothing and the server no breakdown by cause.
    for name, table in view["breakdown"].items():
        shown = st.expander(
            f"Breakdown by {name}: every metric", key=f"lb_expand_{name}", on_change="rerun"
        )
        with shown:
            if shown.open:
                st.caption(board.BREAKDOWN_NOTE)
                fields.table(table, f"lb_breakdown_{name}", hide_index=None)
    if info["submission"]["kind"] != "reported":
        shown = st.expander("By cause type", key="lb_expand_cause", on_change="rerun")
        with shown_errors(), shown:
            if shown.open:
                by_cause, cause_caption = _by_cause(
                    board.database_key(), sid, view["status"], items
                )
                if by_cause.empty:
                    st.caption("No per-item scores to break down by cause type yet.")
                else:
                    st.caption(
                        "Mean per-item score (×100) by the emotion cause type of the item "
                        f"({doc_link('causes.md', 'what a cause type is')}); {cause_caption}."
                    )
                    by_cause = board.labelled(board.metric_first(by_cause, metric))
                    fields.table(by_cause, "lb_by_cause")
    if view["verbosity"]:
        cols = st.columns(len(view["verbosity"]))
        for col, (label, value) in zip(cols, view["verbosity"].items()):
            col.metric(label, value)

    if info["submission"]["kind"] != "reported":
        st.caption(tracks.get(info["submission"]["track"]).items_caption)
        fields.table(
            board.items_view(items), "lb_items", {"prediction": "large", "reference": "large"}
        )
        st.download_button(
            "This entry's items (CSV)",
            functools.partial(_items_csv, board.database_key(), sid, version),
            file_name=f"etc_items_{sid}.csv",
            mime="text/csv",
            key="lb_dl_items",
            on_click="ignore",
        )

st.subheader("Export")
st.caption(f"The {track_names[track]} board, as shown above.")
# Deferred downloads: a file is built when its button is clicked, never on a visit.
for col, (key, (label, file_name, mime)) in zip(st.columns(3), board.exports(track).items()):
    col.download_button(
        label,
        functools.partial(_export, board.database_key(), version, key, track),
        file_name,
        mime,
        key=f"lb_dl_{key}_{track}",
        on_click="ignore",
    )
