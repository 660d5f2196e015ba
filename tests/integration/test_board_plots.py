"""What the board's plots draw, against independent computations: an entry's breakdowns with
their intervals, every entry's per-category F1, the best score over time, the comparison with a
person; and the charts carry every bar, interval and line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests import vega


@pytest.fixture
def boards(tiny_corpus, monkeypatch):
    """Both boards on the tiny corpus: the copy baseline and a made-up transcription entry; the
    majority floor and "always joy" on categories. Yields the corpus's test items."""
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    lb.seed_baselines(reported=True, backends=("copy", "majority"))
    its = items(load_corpus(tiny_corpus), "test")
    joy = dumps_jsonl(((it.key, ("joy",)) for it in its), "erc").encode()
    lb.submit(joy, {"name": "Always joy"}, file_name="joy.jsonl")
    made_up = dumps_jsonl((it.key, it.utterance[:5] + "と思った") for it in its).encode()
    lb.submit(made_up, {"name": "Made up"}, file_name="made_up.jsonl")
    lb.process_jobs()
    yield its
    lb.close_all()


def _id(name: str, track: str | None = None) -> str:
    import leaderboard as lb

    board = lb.ranking(track=track)
    return str(board.set_index("name").loc[name, "id"])


def test_an_entrys_breakdown_is_its_score_on_each_part_with_an_interval(boards):
    import leaderboard as lb
    from views import charts

    sid = _id("Made up")
    parts = lb.breakdown(sid, "rougeL")
    stored = lb.detail(sid)["breakdown"]  # the scoring run's own breakdown (etclib.tracks.scoring)
    assert set(parts["breakdown"]) == {"role", "category", "turn"}
    for row in parts.itertuples():
        assert row.value == pytest.approx(stored[row.breakdown][row.subset]["rougeL"])
        assert row.n_items == stored[row.breakdown][row.subset]["n_items"]
        assert row.lo <= row.value + 1e-9 and row.value <= row.hi + 1e-9
    figure = charts.breakdown_bars(parts, "rougeL")
    (bars,) = vega.marks(figure, "bar")
    drawn = [sum(r["breakdown"] == b for r in bars["rows"]) for b in ("role", "category", "turn")]
    assert drawn == [len(parts[parts["breakdown"] == b]) for b in ("role", "category", "turn")]
    (errors,) = vega.marks(figure, "errorbar")  # an error bar on every bar, from lo to hi
    assert errors["encoding"]["x"]["field"] == "lo" and errors["encoding"]["x2"]["field"] == "hi"
    assert errors["rows"] == bars["rows"]


def test_every_entrys_per_category_f1_is_its_stored_score(boards):
    import leaderboard as lb
    from views import board, charts

    keys = board.per_category_keys("erc")
    assert list(keys) == ["joy", "sadness", "fear", "anger", "surprise", "disgust", "neutral"]
    assert board.per_category_keys() == {}  # the transcriptions track scores no such keys
    table = board.category_table(lb.entry_scores(list(keys.values()), track="erc"), keys)
    joy = _id("Always joy", "erc")
    stored = next(g for g in lb.detail(joy)["scores"].values() if "f1_joy" in g["scores"])
    assert table.loc["Always joy", "joy"] == pytest.approx(stored["scores"]["f1_joy"], abs=0.005)
    # "always joy" is never right about another category: F1 0 where it has gold, else n/a
    assert all(v == 0 or math.isnan(v) for v in table.loc["Always joy"].drop("joy"))
    figure = charts.category_heatmap(table, "F1")
    (cells,) = vega.marks(figure, "text")  # a cell per entry and category, its score written in it
    assert len(cells["rows"]) == table.size
    joy_cell = next(r for r in cells["rows"] if r["tip"] == "Always joy" and r["column"] == "joy")
    assert joy_cell["text"] == f"{table.loc['Always joy', 'joy']:.1f}"


def test_the_best_score_over_time_steps_up_at_each_new_best(boards):
    import leaderboard as lb
    from etclib.data import reference
    from views import board, charts

    ranking = lb.ranking()
    rows = board.time_table(ranking, "rougeL", lb.reported())
    reported = rows[rows["kind"] == "reported"]
    assert len(reported) == len(lb.reported()) == 5
    assert set(reported["when"].dt.strftime("%Y-%m")) == {reference.published()}
    figure = charts.best_over_time(rows, "rougeL")
    (best,) = vega.marks(figure, "line")
    assert best["props"]["interpolate"] == "step-after" and best["encoding"]["y"]["field"] == "best"
    ordered = rows.dropna(subset=["value"]).sort_values("when", kind="stable")
    drawn = [r["best"] for r in best["rows"]]
    assert drawn == list(np.maximum.accumulate(ordered["value"].to_numpy()))


def test_the_categories_board_against_a_person(boards):
    import leaderboard as lb
    from views import board, charts

    like = board.like_for_like_table(lb.ranking(track="erc"), "erc", "macro_f1")
    bars, marks = board.person_bars(like, "macro_f1")
    assert list(marks) == ["a person"]
    person = like.set_index("name").loc["a person", "Macro-F1 ↑"]
    assert marks["a person"] == pytest.approx(person)
    assert set(bars["name"]) == set(like["name"]) - {"a person"}
    figure = charts.score_bars(bars, "macro_f1", marks=marks)
    lines = vega.marks(figure, "rule")
    assert [r["at"] for line in lines for r in line["rows"]] == [pytest.approx(person)]
    (note,) = vega.marks(figure, "text")  # the line's name and value, above the bars
    assert note["rows"][0]["line"] == f"a person: {person:.2f}" and note["props"]["y"] < 0
