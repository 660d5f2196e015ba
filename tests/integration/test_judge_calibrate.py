"""`etclib judge calibrate` end to end: CLI -> runner -> real SDK -> fake server -> studies db.

The scripted judge splits a text into sentences (one unit per "。"-ended sentence) and calls a
unit Supported when it occurs verbatim in the target, so the expected numbers are worked out
here from the texts alone.
"""

from __future__ import annotations

import json
import re
import statistics

import pytest

from etclib.cli import main
from etclib.data.corpus import load_corpus
from etclib.data.task import items
from etclib.studies import judge_calibration as cal
from etclib.tracks.predictions import dumps_jsonl
from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401


def _sentences(text: str) -> int:
    return len([s for s in re.findall(r"[^。]+。?", text) if s.strip("。 \n")])


def _argv(env, tiny_corpus, *extra: str) -> list[str]:
    return [
        "judge",
        "calibrate",
        "--provider",
        env.provider,
        "--model",
        FAKE_MODEL,
        "--data",
        str(tiny_corpus),
        *extra,
    ]


def test_calibrate_prints_the_units_table_and_both_checks(judge_env, tiny_corpus, capsys):  # noqa: F811
    refs = [it.reference for it in items(load_corpus(tiny_corpus), "test")]
    counts = [_sentences(r) for r in refs]
    mean, sd = statistics.fmean(counts), statistics.pstdev(counts)
    d = (mean - 1.35) / 0.64
    verdict = "close" if abs(d) <= 0.2 else "somewhat off" if abs(d) <= 0.5 else "far from"

    assert main(_argv(judge_env, tiny_corpus, "--pairs", "6")) == 0
    out = capsys.readouterr().out
    assert f"units per reference (all {len(refs)} test references, 0 failed):" in out
    assert re.search(rf"this judge\s+{mean:.2f}\s+{sd:.2f}", out), out
    assert re.search(r"paper \(Table 3\)\s+1\.35\s+0\.64", out), out
    assert f"verdict: {verdict}" in out and f"d = {d:.2f}" in out
    # a reference against itself: every unit supported; against another dialogue's: none
    assert "self check (references against themselves): F1 100.0 (P 100.0, R 100.0; 6 of 6" in out
    assert "shuffled check (against another dialogue's reference): F1 0.0 (P 0.0, R 0.0" in out
    assert "prompts v2" in out and "decompose-v2-" in out
    assert out.rstrip().splitlines()[-1].startswith("stored: ")


def test_calibrate_json_sample_and_storage(judge_env, tiny_corpus, capsys):  # noqa: F811
    argv = _argv(judge_env, tiny_corpus, "--sample", "5", "--seed", "3", "--pairs", "3", "--json")
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["sample"] == 5 and report["seed"] == 3
    refs = report["references"]
    assert refs["n"] == refs["n_decomposed"] == 5 and refs["n_failed"] == 0
    assert (refs["paper_units_mean"], refs["paper_units_sd"]) == (1.35, 0.64)
    assert report["self_check"]["f1"] == 100.0 and report["self_check"]["n"] == 3
    assert report["shuffled_check"]["f1"] == 0.0
    assert report["signature"].startswith(f"provider:{judge_env.provider}|model:{FAKE_MODEL}|")
    # the same seed picks the same sample
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["run_id"] == report["run_id"]
    runs = cal.list_runs()
    assert len(runs) == 1  # the same run replaced, not added
    row = runs.iloc[0]
    assert row["signature"] == again["signature"] and row["prompts"] == "v2"
    assert row["ref_units_mean"] == pytest.approx(refs["units_mean"])
    assert json.loads(row["report"])["references"]["verdict"] == refs["verdict"]


def test_calibrate_uses_the_judge_cache(judge_env, tiny_corpus, capsys):  # noqa: F811
    argv = _argv(judge_env, tiny_corpus, "--no-check", "--no-store", "--json")
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    n_refs = first["references"]["n"]
    # one decomposition per reference; the checks reuse them and only add entailments
    decomposed = sum(judge_env.responder.decompose_calls.values())
    assert decomposed == n_refs
    calls = len(judge_env.server.requests)
    assert first["usage"]["calls"] == calls
    assert main(argv) == 0
    second = json.loads(capsys.readouterr().out)
    assert len(judge_env.server.requests) == calls  # everything came from the cache
    assert second["usage"]["calls"] == 0 and second["usage"]["cache_hits"] > 0
    assert second["references"] == first["references"]


def test_calibrate_a_paper_row_predictions_file(judge_env, tiny_corpus, tmp_path, capsys):  # noqa: F811
    its = items(load_corpus(tiny_corpus), "test")
    f = tmp_path / "p.jsonl"
    # two sentences each: 2.00 (0.00) units per prediction
    f.write_text(dumps_jsonl((it.key, "嬉しかった。驚いた。") for it in its), encoding="utf-8")
    argv = _argv(judge_env, tiny_corpus, "--predictions", str(f), "--paper-row", "gpt-4.1 4-shot")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"units per prediction ({f}, {len(its)} items, 0 failed): 2.00 (0.00)" in out
    # Table 3: GPT-4.1 4-shot 1.96 (0.76) -> d = 0.04 / 0.76, close
    line = next(x for x in out.splitlines() if "4-shot" in x and "GPT-4.1" in x)
    assert "1.96 (0.76): close to the paper's  <- this file" in line
    ft = next(x for x in out.splitlines() if "fine-tuned" in x)
    assert "1.39 (0.60): far from the paper's" in ft and "this file" not in ft


def test_calibrate_refuses_an_unknown_paper_row(judge_env, tiny_corpus, tmp_path, capsys):  # noqa: F811
    its = items(load_corpus(tiny_corpus), "test")
    f = tmp_path / "p.jsonl"
    f.write_text(dumps_jsonl((it.key, "嬉しかった。") for it in its), encoding="utf-8")
    assert main(_argv(judge_env, tiny_corpus, "--predictions", str(f), "--paper-row", "llama")) != 0
    assert "matches more than one row of Table 3" in capsys.readouterr().err
    assert not judge_env.server.requests  # refused before any call


def test_calibrate_fails_when_the_judge_is_lenient(judge_env, tiny_corpus, capsys):  # noqa: F811
    judge_env.responder.label_of = lambda unit, target: "Supported"  # supports anything
    assert main(_argv(judge_env, tiny_corpus, "--pairs", "4", "--no-store")) == 1
    out = capsys.readouterr().out
    assert "shuffled check (against another dialogue's reference): F1 100.0" in out
    assert "NOT OK" in out and "too lenient" in out


def test_calibrate_stops_at_the_preflight_with_a_bad_key(judge_env, tiny_corpus, capsys):  # noqa: F811
    judge_env.server.api_key = "the-right-key"  # the client sends another: 401
    assert main(_argv(judge_env, tiny_corpus)) == 1
    out = capsys.readouterr().out
    assert "problem: pre-flight:" in out and "NOT OK" in out
    assert len(cal.list_runs()) == 0


def test_the_judge_vs_human_page_shows_a_stored_calibration(
    judge_env,  # noqa: F811
    tiny_corpus,
    tmp_path,
    monkeypatch,
    capsys,
):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    from views.judge_vs_human import TABS

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    its = items(load_corpus(tiny_corpus), "test")
    f = tmp_path / "p.jsonl"
    f.write_text(dumps_jsonl((it.key, "嬉しかった。驚いた。") for it in its), encoding="utf-8")
    argv = _argv(judge_env, tiny_corpus, "--predictions", str(f), "--paper-row", "fine-tuned")
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)

    st.cache_data.clear()
    at = AppTest.from_file(str(REPO / "site_pages" / "judge_vs_human.py"), default_timeout=90)
    at.run()
    at.session_state["jvh_tab"] = TABS[3]
    at.run()
    assert not at.exception, at.exception
    assert at.header[0].value == "Study 4: how this judge compares with the paper's"
    (table,) = [df.value for df in at.dataframe if "the paper's" in df.value.columns]
    refs = report["references"]
    first = table.iloc[0]
    assert first["this judge"] == f"{refs['units_mean']:.2f} ({refs['units_sd']:.2f})"
    assert first["the paper's"] == "1.35 (0.64)"
    assert first["verdict"].startswith(refs["verdict"])
    assert list(table["this judge"][1:3]) == ["100.00", "0.00"]
    assert list(table["verdict"][1:3]) == ["ok", "ok"]
    last = table.iloc[3]
    assert last["this judge"] == "2.00 (0.00)"
    assert last["the paper's"].endswith("fine-tuned (QLoRA, mean of 5 seeds): 1.39 (0.60)")
    captions = " ".join(c.value for c in at.caption)
    assert report["signature"] in captions
    st.cache_data.clear()
    st.cache_resource.clear()  # the page's corpus is this test's tiny one: not for the next test
