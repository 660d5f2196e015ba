"""Trivial submissions are recognised by the board itself (leaderboard/trivial.py): constant or
near-constant files, copies of the utterance, a baseline's predictions, all-one-label ERC files;
badged "⚠ trivial" with the reason (never "✅ scored here"), with a warning when one ranks above
a real entry."""

from __future__ import annotations


def test_an_uploaded_constant_file_is_badged_trivial_on_the_board(tiny_corpus, monkeypatch):
    """Submit + worker + board view: the constant file ranks above a real (if poor) entry and
    is badged trivial with its reason, the board warns, the detail says so too."""
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl
    from views.board import board_table, detail_view

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    its = items(load_corpus(tiny_corpus), "test")
    constant = its[0].reference  # one real transcription, for every item: it overlaps some
    files = {
        "Constant upload": [constant] * len(its),
        "Oracle": [it.reference for it in its],
        "Poor but real": [f"番号{i}" for i in range(len(its))],
        "Copycat": [it.utterance if i % 4 else f"別{i}" for i, it in enumerate(its)],
    }
    ids = {}
    for name, texts in files.items():
        data = dumps_jsonl(zip((it.key for it in its), texts)).encode()
        ids[name] = lb.submit(data, {"name": name}, file_name=f"{name}.jsonl").id
    lb.process_jobs()

    ranking = lb.ranking()
    why = dict(zip(ranking["name"], ranking["trivial"]))
    quoted = constant if len(constant) <= 30 else constant[:29] + "…"
    assert why["Constant upload"] == f"one text “{quoted}” for every item"
    assert why["Copycat"].startswith("the utterance itself copied on 7")
    assert why["Oracle"] == why["Poor but real"] == ""
    names = list(ranking["name"])
    assert names.index("Constant upload") < names.index("Poor but real")

    table = board_table(ranking, ranking.attrs["sort_by"]).set_index("name")
    assert table.loc["Constant upload", "kind"] == "⚠ trivial"  # never "✅ scored here"
    assert table.loc["Constant upload", "flag"] == f"⚠ trivial: {why['Constant upload']}"
    assert table.loc["Oracle", "kind"] == "✅ scored here" and table.loc["Oracle", "flag"] == ""
    warning = ranking.attrs["trivial_warning"]
    assert "Constant upload (one text" in warning and "above entries" in warning
    assert "Oracle" not in warning

    info = lb.detail(ids["Constant upload"])
    assert info["trivial"] == why["Constant upload"]
    assert detail_view(info)["badge"] == f"⚠ trivial ({why['Constant upload']})"
    assert lb.detail(ids["Oracle"])["trivial"] == ""
    # The exports carry the reason too.
    assert why["Constant upload"] in lb.export_csv("board")


def test_home_and_leaderboard_pages_show_the_badge_and_warning(tiny_corpus, monkeypatch):
    from streamlit.testing.v1 import AppTest

    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl
    from tests.conftest import REPO

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    its = items(load_corpus(tiny_corpus), "test")
    for name, texts in {
        "Constant upload": [its[0].reference] * len(its),
        "Poor but real": [f"番号{i}" for i in range(len(its))],
    }.items():
        lb.submit(dumps_jsonl(zip((it.key for it in its), texts)).encode(), {"name": name})
    lb.process_jobs()
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    top = at.table[0].value  # Home's top five: a static table, headed in words
    kind = top.set_index("name").loc["Constant upload", "kind"]
    assert kind.startswith("⚠ trivial · ⚠ trivial: one text")
    assert any("1 trivial entry ranks above" in w.value for w in at.warning)
    at.switch_page("site_pages/leaderboard.py").run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "rank_band" in d.value.columns)
    assert table.set_index("name").loc["Constant upload", "kind"] == "⚠ trivial"
    assert any("Constant upload (one text" in w.value for w in at.warning)
