"""The real failure shapes through the real SDKs against the fake server: Gemini's RetryInfo
429, safety-blocked answers, streams that fail before their first chunk, GPT-5's 400s on
temperature / max_tokens, served snapshots, echoed keys; for the backends, the judge and the
pre-flight checks."""

from __future__ import annotations

import json

import pytest

from etclib.cli import main
from etclib.core.errors import BackendServiceError, EmptyAnswerError, UnsupportedSettingError
from etclib.data.task import build_messages, chat_item
from etclib.metrics import judge as J
from etclib.models import get_backend
from tests.fakes import FakeLLMServer
from tests.fakes.judge_fixtures import judge_env, point_provider_at  # noqa: F401 - fixture
from tests.fakes.judge_responder import ScriptedJudge, request_kind

PROVIDERS = ["openai", "gemini"]
ITEM = chat_item([("A", "試験に受かりました！"), ("B", "おめでとうございます！")])


@pytest.fixture
def server(monkeypatch):
    with FakeLLMServer(lambda req: "相手の喜びに共感した。", retry_delay=0.4) as fake:
        for p in PROVIDERS:
            point_provider_at(monkeypatch, p, fake)
        monkeypatch.setenv("ETC_OPENAI_MODEL", "fake-model")
        monkeypatch.setenv("ETC_GEMINI_MODEL", "fake-gemini")
        yield fake


# --- backends ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROVIDERS)
def test_quota_429_waits_the_suggested_delay(server, name, backoff_delays):
    server.inject("quota", times=1)
    backend = get_backend(name, retry_wait=0.01, retries=2)
    assert backend.predict([ITEM]) == ["相手の喜びに共感した。"]
    # back-off alone would wait about 0.01 s; the server asked for 0.4 s (RetryInfo / header)
    assert backoff_delays == [pytest.approx(0.4)]
    assert server.count(name) == 2 and backend.usage.retries == 1


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("fault", [429, 503, "break"])
def test_stream_failing_before_its_first_chunk_is_retried(server, name, fault):
    server.inject(fault, times=1, match=lambda r: r.stream)
    backend = get_backend(name, retry_wait=0.01, retries=2)
    assert "".join(backend.stream(ITEM)) == "相手の喜びに共感した。"
    assert server.count(f"{name}-stream") == 2
    assert server.count(f"{name}-stream", answered=True) == 1


@pytest.mark.parametrize("name", PROVIDERS)
def test_stream_gives_up_with_a_public_message(server, name):
    server.inject(503, times=5, match=lambda r: r.stream)
    backend = get_backend(name, retry_wait=0.01, retries=1)
    with pytest.raises(BackendServiceError, match=r"internal error \(HTTP 503\) after 2 attempts"):
        list(backend.stream(ITEM))


@pytest.mark.parametrize("name", PROVIDERS)
def test_safety_block_is_a_counted_empty_prediction_and_a_chat_error(server, name):
    server.inject("safety", times=1)
    backend = get_backend(name, retries=0, batch_size=1)
    items = [ITEM, chat_item([("A", "こんにちは")])]
    assert backend.predict(items, shots=None) == ["", "相手の喜びに共感した。"]
    assert backend.usage.empty_answers == {"safety": 1}
    (note,) = backend.notes()
    assert "1 answers were empty" in note and "1 safety" in note
    server.inject("safety", times=1, match=lambda r: r.stream)
    with pytest.raises(EmptyAnswerError, match="safety filter") as info:
        list(backend.stream(ITEM))
    assert info.value.reason == "safety"
    server.inject("safety", times=1)
    with pytest.raises(EmptyAnswerError):
        backend.complete(build_messages(ITEM))


def _thinking(req) -> dict:
    """The thinking config a Gemini request carried, keys in one spelling (the SDK sends the
    proto field names, which the API accepts as well as lowerCamelCase)."""
    cfg = req.settings.get("thinkingConfig") or req.settings.get("thinking_config") or {}
    return {k.replace("_", "").lower(): str(v).lower() for k, v in cfg.items()}


def test_gemini_thinking_is_set_explicitly(server):
    backend = get_backend("gemini", model="gemini-2.5-flash")
    backend.predict([ITEM])
    assert _thinking(server.requests[-1]) == {"thinkingbudget": "0"}
    assert backend.signature()["thinking"] == "budget=0"
    get_backend("gemini", model="gemini-2.5-pro", thinking=512).predict([ITEM])
    assert _thinking(server.requests[-1]) == {"thinkingbudget": "512"}
    get_backend("gemini", model="gemini-3-pro-preview").predict([ITEM])
    s = server.requests[-1].settings
    assert s["temperature"] == 1.0 and _thinking(server.requests[-1]) == {"thinkinglevel": "low"}


def test_gpt5_gets_no_temperature_and_max_completion_tokens(server):
    backend = get_backend("openai", model="gpt-5-mini", max_new_tokens=64)
    assert backend.predict([ITEM]) == ["相手の喜びに共感した。"]
    sent = server.requests[-1].body
    assert "temperature" not in sent and "max_tokens" not in sent
    assert sent["max_completion_tokens"] == 64 and sent["reasoning_effort"] == "low"
    assert backend.signature()["temperature"] == "default"


@pytest.mark.parametrize(
    ("model", "setting"), [("o9-reasoner", "temperature"), ("o9-reasoner-nt", "max_tokens")]
)
def test_unknown_model_refusing_a_setting_is_named(server, model, setting):
    # an unknown model gets the classic settings; the fake refuses them as GPT-5 does
    server.reasoning_models = ("o9-reasoner",)
    if setting == "max_tokens":
        server.responder = lambda req: "x"
    backend = get_backend("openai", model=model, retries=3)
    if setting == "max_tokens":  # temperature 1 passes, then max_tokens is refused
        backend.decoding = type(backend.decoding)(backend.decoding.info, 1.0, None)
    with pytest.raises(UnsupportedSettingError) as info:
        backend.predict([ITEM])
    assert info.value.setting == setting and f"'{setting}'" in str(info.value)
    assert "etclib/llm/models.py" in str(info.value)
    assert server.count("openai") == 1  # not retried
    assert "Unsupported" in info.value.detail and "Unsupported" not in str(info.value)


def test_openai_default_is_the_pinned_snapshot_and_the_served_model_is_recorded(
    server, monkeypatch
):
    monkeypatch.delenv("ETC_OPENAI_MODEL")
    server.snapshots = {"gpt-4.1-2025-04-14": "gpt-4.1-2025-04-14-served"}
    backend = get_backend("openai")
    backend.predict([ITEM])
    assert server.requests[-1].model == "gpt-4.1-2025-04-14"
    assert backend.run_info()["served_models"] == ["gpt-4.1-2025-04-14-served"]


@pytest.mark.parametrize("name", PROVIDERS)
def test_an_echoed_key_never_reaches_the_message(server, monkeypatch, name):
    secret = "sk-test-SECRET123"
    server.api_key = "the-right-key"
    point_provider_at(monkeypatch, name, server, key=secret)
    with pytest.raises(BackendServiceError) as info:
        get_backend(name).predict([ITEM])
    err = info.value
    assert secret not in str(err) and server.url not in str(err)
    assert "HTTP 401" in str(err) and f"ref {err.ref}" in str(err)
    assert secret not in err.detail and server.url in err.detail  # for the operator, redacted
    assert secret in json.dumps(server.requests[-1].headers)  # the key really was sent


# --- judge --------------------------------------------------------------------------------------

PREDS = ["驚いた。", "嬉しかった。楽しかった。"]
REFS = ["驚いた。知りたいと思った。", "嬉しかった。"]


def test_judge_honours_retry_info(judge_env, backoff_delays):  # noqa: F811
    judge_env.server.retry_delay = 0.5
    judge_env.server.inject("quota", times=1)
    data = J.METRIC.compute(PREDS, REFS, judge_env.ctx(concurrency=1))
    assert backoff_delays == [pytest.approx(0.5)]  # judge_backoff is 0.01
    assert data.extra["judge_errors"] == 0 and data.extra["judge_usage"]["retries"] == 1


def test_judge_safety_block_is_an_item_error_without_retries(judge_env):  # noqa: F811
    def is_item2(req):
        return request_kind(req) == ("decompose", ("嬉しかった。楽しかった。",))

    judge_env.server.inject("safety", times=5, match=is_item2)
    data = J.METRIC.compute(PREDS, REFS, judge_env.ctx())
    assert data.extra["judge_errors"] == 1
    assert "safety" in data.details[1]["error"]
    assert judge_env.server.count(where=is_item2) == 1


def test_judge_blank_answer_is_retried(judge_env):  # noqa: F811
    judge_env.server.inject("empty", times=2)
    data = J.METRIC.compute(PREDS, REFS, judge_env.ctx())
    assert data.extra["judge_errors"] == 0 and data.extra["judge_usage"]["retries"] == 2


@pytest.fixture
def gpt5_judge(monkeypatch):
    with FakeLLMServer(ScriptedJudge()) as server:
        point_provider_at(monkeypatch, "openai", server)
        yield server


def test_gpt5_like_judge_runs_without_temperature(gpt5_judge):
    got = J.METRIC.score(PREDS, REFS, judge_provider="openai", judge_model="gpt-5-mini")
    assert got["f1"] == pytest.approx(200 / 3)
    assert gpt5_judge.count("openai", answered=False) == 0
    for req in gpt5_judge.requests:
        assert "temperature" not in req.body and req.body["reasoning_effort"] == "low"
    sig = J.METRIC.signature(J.Context({"judge_provider": "openai", "judge_model": "gpt-5-mini"}))
    assert "|temperature:default|thinking:effort=low|" in sig["judge"]


def test_judge_stops_when_an_unknown_model_refuses_temperature(gpt5_judge):
    gpt5_judge.reasoning_models = ("my-reasoner",)
    with pytest.raises(UnsupportedSettingError, match="'temperature'"):
        J.METRIC.score(PREDS * 5, REFS * 5, judge_provider="openai", judge_model="my-reasoner")
    assert gpt5_judge.count() <= 16  # stopped, not retried item by item


def test_score_json_signature_names_thinking_and_decoding(judge_env, tiny_corpus, tmp_path, capsys):  # noqa: F811
    from etclib import metrics
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    if judge_env.provider != "gemini":
        pytest.skip("the Gemini form")
    metrics.METRICS.setdefault("judge", "etclib.metrics.judge")
    test = items(load_corpus(tiny_corpus), "test")
    preds = tmp_path / "p.jsonl"
    preds.write_text(dumps_jsonl([(it.key, it.reference) for it in test]), encoding="utf-8")
    args = ["score", str(preds), "--data", str(tiny_corpus), "--metrics", "judge", "--json"]
    args += ["--judge-provider", "gemini", "--judge-model", "gemini-2.5-flash"]
    judge_env.server.snapshots = {"gemini-2.5-flash": "gemini-2.5-flash-001"}
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert "|temperature:0|thinking:budget=0|" in out["signature"]["judge"]
    # the snapshot that answered (modelVersion), known only after the run, is signed too
    assert out["signature"]["judge"].endswith("|served:gemini-2.5-flash-001")
    assert {_thinking(r)["thinkingbudget"] for r in judge_env.server.requests} == {"0"}


# --- pre-flight checks --------------------------------------------------------------------------


def test_judge_check_reports_and_estimates(judge_env, tiny_corpus, capsys):  # noqa: F811
    model = "gemini-2.5-flash" if judge_env.provider == "gemini" else "gpt-5-mini"
    common = ["--provider", judge_env.provider, "--model", model, "--data", str(tiny_corpus)]
    assert main(["judge", "check", *common]) == 0
    text = capsys.readouterr().out
    assert "answers parsed: yes" in text and "full test split" in text and "OK" in text
    assert main(["judge", "check", *common, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    n_calls = report["calls"]
    assert report["ok"] and report["items"] == 3 and n_calls > 0
    assert report["estimate"]["calls"] == round(n_calls / 3 * report["estimate"]["items"])
    assert report["estimate"]["cost_usd"] is not None and report["latency_s"] >= 0
    # the cache was not used: both checks made their calls
    assert judge_env.server.count() == 2 * n_calls


def test_judge_check_names_a_refused_setting(gpt5_judge, tiny_corpus, capsys):
    gpt5_judge.reasoning_models = ("my-reasoner",)
    args = ["judge", "check", "--provider", "openai", "--model", "my-reasoner"]
    assert main([*args, "--data", str(tiny_corpus)]) == 1
    out = capsys.readouterr().out
    assert "unsupported setting 'temperature'" in out and "NOT OK" in out
    assert "capability table" in out


def test_predict_check(server, tiny_corpus, capsys, tmp_path):
    args = ["predict", "--backend", "openai", "--model", "gpt-5-mini", "--check"]
    assert main([*args, "--data", str(tiny_corpus), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["answered"] == 3 and report["calls"] == 3
    assert report["served_models"] == ["gpt-5-mini"] and report["estimate"]["cost_usd"] is not None
    assert not list(tmp_path.glob("*.jsonl"))  # nothing written
    server.reasoning_models = ("o9",)
    bad = ["predict", "--backend", "openai", "--model", "o9-x", "--check"]
    assert main([*bad, "--data", str(tiny_corpus)]) == 1
    assert "unsupported setting 'temperature'" in capsys.readouterr().out
    server.inject("safety", times=1)
    assert main([*args, "--data", str(tiny_corpus)]) == 1
    assert "1 safety" in capsys.readouterr().out
