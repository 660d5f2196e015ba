"""The chat's model servers: probed, offline when they do not answer, every
generation bounded by the configured timeouts, the operator told the setting the chat reads."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fakes import FakeLLMServer
from tests.fixtures.llm import probe  # noqa: F401 - a fixture


@pytest.fixture
def served(monkeypatch):
    with FakeLLMServer(lambda req: "嬉しかった", models=("swallow-sft",), hang_seconds=30) as s:
        monkeypatch.setenv("ETC_FINETUNED_BASE_URL", s.openai_base_url)
        monkeypatch.setenv("ETC_FINETUNED_MODEL", "swallow-sft")
        yield s


def test_a_server_that_goes_down_is_offline_at_the_next_probe(served, probe, caplog):
    from views import chat

    fresh, clock = probe
    assert chat.choice("finetuned").usable and served.model_probes == 1
    # Within the interval the known state stands: no second probe.
    clock.now += chat.SERVER_LIMITS["ETC_CHAT_PROBE_INTERVAL"] - 1
    assert chat.choice("finetuned").usable and served.model_probes == 1
    served.stop()
    clock.now += 1
    with caplog.at_level(logging.WARNING, logger="views.chat"):
        picked = chat.choice("finetuned")
    assert fresh.probes == 2
    assert not picked.usable and picked.offline
    assert "ETC_FINETUNED_BASE_URL" in picked.reason and "OPENAI_BASE_URL" not in picked.reason
    assert "ETC_FINETUNED_BASE_URL" in caplog.text
    usable, unusable = chat.available(chat.choices())
    assert "finetuned" not in {c.key for c in usable}
    note = chat.unavailable_note(unusable)
    assert "Offline right now" in note and picked.label in note
    assert "ETC_" not in note  # settings are for operators
    message = chat.submit([], "こんにちは", picked, chat.RateLimiter())
    assert "offline right now" in message


def test_a_probe_that_hangs_is_cut_by_its_timeout(served, probe, monkeypatch):
    from views import chat

    monkeypatch.setenv("ETC_CHAT_PROBE_TIMEOUT", "0.2")
    served.models_fault = "hang"
    picked = chat.choice("finetuned")
    assert picked.offline and "did not answer GET /v1/models within 0.2 s" in picked.reason
    assert served.model_probes == 1


def test_the_probe_gets_two_seconds_by_default(served, probe, monkeypatch):
    from etclib.llm.providers import openai as backend
    from views import chat

    seen = []
    real = backend.served_models
    monkeypatch.setattr(
        backend, "served_models", lambda *a, **k: seen.append(k["timeout"]) or real(*a, **k)
    )
    assert chat.choice("finetuned").usable
    assert seen == [2.0]


def test_a_server_without_the_configured_model_is_offline(served, probe, monkeypatch):
    from views import chat

    monkeypatch.setenv("ETC_FINETUNED_MODEL", "etc-swallow-8b-sft")
    picked = chat.choice("finetuned")
    assert picked.offline and not picked.usable
    assert "ETC_FINETUNED_MODEL='etc-swallow-8b-sft'" in picked.reason
    assert "swallow-sft" in picked.reason


def test_the_generation_client_gets_the_configured_timeouts(served, probe, monkeypatch):
    from views import chat

    timeout = chat.make_backend("finetuned").client.timeout
    assert (timeout.connect, timeout.read) == (2.0, 10.0)
    monkeypatch.setenv("ETC_CHAT_CONNECT_TIMEOUT", "0.5")
    monkeypatch.setenv("ETC_CHAT_FIRST_TOKEN_TIMEOUT", "1.5")
    timeout = chat.make_backend("finetuned").client.timeout
    assert (timeout.connect, timeout.read) == (0.5, 1.5)


def test_a_hanging_server_fails_the_utterance_with_the_visitor_message(
    served, probe, monkeypatch, caplog
):
    """The first-token timeout (small here) aborts each attempt; the visitor reads our words,
    the operator's log names ETC_FINETUNED_BASE_URL."""
    from etclib.core.errors import BackendError
    from views import chat

    monkeypatch.setenv("ETC_CHAT_FIRST_TOKEN_TIMEOUT", "0.3")
    picked = chat.choice("finetuned")
    backend = chat.make_backend("finetuned")
    served.inject("hang", times=10)
    item = chat.conversation_item([("A", "昨日、友達に会えました。")])
    with caplog.at_level(logging.ERROR, logger="views.chat"):
        with pytest.raises(BackendError) as caught:
            list(chat.stream_prediction(backend, item, picked=picked))
    message = str(caught.value)
    assert message.startswith(f"{picked.label} did not answer: ")
    assert "did not answer in time" in message and "Try again in a minute" in message
    assert "ETC_" not in message and "OPENAI_BASE_URL" not in message
    assert "ETC_FINETUNED_BASE_URL" in caplog.text and "OPENAI_BASE_URL" not in caplog.text
    # one attempt and the chat's one retry, each cut by the client's timeout
    assert served.count("openai-stream") == 2
    assert served.count("openai-stream", answered=True) == 0


def test_a_refused_connection_names_the_setting_for_the_operator(served, probe, caplog):
    from etclib.core.errors import BackendError
    from views import chat

    picked = chat.choice("finetuned")
    backend = chat.make_backend("finetuned")
    served.stop()
    item = chat.conversation_item([("A", "こんにちは")])
    with caplog.at_level(logging.ERROR, logger="views.chat"):
        with pytest.raises(BackendError) as caught:
            list(chat.stream_prediction(backend, item, picked=picked))
    assert "cannot connect" in str(caught.value) and "ETC_" not in str(caught.value)
    assert "check ETC_FINETUNED_BASE_URL" in caplog.text


def _adapter(folder: Path, base: str, quantization: str | None) -> str:
    folder.mkdir()
    weights = b"\x00adapter-weights" * 1000
    (folder / "adapter_model.safetensors").write_bytes(weights)
    (folder / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": base}))
    (folder / "training_config.json").write_text(
        json.dumps({"resolved": {"quantization": quantization}})
    )
    return hashlib.sha256(weights).hexdigest()


BASE = "tokyotech-llm/Llama-3.1-Swallow-8B-Instruct-v0.3"


@pytest.mark.parametrize(
    ("served_base", "served_quant", "trained_quant", "same"),
    [
        (BASE, "bitsandbytes 4-bit NF4", "nf4, double quant, bf16 compute", True),
        (BASE, "bf16", "nf4, double quant, bf16 compute", False),
        ("meta-llama/Llama-3.1-8B-Instruct", "bitsandbytes", "nf4, double quant", False),
        (BASE, None, "nf4, double quant, bf16 compute", None),
    ],
)
def test_the_model_card_says_which_weights_are_served(
    served, probe, monkeypatch, tmp_path, served_base, served_quant, trained_quant, same
):
    from views import chat

    sha = _adapter(tmp_path / "adapter", BASE, trained_quant)
    served.model_fields["swallow-sft"] = {"root": "/srv/adapters/x", "parent": served_base}
    monkeypatch.setenv("ETC_FINETUNED_ADAPTER", str(tmp_path / "adapter"))
    if served_quant:
        monkeypatch.setenv("ETC_FINETUNED_QUANTIZATION", served_quant)
    card = chat.choice("finetuned").card
    assert card["base"] == served_base and card["adapter_sha256"] == sha
    assert card["trained_base"] == BASE and card["same_weights"] is same
    shown = "\n".join(chat.card_lines(card))
    assert sha in shown and "/srv" not in shown and "127.0.0.1" not in shown


def test_the_chat_page_opens_the_card_it_is_linked_to(served, probe, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REAL_CORPUS

    if REAL_CORPUS is None:
        pytest.skip("real ETC corpus not found: set ETC_DATA_DIR")
    sha = _adapter(tmp_path / "adapter", BASE, "nf4, double quant, bf16 compute")
    served.model_fields["swallow-sft"] = {"parent": BASE}
    monkeypatch.setenv("ETC_FINETUNED_ADAPTER", str(tmp_path / "adapter"))
    monkeypatch.setenv("ETC_FINETUNED_QUANTIZATION", "bitsandbytes 4-bit NF4")
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    at.query_params["model"] = "finetuned"
    at.switch_page("site_pages/chat.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="chat_model").value == "finetuned"
    card = next(e for e in at.expander if e.label == "Which weights are served")
    shown = " ".join(m.value for m in card.markdown)
    assert sha in shown and "Swallow" in shown
    assert "These are the evaluated weights" in shown


def test_a_server_refusing_the_key_names_the_key_setting(probe, monkeypatch):
    from views import chat

    with FakeLLMServer(api_key="the-right-key", models=("swallow-sft",)) as server:
        monkeypatch.setenv("ETC_FINETUNED_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("ETC_FINETUNED_MODEL", "swallow-sft")
        monkeypatch.setenv("ETC_FINETUNED_API_KEY", "a-wrong-key")
        picked = chat.choice("finetuned")
        assert picked.offline and "HTTP 401" in picked.reason
        assert "ETC_FINETUNED_API_KEY" in picked.reason and "a-wrong-key" not in picked.reason
        monkeypatch.setenv("ETC_FINETUNED_API_KEY", "the-right-key")
        chat.PROBE.clear()
        assert chat.choice("finetuned").usable
