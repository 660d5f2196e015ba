"""Whole judge runs as a user meets them, with the real SDKs against the
fake server: an incomplete run is not a result (``etclib score`` exits 10 unless
--allow-partial, and a re-run asks only the failed items), a cut answer is an error (asked once
more with twice the token limit), and a used-up quota stops the run at once (exit 11, the
quota named, the answers so far kept for the re-run)."""

from __future__ import annotations

import json

import pytest

from etclib.cli import main
from etclib.core.errors import QuotaExhaustedError
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.judge.cache import AnswerCache
from etclib.judge.check import format_report, preflight
from etclib.judge.providers import ANSWER_TOKENS, THINKING_TOKENS
from etclib.judge.runner import JudgeSettings
from etclib.metrics import judge as J
from etclib.tracks.predictions import dumps_jsonl
from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401
from tests.fakes.llm_server import FakeRequest

FAIL = "失敗する予測"


#: the fault a used-up quota is, by provider
EXHAUSTED = {
    "openai": "insufficient_quota",
    "gemini": "daily_quota",
    "anthropic": "insufficient_quota",
}


#: what the quota message names, by provider: the quota and the page to check it on
QUOTA_WORDS = {
    "openai": ("billing quota", "insufficient_quota", "platform.openai.com"),
    "gemini": ("daily request quota", "PerDay", "aistudio.google.com/usage"),
    "anthropic": ("credit balance", "credit_balance_too_low", "console.anthropic.com"),
}


def limit_of(req: FakeRequest) -> int | None:
    """The token limit a request carried (OpenAI max_tokens / max_completion_tokens, Gemini
    generationConfig.maxOutputTokens)."""
    if req.kind.startswith("gemini"):
        return req.settings.get("maxOutputTokens")
    return req.body.get("max_tokens", req.body.get("max_completion_tokens"))


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_JUDGE_BACKOFF", "0.01")
    monkeypatch.setenv("ETC_JUDGE_MAX_ATTEMPTS", "2")
    return split_items(load_corpus(tiny_corpus), "test")


def write_preds(path, items, failing: set[int] = frozenset()) -> str:
    """Each prediction is its reference, except items ``failing`` (a text the fake refuses)."""
    rows = [(it.key, f"{FAIL}{i}" if i in failing else it.reference) for i, it in enumerate(items)]
    path.write_text(dumps_jsonl(rows), encoding="utf-8")
    return str(path)


def score_args(env, tiny_corpus, preds: str, *more: str) -> list[str]:
    return [
        "score",
        preds,
        "--data",
        str(tiny_corpus),
        "--metrics",
        "judge",
        "--judge-provider",
        env.provider,
        "--judge-model",
        FAKE_MODEL,
        *more,
    ]


def test_failed_items_make_the_run_incomplete_and_a_rerun_asks_only_them(
    judge_env,  # noqa: F811
    tiny,
    tiny_corpus,
    tmp_path,
    capsys,
):
    server = judge_env.server
    failing = {2, 5, 11}
    preds = write_preds(tmp_path / "p.jsonl", tiny, failing)
    server.inject(500, times=1000, match=lambda r: FAIL in r.user)

    assert main(score_args(judge_env, tiny_corpus, preds)) == 10
    err = capsys.readouterr().err
    assert f"judge incomplete: 3 of {len(tiny)} items failed (first reason: dialogue " in err
    assert "HTTP 500" in err and "--allow-partial" in err
    # each failing item's decomposition was asked max_attempts (2) times, no more
    assert server.count(answered=False) == 2 * len(failing)

    # --json still prints everything, with judge_errors and n_judged; the exit stays 10
    assert main(score_args(judge_env, tiny_corpus, preds, "--json")) == 10
    out = json.loads(capsys.readouterr().out)
    assert out["judge_errors"] == 3 and out["n_judged"] == len(tiny) - 3
    # --allow-partial: the partial scores, a warning, exit 0
    assert main(score_args(judge_env, tiny_corpus, preds, "--allow-partial")) == 0
    assert "judge incomplete: 3 of" in capsys.readouterr().err

    # the provider recovers: the re-run asks only the failed items' questions
    server.clear_faults()
    server.reset()
    assert main(score_args(judge_env, tiny_corpus, preds, "--json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["judge_errors"] == 0 and out["n_judged"] == len(tiny)
    # the failed items' predictions share nothing with their references: F1 0 for those
    assert out["f1"] == pytest.approx(100 * (len(tiny) - 3) / len(tiny))
    # per failed item: its decomposition and one entailment each way
    assert server.count() == 3 * len(failing)
    assert all(FAIL in r.user for r in server.requests)


def test_a_cut_answer_is_asked_again_with_twice_the_limit_then_fails(judge_env):  # noqa: F811
    server = judge_env.server
    ctx = judge_env.ctx(judge_max_attempts=4)
    # cut once (the text parses, as a cut JSON answer sometimes does): asked again, doubled
    server.inject("length", times=1, match=lambda r: "一回切れる" in r.user)
    data = J.METRIC.compute(["一回切れる。"], ["一回切れる。"], ctx)
    assert data.extra["judge_errors"] == 0
    asked = [
        r for r in server.requests if r.user.endswith("一回切れる。") and "ユニット" not in r.user
    ]
    assert [r.fault for r in asked] == ["length", None]
    first = limit_of(asked[0])
    assert first == ANSWER_TOKENS and limit_of(asked[1]) == 2 * first
    assert data.extra["judge_usage"]["cut_answers"] == 1

    # cut twice: the item fails, naming the limit, with no further attempt
    server.reset()
    server.inject("length", times=5, match=lambda r: "二回切れる" in r.user)
    data = J.METRIC.compute(["二回切れる。"], ["参照です。"], ctx)
    assert data.extra["judge_errors"] == 1
    assert f"answer cut at {2 * first} tokens" in data.details[0]["error"]
    assert server.count(where=lambda r: "二回切れる" in r.user) == 2
    assert server.pending_faults() == 3


def test_the_token_limit_is_sent_and_signed(judge_env, monkeypatch):  # noqa: F811
    J.METRIC.compute(["嬉しかった。"], ["嬉しかった。"], judge_env.ctx())
    assert {limit_of(r) for r in judge_env.server.requests} == {ANSWER_TOKENS}
    sig = J.METRIC.signature(judge_env.ctx())["judge"]
    assert f"|max_tokens:{ANSWER_TOKENS}|" in sig
    monkeypatch.setenv("ETC_JUDGE_MAX_TOKENS", "3000")
    assert "|max_tokens:3000|" in J.METRIC.signature(judge_env.ctx())["judge"]
    # reasoning models get room for their hidden reasoning inside max_completion_tokens
    gpt5 = JudgeSettings(provider="openai", model="gpt-5-mini")
    assert gpt5.token_limit() == ANSWER_TOKENS + THINKING_TOKENS["low"]
    flash = JudgeSettings(provider="gemini", model="gemini-2.5-pro")
    assert flash.token_limit() == ANSWER_TOKENS + 128  # its smallest thinking budget


def test_judge_check_reports_reasoning_tokens(judge_env, tiny_corpus):  # noqa: F811
    judge_env.server.reasoning_tokens = 40
    settings = JudgeSettings.resolve(judge_env.ctx().get)
    report = preflight(settings, load_corpus(tiny_corpus), n=2)
    assert report["ok"], report["problems"]
    assert report["reasoning_tokens_per_call"] == 40
    assert report["max_tokens"] == ANSWER_TOKENS and report["max_output_tokens"] > 40
    assert "40 reasoning" in format_report(report)


def test_a_used_up_quota_stops_the_run_at_once(judge_env):  # noqa: F811
    server = judge_env.server
    server.inject(EXHAUSTED[judge_env.provider], times=1000)
    texts = [f"文{i}です。" for i in range(30)]
    with pytest.raises(QuotaExhaustedError) as info:
        J.METRIC.compute(texts, texts, judge_env.ctx(concurrency=3))
    assert server.count() <= 3  # the calls in flight, no retry
    message = str(info.value)
    for words in QUOTA_WORDS[judge_env.provider]:
        assert words in message
    assert judge_env.provider in message and "run the same command again" in message
    assert info.value.exit_code == 11


def test_a_quota_stop_keeps_the_answers_already_on_the_wire(judge_env):  # noqa: F811
    """The calls sent before the quota ran out finish, and their answers are cached, before the
    run returns (none reaches the service after it). The fake holds the three decompositions
    until all three are in flight together, then answers the first with the used-up quota at
    once and the other two half a second later: both answers are kept, and the next run asks
    only the first question again."""
    server, judge = judge_env.server, judge_env.responder
    texts = [f"文{i}です。" for i in range(3)]
    server.gather = 3
    server.hang_seconds = 0.5  # "hang": answered normally, late
    server.inject(EXHAUSTED[judge_env.provider], match=lambda r: texts[0] in r.user)
    server.inject("hang", times=2, match=lambda r: texts[0] not in r.user)
    with pytest.raises(QuotaExhaustedError):
        J.METRIC.compute(texts, texts, judge_env.ctx(concurrency=3))
    assert server.max_in_flight == 3 and server.count() == 3
    assert sum(judge.decompose_calls.values()) == 2
    cache = AnswerCache()
    assert len(cache) == 2  # both answers on the wire at the stop
    cache.close()

    server.gather = 0
    server.reset()
    data = J.METRIC.compute(texts, texts, judge_env.ctx(concurrency=3))
    assert data.extra["judge_errors"] == 0
    assert judge.decompose_calls == {t: 1 for t in texts}  # the kept two not asked again


def test_a_per_minute_rate_limit_still_backs_off(judge_env):  # noqa: F811
    judge_env.server.retry_delay = 0.01
    judge_env.server.inject("quota", times=2)
    data = J.METRIC.compute(["嬉しかった。"], ["嬉しかった。"], judge_env.ctx())
    assert data.extra["judge_errors"] == 0 and data.extra["judge_usage"]["retries"] == 2


def test_a_quota_stop_exits_11_and_the_rerun_resumes(
    judge_env,  # noqa: F811
    tiny,
    tiny_corpus,
    tmp_path,
    capsys,
):
    server, judge = judge_env.server, judge_env.responder
    preds = write_preds(tmp_path / "p.jsonl", tiny)

    def answered() -> int:
        return sum(judge.decompose_calls.values()) + sum(judge.entail_calls.values())

    # the quota runs out after 6 answers
    server.inject(EXHAUSTED[judge_env.provider], times=1000, match=lambda r: answered() >= 6)
    assert main(score_args(judge_env, tiny_corpus, preds, "--concurrency", "2")) == 11
    err = capsys.readouterr().err
    assert "quota is used up" in err and QUOTA_WORDS[judge_env.provider][2] in err
    assert server.count(answered=False) <= 2
    # every answer received is kept: the calls on the wire when the stop came finished first
    cache = AnswerCache()
    kept = len(cache)
    cache.close()
    assert kept == answered() >= 6

    server.clear_faults()
    server.reset()
    assert main(score_args(judge_env, tiny_corpus, preds, "--json")) == 0
    assert json.loads(capsys.readouterr().out)["judge_errors"] == 0
    # the kept answers are not asked again; every other question once (2 per item here)
    again = [r.user for r in server.requests]
    assert len(again) == len(set(again)) == 2 * len(tiny) - kept
