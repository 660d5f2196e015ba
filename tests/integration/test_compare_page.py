"""The comparison page (site_pages/compare.py) and the Leaderboard's links and pairwise matrix, with
``streamlit.testing.v1.AppTest`` on a board of the tiny corpus: the page shows the numbers of
``leaderboard compare`` for the pair in its URL, filters items by category and turn, and shows
the judge's unit decisions of both entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.comparison import NO_DIFFERENCE
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import compare as lbc
from tests import vega
from tests.fakes.judge_fixtures import FAKE_MODEL, point_provider_at
from tests.fakes.judge_responder import sentences
from tests.fakes.llm_server import FakeLLMServer
from tests.reasoning_judge import ReasoningJudge, reason, strip_reasons
from tests.site_apptest import fresh_board, opened  # noqa: F401 - fresh_board: autouse

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def judged_board(tiny_corpus, monkeypatch):
    """Two entries of the tiny corpus scored with the lexical metrics and the fake judge."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "100")
    its = split_items(load_corpus(tiny_corpus), "test")
    with FakeLLMServer(ReasoningJudge(), hang_seconds=10.0) as server:
        point_provider_at(monkeypatch, "gemini", server)
        monkeypatch.setenv("ETC_JUDGE_PROVIDER", "gemini")
        monkeypatch.setenv("ETC_JUDGE_MODEL", FAKE_MODEL)
        ids = []
        for name, text in (
            ("unrelated", lambda it: "犬が好きです。"),
            ("oracle", lambda it: it.reference),
        ):
            data = dumps_jsonl((it.key, text(it)) for it in its).encode("utf-8")
            ids.append(lb.submit(data, {"name": name}).id)
        lb.process_jobs()
        yield its, ids


def page(a: str | None, b: str | None) -> AppTest:
    chosen = {"a": a, "b": b}
    return opened("site_pages/compare.py", **{k: v for k, v in chosen.items() if v})


def table(at: AppTest, *columns: str):
    """The first table shown with all these columns (data grids, then static tables)."""
    for d in [*at.dataframe, *at.table]:
        frame = d.value
        if all(c in frame.columns for c in columns):
            return frame
    raise AssertionError(f"no table with columns {columns}")


def test_the_url_names_the_pair_and_the_numbers_are_leaderboard_compares(judged_board):
    its, (ida, idb) = judged_board
    at = page(ida, idb)
    assert at.selectbox(key="cmp_a").value == ida and at.selectbox(key="cmp_b").value == idb
    c = lbc.compare(ida, idb)
    shown = table(at, "key", "verdict")
    assert list(shown["key"]) == list(c.metrics)
    for _, row in shown.iterrows():
        m = c.metrics[row["key"]]
        assert (row["A"], row["B"]) == (f"{m.a:.2f}", f"{m.b:.2f}")  # two decimals, as shown
        assert row["B − A"] == m.difference and row["p"] == m.p_value
    assert at.query_params["a"] == [ida] or at.query_params["a"] == ida
    # each side's page, one click away
    pages = [(p.proto.label, p.proto.query_string) for p in at.page_link]
    assert pages == [("A's page", f"submission={ida}"), ("B's page", f"submission={idb}")]
    # win/tie/loss by role, category, turn and cause type (the proxy's types here)
    causes = table(at, "cause type", "B wins")
    assert causes[["B wins", "tie", "A wins"]].to_numpy().sum() == len(its)
    assert set(causes["cause type"]) <= {"inter-personal", "other", "unknown"}
    assert set(causes["cause type"]) & {"inter-personal", "other"}  # the proxy answered
    # the judge's units of both entries and of the reference, for the first item
    shown_text = "\n".join(str(x.value) for x in at.caption)
    assert "A's units" in shown_text and "reference units" in shown_text
    assert "without the judge's reasoning" not in shown_text
    shown_units = "\n".join(t.value for t in at.text)
    assert "[Not Supported] 犬が好きです。" in shown_units  # A's unit against the reference
    assert "[against A: Not Supported · against B: Supported]" in shown_units
    # each decision with the judge's reasoning for it, under its unit
    item = first_item(at, its)
    ref = item.reference.strip()
    assert (
        f"[Not Supported] 犬が好きです。\n    why: {reason('犬が好きです。', ref)}" in shown_units
    )
    for u in sentences(ref):
        assert (
            f"[against A: Not Supported · against B: Supported] {u}\n"
            f"    why (against A): {reason(u, '犬が好きです。')}\n"
            f"    why (against B): {reason(u, ref)}"
        ) in shown_units
    # the dialogue context of the first item of the table is shown as plain text
    context = "\n".join(t.value for t in at.text)
    assert all(f"{line.letter}: {line.text}" in context for line in item.context)


def first_item(at: AppTest, its):
    """The item of the first row of the item table (the one whose details are shown)."""
    top = table(at, "prediction A", "turn").iloc[0]
    return next(
        it
        for it in its
        if (it.dialogue_id, it.turn, it.role) == (top.dialogue_id, top.turn, top.role)
    )


def test_decisions_stored_without_reasoning_are_shown_alone(judged_board):
    its, (ida, idb) = judged_board
    assert strip_reasons(ida) == len(its)  # A's rows as stored before the reasons were kept
    at = page(ida, idb)
    item = first_item(at, its)
    ref = item.reference.strip()
    shown_units = "\n".join(t.value for t in at.text)
    # A's decisions alone, B's with their reasoning
    assert "[Not Supported] 犬が好きです。\n" in shown_units + "\n"
    assert "why: 「犬が好きです。」" not in shown_units
    for u in sentences(ref):
        assert (
            f"[against A: Not Supported · against B: Supported] {u}\n"
            f"    why (against B): {reason(u, ref)}"
        ) in shown_units
    assert f"    why: {reason(sentences(ref)[0], ref)}" in shown_units  # B's own unit
    # A's one unit and its decisions on each reference unit have no reasoning
    n = 1 + len(sentences(ref))
    shown_text = "\n".join(str(x.value) for x in at.caption)
    assert f"{n} of these decisions were stored without the judge's reasoning" in shown_text


def test_items_filter_by_category_and_turn(judged_board):
    its, (ida, idb) = judged_board
    at = page(ida, idb)
    at.multiselect(key="cmp_f_category").set_value(["sadness"]).run()
    at.multiselect(key="cmp_f_turn").set_value([1, 2]).run()
    assert not at.exception
    items = table(at, "prediction A", "turn")
    expected = [it for it in its if "sadness" in it.label and it.turn in (1, 2)]
    assert len(items) == len(expected) > 0
    assert set(items["turn"]) <= {1, 2}
    assert all("sadness" in label for label in items["label"])


def test_an_entry_against_itself_and_no_pair_yet(judged_board):
    _, (ida, _) = judged_board
    at = page(ida, ida)
    # said, and no table of zeros under it
    assert "A and B are the same entry" in "\n".join(i.value for i in at.info)
    assert not [d for d in at.dataframe if "verdict" in d.value.columns]
    # the library's comparison of an entry with itself is still no difference everywhere
    assert {m.verdict for m in lbc.compare(ida, ida).metrics.values()} == {NO_DIFFERENCE}
    empty = page(None, None)
    assert "Choose two entries" in "\n".join(i.value for i in empty.info)


def test_an_entry_links_here_and_the_board_draws_the_pairwise_matrix(judged_board):
    _, (ida, idb) = judged_board
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=90)
    board = lb.ranking()
    second = board["id"].iloc[1]
    at.query_params["submission"] = second
    at.run()
    at.switch_page("site_pages/entry.py").run()
    assert not at.exception, [e.value for e in at.exception]
    links = [link.proto for link in at.page_link if link.proto.page.endswith("compare")]
    assert links and links[0].label == "Compare with the one above"
    assert f"a={board['id'].iloc[0]}" in links[0].query_string
    assert f"b={second}" in links[0].query_string
    at.query_params.clear()  # as the page's link to its board leaves them
    at.switch_page("site_pages/leaderboard.py").run()
    at.toggle(key="lb_pairwise").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    chart = next(c for c in vega.shown(at) if vega.title(c).startswith("Row entry against"))
    (cells,) = vega.marks(chart, "rect")  # a cell per pair of the two entries, both ways
    assert len(cells["rows"]) == 4 and len({r["row"] for r in cells["rows"]}) == 2
    assert [r["text"] for r in cells["rows"]].count("–") == 2  # an entry against itself


def test_the_erc_track_gets_the_same_view(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "100")
    its = split_items(load_corpus(tiny_corpus), "test")
    ids = []
    xss = "<img src=x onerror=window.__x=1>"
    for name, labels in ((xss, lambda it: ("joy",)), ("gold", lambda it: it.label)):
        data = dumps_jsonl(((it.key, labels(it)) for it in its), track="erc").encode("utf-8")
        ids.append(lb.submit(data, {"name": name}).id)
    lb.process_jobs()
    at = page(*ids)
    assert at.segmented_control(key="cmp_track").value == "erc"
    shown_md = "\n".join(m.value for m in at.markdown)
    assert r"\<img src\=x onerror\=window\.\_\_x\=1\>" in shown_md  # escaped, never HTML
    shown = table(at, "key", "verdict")
    assert {"macro_f1", "f1_joy", "f1_sadness"} <= set(shown["key"])
    c = lbc.compare(*ids)
    defined = shown[~shown["verdict"].str.startswith("n/a")]
    assert list(defined["B − A"]) == [c.metrics[k].difference for k in defined["key"]]
    # an undefined precision is n/a, not 0, and the verdict says why
    row = shown.set_index("key").loc["precision_sadness"]
    assert (row["A"], row["verdict"]) == ("n/a", "n/a: A never predicts sadness")
    at.toggle(key="cmp_f_differ").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    items = table(at, "prediction A", "turn")
    assert len(items) == sum(set(it.label) != {"joy"} for it in its) > 0
