"""Batch judging: `etclib score --metrics judge --batch` sends the uncached
questions through OpenAI's Batch API or Gemini's batch mode (the real SDKs against the fake
server's batch endpoints), fills the same cache, and the online pass that follows makes no call
for a question the batch answered. A killed run resumes the same batch; expired and failed
batch items are asked online; `--service-tier flex` reaches OpenAI's online calls."""

from __future__ import annotations

import collections
import json
import math
import os
import subprocess
import sys

import pytest

from etclib.cli import main
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from tests.conftest import REPO
from tests.fakes.judge_fixtures import FAKE_MODEL, point_provider_at
from tests.fakes.judge_responder import ScriptedJudge, request_kind
from tests.fakes.llm_server import FakeLLMServer

BATCHED = ("openai", "gemini")


#: list prices (USD per 1M input, output tokens) read from the providers' pages, 2025-11
PRICES = {"gpt-4.1-mini": (0.40, 1.60), "gemini-2.5-flash": (0.30, 2.50)}


PRICED = {"openai": "gpt-4.1-mini", "gemini": "gemini-2.5-flash"}


JUDGE_KEYS = ("precision", "recall", "f1", "judge_errors", "n_judged")


@pytest.fixture(params=BATCHED)
def fake(request, tiny_corpus, monkeypatch):
    """A fake server for one provider with a batch interface; polls every 10 ms."""
    with FakeLLMServer(ScriptedJudge(), hang_seconds=10.0) as server:
        point_provider_at(monkeypatch, request.param, server)
        monkeypatch.setenv("ETC_JUDGE_BATCH_POLL", "0.01")
        monkeypatch.setenv("ETC_JUDGE_BACKOFF", "0.01")
        monkeypatch.setenv("ETC_JUDGE_MAX_ATTEMPTS", "2")
        server.provider = request.param
        yield server


def preds_file(path, tiny_corpus) -> str:
    """Predictions of three kinds: the reference, its first sentence plus another one, and an
    unrelated text (so precision and recall are neither all 1 nor all 0)."""
    rows = []
    for i, it in enumerate(split_items(load_corpus(tiny_corpus), "test")):
        first = it.reference.split("。")[0] + "。"
        text = (it.reference, first + "まったく別の気持ちになった。", "関係のない話をした。")[i % 3]
        rows.append((it.key, text))
    path.write_text(dumps_jsonl(rows), encoding="utf-8")
    return str(path)


def score(server, tiny_corpus, preds, capsys, *more, model=FAKE_MODEL) -> tuple[int, dict, str]:
    argv = ["score", preds, "--data", str(tiny_corpus), "--metrics", "judge", "--json"]
    argv += ["--judge-provider", server.provider, "--judge-model", model, *more]
    code = main(argv)
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else {}, out.err


def use_cache(monkeypatch, tmp_path, name: str) -> None:
    """A judge cache of its own (a fresh run that has asked nothing)."""
    monkeypatch.setenv("ETC_CACHE_DIR", str(tmp_path / name))


def online_baseline(server, tiny_corpus, preds, capsys, monkeypatch, tmp_path, **kw):
    """The online run's scores and the questions it asked (request texts), in a cache of its
    own; the server's logs are cleared after it."""
    use_cache(monkeypatch, tmp_path, "online")
    code, out, _ = score(server, tiny_corpus, preds, capsys, **kw)
    assert code == 0
    asked = sorted(r.text for r in server.requests)
    server.reset()
    use_cache(monkeypatch, tmp_path, "batch")
    return out, asked


def batch_texts(server, answered: bool | None = None) -> list[str]:
    items = server.batches.items
    return sorted(r.text for r in items if answered is None or (r.fault is None) == answered)


def test_a_batch_run_scores_as_the_online_run_without_an_online_call(
    fake, tiny_corpus, tmp_path, capsys, monkeypatch
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    online, asked = online_baseline(fake, tiny_corpus, preds, capsys, monkeypatch, tmp_path)
    assert 0 < online["f1"] < 100

    code, out, err = score(fake, tiny_corpus, preds, capsys, "--batch")
    assert code == 0
    assert {k: out[k] for k in JUDGE_KEYS} == {k: online[k] for k in JUDGE_KEYS}
    # the batches carried exactly the online run's questions, and nothing went online
    assert batch_texts(fake) == asked
    assert fake.count() == 0
    p = fake.provider
    assert fake.batches.count(f"{p} batches.create") == 2  # decompositions, then entailments
    assert out["judge_batch"]["stages"][0]["answered"] + out["judge_batch"]["stages"][1][
        "answered"
    ] == len(asked)
    assert out["judge_run"] == {"batch": True, "service_tier": "default"}
    assert "cost saved: unknown (no batch price for model fake-judge)" in err

    # a second batch run finds everything cached: no batch, no call
    fake.reset()
    code, again, _ = score(fake, tiny_corpus, preds, capsys, "--batch")
    assert code == 0 and again["f1"] == online["f1"]
    assert fake.batches.count(f"{p} batches.create") == 2 and fake.count() == 0


def test_the_cost_saved_is_half_the_online_price(fake, tiny_corpus, tmp_path, capsys):
    model = PRICED[fake.provider]
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    code, out, err = score(fake, tiny_corpus, preds, capsys, "--batch", model=model)
    assert code == 0 and fake.count() == 0
    # the fake counts tokens as characters: the prompt's and the answer's
    tokens_in = sum(len(r.text) for r in fake.batches.items)
    tokens_out = sum(len(r.reply) for r in fake.batches.items)
    price_in, price_out = PRICES[model]
    online = (tokens_in * price_in + tokens_out * price_out) / 1e6
    batch = online / 2
    assert (
        f"cost saved ≈ ${online - batch:.4f} (batch: ${batch:.4f} instead of ${online:.4f})" in err
    )
    assert out["judge_batch"]["online_cost_usd"] == pytest.approx(online, abs=1e-6)
    assert out["judge_batch"]["batch_cost_usd"] == pytest.approx(batch, abs=1e-6)


def test_expired_and_failed_batch_items_are_asked_online_once(
    fake, tiny_corpus, tmp_path, capsys, monkeypatch
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    online, asked = online_baseline(fake, tiny_corpus, preds, capsys, monkeypatch, tmp_path)
    desk = fake.batches
    # OpenAI: 5 requests per batch answered before the window expires, the rest in the error
    # file; Gemini: an expired job has no result at all
    desk.answer_limit = 5
    # and one text's requests fail inside the batch (error file / inlined error)
    desk.item_fault = lambda req: 500 if "関係のない話" in req.text else None
    code, out, err = score(fake, tiny_corpus, preds, capsys, "--batch")
    assert code == 0
    assert {k: out[k] for k in JUDGE_KEYS} == {k: online[k] for k in JUDGE_KEYS}
    answered = batch_texts(fake, answered=True)
    online_now = sorted(r.text for r in fake.requests)
    # every question asked once: by the batch or online, never both
    assert sorted(answered + online_now) == asked
    assert not set(answered) & set(online_now)
    if fake.provider == "openai":
        assert 0 < len(answered) <= 10  # at most 5 per batch, the failing text's excluded
        assert "expired (the batch expired)" in err
    else:
        assert answered == [] and "JOB_STATE_EXPIRED" in err


def test_an_item_failing_in_the_batch_and_online_leaves_the_run_incomplete(
    fake, tiny_corpus, tmp_path, capsys
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    bad = "関係のない話"
    fake.batches.item_fault = lambda req: 500 if bad in req.text else None
    fake.inject(500, times=1000, match=lambda r: bad in r.text)
    code, out, err = score(fake, tiny_corpus, preds, capsys, "--batch")
    n_bad = sum(1 for line in open(preds, encoding="utf-8") if bad in line)
    assert code == 10 and out["judge_errors"] == n_bad
    assert f"judge incomplete: {n_bad} of" in err


def test_a_killed_batch_run_resumes_the_same_batch(
    fake, tiny_corpus, tmp_path, capsys, monkeypatch
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    online, asked = online_baseline(fake, tiny_corpus, preds, capsys, monkeypatch, tmp_path)
    p = fake.provider
    argv = ["score", preds, "--data", str(tiny_corpus), "--metrics", "judge", "--json"]
    argv += ["--judge-provider", p, "--judge-model", FAKE_MODEL, "--batch"]
    env = {**os.environ, "ETC_FAULTPOINTS": "judge_batch_submitted:1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-m", "etclib", *argv], env=env, capture_output=True, text=True
    )
    assert run.returncode == -9, run.stderr  # SIGKILL right after the first batch was created
    assert "faultpoint judge_batch_submitted:1" in run.stderr
    assert fake.batches.count(f"{p} batches.create") == 1
    assert fake.batches.count(f"{p} batches.get") == 0

    code, out, err = score(fake, tiny_corpus, preds, capsys, "--batch")
    assert code == 0
    assert {k: out[k] for k in JUDGE_KEYS} == {k: online[k] for k in JUDGE_KEYS}
    assert "resuming" in err
    # the decompositions' batch was read, not sent again; then the entailments' one
    assert fake.batches.count(f"{p} batches.create") == 2
    assert [s["resumed"] for s in out["judge_batch"]["stages"]] == [True, False]
    assert fake.count() == 0 and batch_texts(fake) == asked


def test_a_provider_without_a_batch_interface_refuses_batch(
    tiny_corpus, tmp_path, capsys, monkeypatch
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    with FakeLLMServer(ScriptedJudge()) as server:
        point_provider_at(monkeypatch, "anthropic", server)
        server.provider = "anthropic"
        code, _, err = score(server, tiny_corpus, preds, capsys, "--batch")
    assert code != 0
    assert "the Anthropic Claude judge has no batch interface" in err
    assert "--judge-provider openai or gemini" in err
    assert server.count() == 0


@pytest.fixture
def openai_fake(tiny_corpus, monkeypatch):
    with FakeLLMServer(ScriptedJudge(), hang_seconds=10.0) as server:
        point_provider_at(monkeypatch, "openai", server)
        server.provider = "openai"
        yield server


def test_service_tier_flex_reaches_openai_and_shares_the_cache(
    openai_fake, tiny_corpus, tmp_path, capsys
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    flex = ("--service-tier", "flex")
    code, out, _ = score(openai_fake, tiny_corpus, preds, capsys, *flex, model="gpt-5-mini")
    assert code == 0 and openai_fake.count() > 0
    assert {r.body.get("service_tier") for r in openai_fake.requests} == {"flex"}
    assert out["judge_run"] == {"batch": False, "service_tier": "flex"}
    assert "judge" in out["signature"] and "flex" not in out["signature"]["judge"]
    # the tier changes price and wait, not the answer: the same questions are cache hits
    openai_fake.reset()
    code, again, _ = score(openai_fake, tiny_corpus, preds, capsys, model="gpt-5-mini")
    assert code == 0 and again["f1"] == out["f1"] and openai_fake.count() == 0


@pytest.mark.parametrize(
    ("provider", "model", "words"),
    [
        ("openai", "gpt-4.1-mini", "model gpt-4.1-mini does not take it (flex applies to"),
        ("gemini", "gemini-2.5-flash", "the Google Gemini provider has no service tiers"),
    ],
)
def test_service_tier_flex_is_refused_where_it_does_not_apply(
    provider, model, words, tiny_corpus, tmp_path, capsys, monkeypatch
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    with FakeLLMServer(ScriptedJudge()) as server:
        point_provider_at(monkeypatch, provider, server)
        server.provider = provider
        code, _, err = score(
            server, tiny_corpus, preds, capsys, "--service-tier", "flex", model=model
        )
    assert code != 0 and words in err
    assert server.count() == 0


def test_a_large_stage_goes_as_several_jobs(fake, tiny_corpus, tmp_path, capsys, monkeypatch):
    from etclib.llm import providers

    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    use_cache(monkeypatch, tmp_path, "online")
    code, online, _ = score(fake, tiny_corpus, preds, capsys)
    assert code == 0
    kinds = collections.Counter(request_kind(r)[0] for r in fake.requests)
    fake.reset()
    use_cache(monkeypatch, tmp_path, "batch")
    per_job = 7
    monkeypatch.setattr(type(providers.get(fake.provider)), "batch_max_requests", per_job)

    code, out, _ = score(fake, tiny_corpus, preds, capsys, "--batch")
    assert code == 0 and out["f1"] == online["f1"] and fake.count() == 0
    jobs = [math.ceil(kinds[k] / per_job) for k in ("decompose", "entail")]
    assert [len(s["batch_ids"]) for s in out["judge_batch"]["stages"]] == jobs
    assert fake.batches.count(f"{fake.provider} batches.create") == sum(jobs)


def test_a_passing_fault_of_the_batch_interface_is_retried_a_lasting_one_stops(
    fake, tiny_corpus, tmp_path, capsys
):
    preds = preds_file(tmp_path / "p.jsonl", tiny_corpus)
    p, desk = fake.provider, fake.batches
    desk.fail(f"{p} batches.create", 500)
    desk.fail(f"{p} batches.get", 503, times=1)
    code, out, _ = score(fake, tiny_corpus, preds, capsys, "--batch")
    assert code == 0 and fake.count() == 0
    # the refused create was asked again (2 stages, one retry), and so was the read
    assert desk.count(f"{p} batches.create") == 3
    assert len(out["judge_batch"]["stages"][0]["batch_ids"]) == 1

    (tmp_path / "other.jsonl").write_text(
        open(preds, encoding="utf-8").read().replace("関係のない話", "別の話"), encoding="utf-8"
    )
    desk.fail(f"{p} batches.create", 401)
    code, _, err = score(fake, tiny_corpus, str(tmp_path / "other.jsonl"), capsys, "--batch")
    assert code != 0
    assert "batch interface failed (submit)" in err and "401" in err
    assert fake.count() == 0  # stopped: nothing asked online either


def test_judge_check_names_the_batch_figure_beside_the_online_one(openai_fake, tiny_corpus, capsys):
    args = ["judge", "check", "--provider", "openai", "--model", "gpt-4.1-mini"]
    args += ["--data", str(tiny_corpus)]
    assert main([*args, "--json"]) == 0
    est = json.loads(capsys.readouterr().out)["estimate"]
    assert est["cost_usd"] > 0
    assert est["batch_cost_usd"] == pytest.approx(est["cost_usd"] / 2, abs=0.01)
    assert main(args) == 0
    assert f"(about ${est['batch_cost_usd']:.2f} with --batch)" in capsys.readouterr().out
