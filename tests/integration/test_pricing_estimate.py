"""The pre-flight estimate: no answer, no estimate; cached input at its price; the
daily request limit of the key's tier."""

from __future__ import annotations

import json

import pytest

from etclib.cli import main
from etclib.judge import pricing
from etclib.metrics import judge as J
from tests.fakes.judge_fixtures import judge_env  # noqa: F401 - fixture
from tests.fixtures.llm import LIST_PRICES

#: the model each provider's judge is priced at here
PRICED_MODEL = {"gemini": "gemini-2.5-flash", "anthropic": "claude-haiku-4-5"}


def _cached(reqs, fixed: int) -> int:
    """Prompt tokens the fake server reported as read from the provider's prompt cache:
    ``fixed`` of each request's prompt, or (Anthropic) the ``cache_control`` system text from
    its second sight on (the fake's prompt cache)."""
    seen: set[str] = set()
    total = 0
    for r in reqs:
        if not r.kind.startswith("anthropic"):
            total += min(fixed, len(r.text))
            continue
        for block in r.body.get("system") or []:
            if isinstance(block, dict) and block.get("cache_control"):
                total += len(block["text"]) if block["text"] in seen else 0
                seen.add(block["text"])
    return total


def test_the_judge_counts_cached_tokens_and_prices_them(judge_env):  # noqa: F811
    model = PRICED_MODEL.get(judge_env.provider, "gpt-4.1-mini")
    p_in, p_out, p_cached = LIST_PRICES[model]
    judge_env.server.cached_tokens = 5
    preds, refs = ["相手に共感した。"] * 2, ["相手の話に共感して嬉しかった。", "驚いた。"]
    usage = J.METRIC.compute(preds, refs, judge_env.ctx(judge_model=model)).extra["judge_usage"]
    reqs = judge_env.server.requests
    tokens_in = sum(len(r.text) for r in reqs)
    cached = _cached(reqs, 5)
    tokens_out = sum(len(r.reply) for r in reqs)
    assert (usage["input_tokens"], usage["cached_tokens"]) == (tokens_in, cached)
    expected = ((tokens_in - cached) * p_in + cached * p_cached + tokens_out * p_out) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected, abs=1e-6)


def test_a_check_in_which_nothing_answered_prints_no_figure(judge_env, tiny_corpus, capsys):  # noqa: F811
    model = "gemini-2.5-flash" if judge_env.provider == "gemini" else "gpt-4.1-mini"
    judge_env.server.inject("safety", times=1000)  # every call answered with a block, no text
    args = ["judge", "check", "--provider", judge_env.provider, "--model", model]
    args += ["--data", str(tiny_corpus)]
    assert main(args) == 1
    text = capsys.readouterr().out
    assert "no answer, no estimate" in text and "$" not in text
    assert main([*args, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["estimate"]["cost_usd"] is None
    assert report["estimate"]["why"] == "no answer, no estimate"


def test_the_check_says_when_a_full_run_exceeds_the_daily_limit(
    judge_env,  # noqa: F811
    tiny_corpus,
    capsys,
    monkeypatch,
):
    model = "gemini-2.5-flash" if judge_env.provider == "gemini" else "gpt-4.1-mini"
    monkeypatch.setattr(
        pricing, "DAILY_REQUESTS", {(judge_env.provider, model, "free"): 2}
    )  # a tiny limit, so that the tiny corpus exceeds it
    args = ["judge", "check", "--provider", judge_env.provider, "--model", model]
    assert main([*args, "--data", str(tiny_corpus), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "daily limit of 2 requests" in report["estimate"]["daily_limit"]
    assert main([*args, "--data", str(tiny_corpus)]) == 0
    assert "daily limit: a full run" in capsys.readouterr().out
