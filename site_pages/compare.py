"""Compare two entries: B − A on every metric with intervals and verdicts; where each one wins."""

import streamlit as st

import leaderboard as lb
from etclib.data.corpus import CATEGORIES, ROLES
from leaderboard import compare as lbc
from views import cause_layer, charts, fields
from views import compare as cv
from views.board import board_of, database_key
from views.docs import doc_link
from views.errors import shown_errors
from views.navigation import ENTRY_PAGE, entry_params, link_to
from views.text import escape_markdown, not_found


@st.cache_data(ttl=30, show_spinner=False, max_entries=16)
def _cause_types(database: str, version: str, a: str, b: str, key: str):
    # Cause labels change as annotators answer: kept 30 s only (as the Leaderboard does).
    frame = _tables(database, version, a, b, key)[0]
    return cv.cause_outcomes(frame, cause_layer.item_cause_types(frame), key)


@st.cache_resource(show_spinner=False, max_entries=32)
def _tables(database: str, version: str, a: str, b: str, key: str):
    # Built once per pair, key and board version; never changed by the page.
    c = lbc.compare(a, b)
    return cv.items_frame(c, key), cv.outcome_tables(c, key)


st.title("Compare two entries")
st.caption(
    "B − A on every metric both entries were scored with (same signature), its paired "
    "bootstrap 95% interval over items (the board's resamples and seed), the p-value of a "
    "paired approximate-randomization test (sacrebleu's; for a mean over items the paired "
    "permutation test) and the verdict at α = 0.05. Nothing is re-scored: the stored per-item "
    "scores are compared. The URL names the pair, so it can be shared."
)

track_names = lb.tracks()
asked_a, asked_b = st.query_params.get("a"), st.query_params.get("b")
asked_track = st.query_params.get("track")
if asked_track not in track_names and (asked_a or asked_b):
    with shown_errors(stop=True):
        asked_track = board_of(asked_a) or board_of(asked_b)
track = st.segmented_control(
    "Track",
    list(track_names),
    default=asked_track if asked_track in track_names else next(iter(track_names)),
    format_func=lambda t: track_names[t],
    key="cmp_track",
) or next(iter(track_names))

with shown_errors(stop=True):
    version = lb.board_version()
    ranking = lb.ranking(track=track)
ids = {sid: f"{name}  ({sid})" for sid, name in zip(ranking["id"], ranking["name"])}
for side, key, asked in (("A", "cmp_a", asked_a), ("B", "cmp_b", asked_b)):
    if asked in ids and key not in st.session_state:
        st.session_state[key] = asked
    elif asked and asked not in ids and st.session_state.get(key) is None:
        # said, and nothing else put in its place: the visitor chooses
        st.warning(not_found(f"Entry {side}", asked, f"on the {track_names[track]} board"))
if len(ids) < 2:
    st.info("Two scored entries on this track are needed for a comparison.")
    st.stop()
left, right = st.columns(2)
a = left.selectbox(
    "A (the reference side)",
    list(ids),
    key="cmp_a",
    index=None,
    format_func=ids.get,
    placeholder="Choose entry A",
)
b = right.selectbox(
    "B (compared with A: B − A)",
    list(ids),
    key="cmp_b",
    index=None,
    format_func=ids.get,
    placeholder="Choose entry B",
)
if a is None or b is None:
    st.info("Choose two entries; each entry's page links here too.")
    st.stop()
st.query_params.update({"track": track, "a": a, "b": b})
if a == b:
    st.info("A and B are the same entry: choose another entry for B to compare them.")
    st.stop()

with shown_errors(stop=True), st.spinner("Comparing…"):
    c = lbc.compare(a, b)

# names are visitors' text: escaped, never Markdown or HTML
st.markdown(f"**A**: {escape_markdown(ids[a])}  \n**B**: {escape_markdown(ids[b])}")
for column, (side, sid) in zip(st.columns(2), (("A", a), ("B", b))):
    with column:
        link_to(ENTRY_PAGE, f"{side}'s page", icon="🔎", query_params=entry_params(sid))
if "not compared" in c.signature:
    st.warning(f"Not compared: {c.signature['not compared']}.")
table = cv.metric_table(c)
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    height=min(36 + 35 * len(table), 36 + 35 * 30),  # every metric row, up to 30
    key="cmp_metrics",
    column_order=[c for c in table.columns if c != "key"],
    column_config={
        "metric": st.column_config.TextColumn("metric", width=120),
        "A": st.column_config.TextColumn("A", help=cv.UNDEFINED_HELP, alignment="right"),
        "B": st.column_config.TextColumn("B", help=cv.UNDEFINED_HELP, alignment="right"),
        "B − A": st.column_config.NumberColumn(format="%+.2f"),
        "95% interval": st.column_config.TextColumn(help="95% paired bootstrap interval of B − A"),
        "p": st.column_config.NumberColumn(
            format="%.4f",
            help="Paired approximate-randomization test: the chance of a "
            "difference this large if A and B were interchangeable.",
        ),
        "verdict": st.column_config.TextColumn("verdict", help="At α = 0.05.", width=180),
    },
)
st.caption(
    f"{c.n_items:,} items; {c.resamples:,} bootstrap resamples (seed {c.seed}), "
    f"{c.trials:,} randomization trials."
)
with st.expander("Signature"):
    st.json(c.signature)

keys = cv.item_keys(c)
if not keys:
    st.stop()
key = st.selectbox("Per-item score", keys, key="cmp_item_key", format_func=cv.item_key_label)
# Only the open tab runs: a chart costs a browser its charting script and drawing.
tab_counts, tab_chart = st.tabs(list(cv.VIEWS), key="cmp_view", on_change="rerun")
if tab_counts.open:
    with tab_counts:
        st.markdown(f"**Items where each one wins** (on {cv.item_key_label(key)})")
        tables = dict(_tables(database_key(), version, a, b, key)[1])
        with shown_errors("The cause types cannot be read: "):
            tables["cause type"] = _cause_types(database_key(), version, a, b, key)
        for col, table in zip(st.columns(len(tables)), tables.values()):
            col.table(table, hide_index=True)  # a few rows: static tables draw faster
        st.caption(
            "Cause type of each item ("
            + doc_link("causes.md", "what a cause type is")
            + "): the human majority, else the newest LLM run, else the lexical proxy."
        )
if tab_chart.open:
    with tab_chart:
        st.vega_lite_chart(charts.spec(cv.difference_chart(c, key)), key="cmp_chart")

st.subheader("Items")
f1, f2, f3, f4 = st.columns([3, 2, 2, 2])
cats = f1.multiselect("Category", list(CATEGORIES), key="cmp_f_category", placeholder="any")
turns = f2.multiselect("Turn", [1, 2, 3, 4, 5], key="cmp_f_turn", placeholder="any")
roles = f3.multiselect("Role", list(ROLES), key="cmp_f_role", placeholder="any")
order = f4.selectbox("Order", list(cv.ORDERS), key="cmp_f_order")
frame = _tables(database_key(), version, a, b, key)[0]
differ = "label sets differ" in frame and st.toggle(
    "Only items whose label sets differ", key="cmp_f_differ"
)
shown = cv.filter_items(
    frame, categories=cats, turns=turns, roles=roles, order=order, differ_only=differ
)
st.caption(f"{len(shown):,} of {len(frame):,} items. Select a row to see its dialogue.")
event = fields.table(
    shown.drop(columns=["item"]),
    "cmp_items",
    dict.fromkeys(("reference", "prediction A", "prediction B"), "medium"),
    on_select="rerun",
    selection_mode="single-row",
)
picked = event.selection.rows if event is not None else []
if len(shown):
    i = int(shown["item"].iloc[picked[0] if picked and picked[0] < len(shown) else 0])
    st.markdown(
        f"**Dialogue context** of the {'selected' if picked else 'first'} item "
        f"({cv.item_title(c, i)})"
    )
    st.text("\n".join(cv.context_lines(c, i)))
    row = c.per_item()[i]
    st.table(
        {
            "": ["reference", "A", "B"],
            "text": [
                row["reference"],
                cv.text_of(row["prediction_a"]),
                cv.text_of(row["prediction_b"]),
            ],
        },
        hide_index=True,
    )
    units = cv.judge_units(c, i)
    if units:
        st.markdown("**The judge's units and decisions for this item**")
        if cv.unexplained(units):
            st.caption(
                f"{cv.unexplained(units)} of these decisions were stored without the judge's "
                "reasoning (scored before the reasons were kept, or the judge gave none): "
                "they are shown alone."
            )
        cols = st.columns(len(units))
        for col, (title, table) in zip(cols, units.items()):
            col.caption(title)
            col.text(cv.units_text(table))
    elif "judge" not in c.modules:
        st.caption("No judge scores for both entries: no unit-level decisions to show.")

st.subheader("Export")
exports = (
    ("metrics", "Metric table (CSV)", lbc.export_csv(c, "metrics"), "_metrics.csv", "text/csv"),
    ("items", "Item table (CSV)", lambda: lbc.export_csv(c, "items"), "_items.csv", "text/csv"),
    ("json", "Comparison (JSON)", lambda: lbc.export_json(c), ".json", "application/json"),
)
for col, (key, label, data, end, mime) in zip(st.columns(3), exports):
    col.download_button(
        label, data, f"etc_compare_{a}_{b}{end}", mime, key=f"cmp_dl_{key}", on_click="ignore"
    )
