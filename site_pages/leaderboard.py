"""Leaderboard: ranking with intervals and rank bands, charts, exports; a row opens its entry's
page (site_pages/entry.py)."""

import functools

import streamlit as st

import leaderboard as lb
from etclib import tracks
from leaderboard import compare as lb_compare
from views import board, charts, fields
from views import compare as compare_view
from views.errors import shown_errors
from views.navigation import open_entry

st.title("Leaderboard")


@st.cache_data(show_spinner=False, max_entries=12)
def _export(database: str, version: str, key: str, track: str) -> bytes:
    # Built on the first click, then the same bytes for every click on this board version.
    return board.export_file(key, track)


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
if "submission" in st.query_params:  # an entry's link of old, or the picker below: its page
    open_entry(st.query_params["submission"], st.query_params.get("metric"))
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

note = board.honesty_note(everything)
if note:
    st.warning(note, icon="⚠️")


def _open_row() -> None:
    # A row's selection (a callback: only when it changes) opens that entry's page.
    rows = st.session_state["lb_table"].selection.rows
    ids = st.session_state.get("lb_table_ids") or []
    if rows and rows[0] < len(ids):
        st.session_state["lb_open"] = ids[rows[0]]


def _pick() -> None:
    st.session_state["lb_open"] = st.session_state["lb_detail"]  # the same way as a row


# A fragment: a metric, filter or tab change reruns the board alone.
@st.fragment
def board_view(track: str, everything, published) -> None:
    if "lb_open" in st.session_state:  # a row was selected: nothing of the board is drawn again
        open_entry(st.session_state.pop("lb_open"), st.session_state.get("lb_metric"))
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
                st.caption(
                    "Select a row to open that entry's page: its scores, breakdowns and items."
                )
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

st.subheader("Details of one entry")
ids = board.entry_ids(everything, published)
st.selectbox(
    "Entry",
    list(ids),
    index=None,
    key="lb_detail",
    format_func=lambda i: f"{ids[i]}  ({i})",
    placeholder="Choose an entry (or select its row above) to open its scores and items",
    disabled=not ids,
    on_change=_pick,
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
