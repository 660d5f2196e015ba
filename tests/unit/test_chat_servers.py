"""The chat's model servers: probed, offline when they do not answer, every
generation bounded by the configured timeouts, the operator told the setting the chat reads."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fixtures.llm import probe  # noqa: F401 - a fixture

REPO = Path(__file__).resolve().parents[2]


def test_a_self_hosted_openai_server_is_probed_too(probe, monkeypatch):
    from views import chat

    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    picked = chat.choice("openai")
    assert picked.offline and "OPENAI_BASE_URL" in picked.reason


@pytest.mark.parametrize("bad", ["0", "-1", "soon"])
def test_a_bad_time_limit_names_its_setting(monkeypatch, bad):
    from etclib.core.errors import ConfigError
    from views import chat

    monkeypatch.setenv("ETC_CHAT_TOTAL_TIMEOUT", bad)
    with pytest.raises(ConfigError, match="ETC_CHAT_TOTAL_TIMEOUT"):
        chat.server_limit("ETC_CHAT_TOTAL_TIMEOUT")


def test_the_whole_answer_is_bounded_by_the_total_timeout():
    """A stream that never ends is cut at ETC_CHAT_TOTAL_TIMEOUT (small here): the mechanism."""
    from etclib.core.errors import BackendServiceError
    from views import chat

    never = threading.Event()
    got = []

    def trickle():
        yield "部分"
        never.wait(60)  # a server that stops sending without closing
        yield "never"

    try:
        with pytest.raises(BackendServiceError) as caught:
            for chunk in chat._within(trickle(), 0.2):
                got.append(chunk)
    finally:
        never.set()
    assert got == ["部分"] and caught.value.kind == "timeout"


def test_the_docs_name_the_settings_the_chat_reads():
    from views import chat

    docs = {
        name: (REPO / name).read_text(encoding="utf-8")
        for name in ("README.md", "docs/deploy.md", "docs/models.md", "docs/site.md")
    }
    known = set(chat.FINETUNED_SETTINGS) | set(chat.SERVER_LIMITS) | set(chat.RATE_SETTINGS)
    for name, text in docs.items():
        named = set(re.findall(r"ETC_(?:FINETUNED|CHAT)_[A-Z_]+", text))
        assert named <= known, (name, named - known)
    # docs/deploy.md holds the serving settings and the vLLM command; the others point there
    for setting in chat.FINETUNED_SETTINGS:
        assert f"| `{setting}` |" in docs["docs/deploy.md"], setting
    for name in ("README.md", "docs/models.md", "docs/site.md"):
        assert "deploy.md#the-chat-model-server-vllm" in docs[name], name
    assert "## The chat model server (vLLM)" in docs["docs/deploy.md"]
    for setting in chat.SERVER_LIMITS:
        assert setting in docs["docs/site.md"], setting
    chat_row = next(
        ln for ln in docs["docs/deploy.md"].splitlines() if ln.startswith("| chat model")
    )
    assert "OPENAI_BASE_URL" not in chat_row


def test_deploy_serves_the_adapter_on_the_four_bit_base():
    """The evaluated model is the adapter on the 4-bit NF4 base: the vLLM command says so."""
    text = (REPO / "docs/deploy.md").read_text(encoding="utf-8")
    command = text[text.index("vllm serve") : text.index("```", text.index("vllm serve"))]
    for flag in (
        "--quantization bitsandbytes",
        "--enable-lora",
        "--lora-modules etc-swallow-8b-sft=",
    ):
        assert flag in command, flag
    models = (REPO / "docs/models.md").read_text(encoding="utf-8")
    assert "vllm serve" not in models  # one command, in one place


def test_the_board_links_only_the_fine_tuned_swallow_baseline_to_the_card():
    import leaderboard as lb
    from leaderboard.baselines import seed_reported
    from leaderboard.db import resolve
    from views import chat

    seed_reported()
    ids = [row[0] for row in resolve(None).query("SELECT id FROM submissions")]
    assert len(ids) >= 5  # every published row of the paper
    linked = []
    for sid in ids:
        submission = lb.detail(str(sid))["submission"]
        if chat.links_to_card(submission):
            linked.append(submission["name"])
    assert len(linked) == 1 and "Swallow" in linked[0] and "fine-tuned" in linked[0]
    assert chat.CARD_LINK in chat.CARD_NOTE
    assert not chat.links_to_card({"setting": "fine-tuned", "kind": "submitted", "name": "Swallow"})
