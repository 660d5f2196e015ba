"""A third track registered from outside the library (tests/polarity_track.py, the only code
that names it) goes everywhere the two built-in ones go: `etclib template`, `validate`,
`score` and `compare`; `leaderboard seed-baselines`, `submit`, the worker, `show` and `export`;
the site's Leaderboard (its track choice), Submit and Compare pages. Expected accuracies are
computed here from the tiny corpus's labels.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.cli import main as etclib
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from leaderboard.__main__ import main as board
from tests import polarity_track
from tests.conftest import REPO


@pytest.fixture
def polarity(tiny_corpus, monkeypatch):
    """The plugin registered on the tiny corpus; the test items and their polarities. No
    scoring threads: the worker command or the test scores."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    monkeypatch.setenv("ETC_LB_WORKERS", "0")
    st.cache_data.clear()
    polarity_track.register()
    its = split_items(load_corpus(tiny_corpus), "test")
    yield its, [polarity_track.polarity(it.label) for it in its]
    polarity_track.unregister()
    st.cache_data.clear()
    lb.close_all()


def _run(main, args, capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _files(tmp_path, tiny_corpus, refs, capsys):
    """The template filled twice: with every reference (right) and "neutral" but for the first
    item (mostly neutral)."""
    template = tmp_path / "template.jsonl"
    args = ["template", "--track", "polarity", "--out", str(template), "--data", str(tiny_corpus)]
    assert _run(etclib, args, capsys)[0] == 0
    records = [json.loads(line) for line in template.read_text("utf-8").splitlines()]
    assert [r["polarity"] for r in records] == [""] * len(refs)
    paths = {}
    for name, values in (
        ("right", refs),
        ("neutral", ["positive"] + ["neutral"] * (len(refs) - 1)),
    ):
        paths[name] = tmp_path / f"{name}.jsonl"
        lines = [json.dumps({**r, "polarity": v}) for r, v in zip(records, values)]
        paths[name].write_text("\n".join(lines) + "\n", "utf-8")
    return template, paths


def test_the_cli_writes_checks_scores_and_compares_its_files(
    polarity, tiny_corpus, tmp_path, capsys
):
    its, refs = polarity
    template, paths = _files(tmp_path, tiny_corpus, refs, capsys)
    data = ["--data", str(tiny_corpus)]
    code, _, err = _run(etclib, ["validate", str(template), *data], capsys)
    assert code == 1 and "'polarity' must be one of positive, negative, neutral" in err
    code, out, _ = _run(etclib, ["validate", str(paths["right"]), "--json", *data], capsys)
    assert code == 0 and json.loads(out) | {"sha256": ""} == {
        "valid": True,
        "track": "polarity",
        "items": len(its),
        "format": "jsonl",
        "sha256": "",
        "warnings": [],
    }
    neutral = ["positive"] + ["neutral"] * (len(its) - 1)
    expected = 100 * sum(p == r for p, r in zip(neutral, refs)) / len(its)
    code, out, _ = _run(etclib, ["score", str(paths["neutral"]), "--json", *data], capsys)
    got = json.loads(out)
    assert code == 0 and got["polarity_accuracy"] == pytest.approx(expected)
    assert got["signature"]["track"] == "polarity" and got["signature"]["polarity"]
    args = ["compare", str(paths["neutral"]), str(paths["right"]), "--json", *data]
    code, out, _ = _run(etclib, args, capsys)
    compared = json.loads(out)["metrics"]["polarity_accuracy"]
    assert code == 0 and compared["difference"] == pytest.approx(100 - expected)


def test_the_board_seeds_stores_scores_shows_and_exports_it(
    polarity, tiny_corpus, tmp_path, capsys
):
    its, refs = polarity
    _, paths = _files(tmp_path, tiny_corpus, refs, capsys)
    seed = ["seed-baselines", "--no-reported", "--backends", "", "--erc-backends", ""]
    assert _run(board, [*seed, "--no-score"], capsys)[0] == 0  # the plugin's own baseline
    ids = {}
    for name in paths:
        code, out, _ = _run(board, ["submit", str(paths[name]), "--name", name], capsys)
        assert code == 0, out
        ids[name] = out.split()[0]
    assert _run(board, ["worker", "--once", "--timeout", "300"], capsys)[0] == 0
    assert {lb.status(i)["status"] for i in ids.values()} == {"scored"}
    assert {lb.status(i)["track"] for i in ids.values()} == {"polarity"}

    ranking = lb.ranking(track="polarity").set_index("name")
    assert ranking.attrs["sort_by"] == "polarity_accuracy"
    assert ranking.loc["right", "polarity_accuracy"] == pytest.approx(100)
    assert ranking.loc["right", "rank"] == 1
    floor = ranking.loc["Always neutral (polarity)"]
    assert floor["kind"] == "baseline" and floor["baseline"] == "always-neutral"
    assert ranking.attrs["floors"] == {"always-neutral": pytest.approx(floor["polarity_accuracy"])}
    share = sum(v == "neutral" for v in ["positive"] + ["neutral"] * (len(its) - 1)) / len(its)
    assert ranking.loc["neutral", "trivial"] == (
        f"near-constant: one value “neutral” on {share:.0%} of items"
    )

    code, out, _ = _run(board, ["show", "--track", "polarity"], capsys)
    assert code == 0 and out.startswith("Polarity track, computed on this project's test split")
    assert "Polarity accuracy ↑" in out and "Always neutral (polarity)" in out
    assert "Copy of the utterance" not in out
    code, out, _ = _run(board, ["export", "--track", "polarity", "--format", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and {"polarity_accuracy", "polarity_accuracy_lo"} <= set(rows[0])
    assert {r["name"] for r in rows} == {"right", "neutral", "Always neutral (polarity)"}
    code, out, _ = _run(board, ["export", "--track", "polarity", "--format", "json"], capsys)
    exported = json.loads(out)
    assert (exported["track"], exported["sort_by"], exported["reported"]) == (
        "polarity",
        "polarity_accuracy",
        [],
    )


def _page(name: str, **params: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "site_pages" / name), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_site_offers_submits_shows_and_compares_it(polarity, tiny_corpus, tmp_path, capsys):
    its, refs = polarity
    _, paths = _files(tmp_path, tiny_corpus, refs, capsys)

    submit = _page("submit.py")
    labels = {b.proto.label for b in submit.get("download_button")}
    assert {"Polarity template (JSON Lines)", "Polarity template (CSV)"} <= labels
    data = paths["right"].read_bytes()
    submit.file_uploader(key="submit_file").upload("right.jsonl", data).run()
    (accepted,) = [s.value for s in submit.success]  # Markdown-escaped
    assert f"valid, {len(its)} predictions" in accepted and "polarity track" in accepted
    submit.text_input(key="submit_name").set_value("right")
    next(b for b in submit.button if b.proto.label == "Submit for scoring").click().run()
    assert any("Received as submission" in s.value for s in submit.success), [
        e.value for e in submit.error
    ]
    neutral = lb.submit(paths["neutral"], {"name": "neutral"}).id
    assert lb.process_jobs() == 2

    board_page = _page("leaderboard.py", track="polarity")
    assert board_page.session_state["lb_track"] == "polarity"  # the track choice offers it
    (table,) = [
        df.value for df in board_page.dataframe if "Polarity accuracy ↑ [95% CI]" in df.value
    ]
    assert list(table["name"]) == ["right", "neutral"]

    right = lb.ranking(track="polarity").set_index("name").loc["right", "id"]
    compare = _page("compare.py", track="polarity", a=neutral, b=right)
    (metrics,) = [df.value for df in compare.dataframe if "verdict" in df.value]
    row = metrics.set_index("key").loc["polarity_accuracy"]
    assert row["metric"] == "Polarity accuracy" and row["B"] == "100.00"
