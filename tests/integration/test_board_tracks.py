"""Both tracks everywhere a visitor or a CLI user reads a board: exports (page and CLI), `show`,
an entry's detail, the floor lines on each track's chart."""

from __future__ import annotations

import csv
import io
import json

import pytest
from streamlit.testing.v1 import AppTest

from tests import vega
from tests.conftest import REPO


@pytest.fixture
def boards(tiny_corpus, monkeypatch):
    """Both boards on the tiny corpus: the copy floor on transcriptions; the majority and prior
    floors and a visitor's "always joy" file on categories. Returns the ERC entry ids by name."""
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    lb.seed_baselines(reported=False, backends=("copy", "majority", "prior"))
    its = items(load_corpus(tiny_corpus), "test")
    joy = dumps_jsonl(((it.key, ("joy",)) for it in its), "erc").encode()
    lb.submit(joy, {"name": "Always joy"}, file_name="joy.jsonl")
    lb.process_jobs()
    yield dict(zip(*[lb.ranking(track="erc")[c] for c in ("name", "id")]))
    lb.close_all()


def test_erc_export_is_the_categories_board(boards):
    import leaderboard as lb

    transcription, erc = lb.export_csv("board"), lb.export_csv("board", track="erc")
    assert transcription != erc
    header = next(csv.reader(io.StringIO(erc)))
    assert {"macro_f1", "macro_f1_lo", "micro_f1"} <= set(header)
    assert "rougeL" not in header and "rougeL" in next(csv.reader(io.StringIO(transcription)))
    names = {r["name"] for r in csv.DictReader(io.StringIO(erc))}
    assert names == set(boards) >= {"Always joy", "Majority label set (etclib)"}
    data = json.loads(lb.export_json("board", track="erc"))
    assert data["track"] == "erc" and data["sort_by"] == "macro_f1"
    assert {r["name"] for r in data["board"]} == set(boards) and data["reported"] == []


def test_cli_export_and_show_take_a_track(boards, capsys):
    from leaderboard.__main__ import main

    assert main(["export", "--track", "erc", "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert "macro_f1" in header and "rougeL" not in header
    assert main(["export", "--track", "erc", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["track"] == "erc"
    assert main(["show", "--track", "erc"]) == 0
    shown = capsys.readouterr().out
    assert "Always joy" in shown and "Macro-F1 ↑" in shown and "a person" in shown
    assert "Copy of the utterance" not in shown  # the transcriptions board is not printed
    assert main(["show", "--track", "erc", "--json"]) == 0
    assert {r["name"] for r in json.loads(capsys.readouterr().out)["board"]} == set(boards)
    assert main(["show"]) == 0  # both boards, the transcriptions one first
    both = capsys.readouterr().out
    assert both.index("Copy of the utterance") < both.index("Always joy")


def test_erc_entry_detail_has_only_its_tracks_fields(boards):
    import leaderboard as lb
    from views.board import detail_view

    info = lb.detail(boards["Always joy"])
    view = detail_view(info)
    assert view["verbosity"] == {}  # no "units per prediction –", no lengths
    assert set(info["scores"]) == {"erc", "erc_loo"}  # its scores and the like-for-like ones
    assert not {"BLEU-4 ↑", "ROUGE-L ↑"} & set(view["scores"]["metric"])
    assert "Macro-F1 ↑" in set(view["scores"]["metric"])
    items = lb.per_item(boards["Always joy"])
    assert "reference" not in items.columns and "pred_chars" not in items.columns
    assert set(items["prediction"]) == {"joy"} and "label" in items.columns


def test_leaderboard_page_exports_and_floors_on_the_categories_track(boards):
    import leaderboard as lb

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)
    at.query_params["track"] = "erc"
    at.run()
    at.switch_page("site_pages/leaderboard.py").run()
    assert not at.exception, [e.value for e in at.exception]
    files = {b.proto.label: b for b in at.get("download_button")}
    assert "Board (CSV)" in files and "Published results (CSV)" not in files
    assert "The categories board, as shown above." in [c.value for c in at.caption]
    # The file the button downloads is the categories board (its deferred data, as clicked).
    from views.board import export_file, exports

    assert exports("erc")["board_csv"][1] == "etc_leaderboard_erc.csv"
    assert export_file("board_csv", "erc").decode() == lb.export_csv("board", track="erc")
    # The chart draws the categories board's floors, as its caption promises.
    at.session_state["lb_view"] = "Charts"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    chart = vega.shown(at)[0]
    notes = vega.texts(chart)
    assert any(n.startswith("majority baseline (floor)") for n in notes), notes
    assert any(n.startswith("prior baseline (floor)") for n in notes), notes
    assert vega.title(chart).startswith("Macro-F1 ↑")
    # the board as it is shown: the trivial badge, the score headed by name and direction
    at.session_state["lb_view"] = "Ranking table"
    at.run()
    table = next(d.value for d in at.dataframe if "rank_band" in d.value.columns)
    assert table.set_index("name").loc["Always joy", "kind"] == "⚠ trivial"
    assert "Macro-F1 ↑ [95% CI]" in table.columns


def test_always_joy_is_flagged_on_the_categories_board(boards):
    import leaderboard as lb
    from views.board import board_table

    ranking = lb.ranking(track="erc")
    row = ranking.set_index("name").loc["Always joy"]
    assert row["trivial"] == "one label set (joy) for every item"
    table = board_table(ranking, "macro_f1", "erc").set_index("name")
    assert table.loc["Always joy", "kind"] == "⚠ trivial"
    assert table.loc["Always joy", "flag"] == "⚠ trivial: one label set (joy) for every item"
    assert table.loc["Majority label set (etclib)", "kind"] == "baseline (floor)"
