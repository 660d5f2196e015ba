"""Study 1: judge-labels runs against the loopback fake LLM server, stored and compared."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from etclib.cli import judge_labels as cli
from etclib.core.errors import ConfigError, JudgeError
from etclib.data.corpus import CATEGORIES
from etclib.judge.cache import AnswerCache
from etclib.studies import labeljudge
from tests.fakes import FakeLLMServer
from tests.fixtures.llm import _transcription, majority_responder
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(argv))


@pytest.mark.usefixtures("studies_db")
def test_cli_run_is_stored_cached_and_compared(corpus, capsys, monkeypatch):
    with FakeLLMServer(majority_responder(corpus)) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        argv = [
            "--provider",
            "openai",
            "--model",
            "fake-model",
            "--limit",
            "60",
            "--resamples",
            "50",
        ]
        assert _cli(argv) == 0
        first = server.count("openai", answered=True)
        out = capsys.readouterr().out
        assert 0 < first <= 60  # identical transcriptions are asked once
        cache = AnswerCache()  # one stored answer per distinct question, in the judge's cache
        assert cache.count("labels") == first
        cache.close()
        assert "60 of 60 transcriptions labelled" in out
        request = server.requests[0]
        assert request.model == "fake-model" and request.settings["temperature"] == 0
        assert "心情記述" in request.user

        # A rerun with the same signature is answered from the cache and replaces the run.
        assert _cli(argv + ["--json"]) == 0
        assert server.count("openai") == first
        report = json.loads(capsys.readouterr().out)
        assert report["cached"] == 60 and report["labelled"] == 60

    runs = labeljudge.list_runs()
    assert len(runs) == 1
    run = runs.iloc[0]
    assert run["model"] == "fake-model" and run["split"] == "test" and run["n_items"] == 60
    assert "prompt:etc-label-judge-v" in run["signature"] and "limit:60" in run["signature"]

    study = labeljudge.label_study(corpus, run_id=run["run_id"], n_resamples=50)
    assert study.n_items == 60 and study.split == "test"
    items = [u for d in corpus.split("test") for u in d.utterances][:60]
    for row in study.table.to_dict("records"):
        majority = np.array([row["category"] in u.label for u in items])
        # the fake judge answers the human majority, so it agrees perfectly where there is
        # variation, and kappa is undefined where the category is never (or always) chosen
        if 0 < majority.sum() < len(items):
            assert row["judge_vs_majority"] == pytest.approx(1.0)
            assert row["judge_rate"] == pytest.approx(majority.mean())
        else:
            assert math.isnan(row["judge_vs_majority"])
    assert int(study.confusion.to_numpy().trace()) >= 60
    assert report["categories"][0]["category"] == "joy"


@pytest.mark.usefixtures("studies_db")
def test_gemini_provider_through_fake_server(corpus, monkeypatch):
    with FakeLLMServer(majority_responder(corpus)) as server:
        monkeypatch.setenv("GEMINI_API_KEY", "test-key")
        monkeypatch.setenv("ETC_GEMINI_BASE_URL", server.gemini_base_url)
        run = labeljudge.judge_labels(corpus, "gemini", "gemini-fake", split="valid", limit=12)
        assert server.count("gemini") == run.n_items - run.n_cached
        assert run.n_labelled == 12 and run.n_failed == 0
        assert server.requests[0].system.startswith("あなたは")
    assert labeljudge.list_runs()["provider"].tolist() == ["gemini"]
    labels = labeljudge.run_labels(run.run_id)
    items = [u for d in corpus.split("valid") for u in d.utterances][:12]
    assert {u.key: u.label for u in items} == labels


@pytest.mark.usefixtures("studies_db")
def test_unusable_answers_are_stored_as_unlabelled(corpus, monkeypatch):
    items = [u for d in corpus.split("test") for u in d.utterances][:8]
    bad = items[0].transcription.strip()
    good = majority_responder(corpus)

    def respond(req):
        return "I cannot decide." if _transcription(req) == bad else good(req)

    with FakeLLMServer(respond) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        run = labeljudge.judge_labels(corpus, "openai", "m", limit=8, attempts=2, backoff=0)
        assert server.count(where=lambda r: _transcription(r) == bad) == 2  # retried once
    assert run.n_failed == 1 and run.n_labelled == 7 and "no JSON" in run.errors[0]
    assert items[0].key not in labeljudge.run_labels(run.run_id)


@pytest.mark.usefixtures("studies_db")
def test_nothing_stored_when_no_answer_is_usable(corpus, monkeypatch):
    with FakeLLMServer(lambda req: "no") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        with pytest.raises(JudgeError, match="labelled none of 3"):
            labeljudge.judge_labels(corpus, "openai", "m", limit=3, attempts=1)
    assert labeljudge.list_runs().empty


def test_wrong_key_stops_the_run(corpus, monkeypatch):
    with FakeLLMServer(lambda req: "{}", api_key="right") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "wrong")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        with pytest.raises(JudgeError, match="HTTP 401"):
            labeljudge.judge_labels(corpus, "openai", "m", limit=3, workers=1)


@pytest.mark.usefixtures("studies_db")
def test_bad_settings(corpus):
    with pytest.raises(ConfigError, match="Unknown provider"):
        labeljudge.judge_labels(corpus, "claude", "m")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        labeljudge.judge_labels(corpus, "openai", "m", limit=1)
    with pytest.raises(JudgeError, match="No judge-labels run"):
        labeljudge.label_study(corpus, run_id="nope")


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa for two yes/no vectors, written out from its definition."""
    p_o = np.mean(a == b)
    p_e = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    return (p_o - p_e) / (1 - p_e)


def test_yardstick_without_run(corpus):
    study = labeljudge.label_study(corpus, "test", n_resamples=0)
    assert study.run is None and study.confusion is None and study.n_items == 1010
    assert "judge_vs_majority" not in study.table.columns
    items = [u for d in corpus.split("test") for u in d.utterances]
    for row in study.table.to_dict("records"):
        c = row["category"]
        votes = np.array([[c in a for a in u.annotations] for u in items])
        kappas = []
        for i in range(3):
            j, k = [x for x in range(3) if x != i]
            kappas.append(_kappa(votes[:, i], votes[:, j] & votes[:, k]))
        assert row["human_vs_others"] == pytest.approx(np.mean(kappas))
        # Fleiss for one yes/no category with 3 raters, from its definition
        yes = votes.sum(axis=1)
        p_i = (yes * (yes - 1) + (3 - yes) * (2 - yes)) / 6
        p = yes.sum() / (3 * len(items))
        p_e = p * p + (1 - p) * (1 - p)
        assert row["fleiss_humans"] == pytest.approx((p_i.mean() - p_e) / (1 - p_e))
    assert len(study.yardstick) == 3 * len(CATEGORIES)
