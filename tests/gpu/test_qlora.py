"""4-bit QLoRA on a CUDA device, end to end: `etclib train` with its defaults (NF4 base, paged
8-bit AdamW), then the adapter on the same 4-bit base through `etclib predict`, the backend's
stream and the chat's in-process backend."""

from __future__ import annotations

import json

import pytest

from etclib.cli import main
from etclib.data.corpus import load_corpus
from etclib.data.task import chat_item, items
from etclib.models import get_backend
from etclib.tracks.predictions import read_predictions
from tests.data.make_tiny_corpus import write_tiny_corpus
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture

CHAT = [("A", "旅行の話1の1番目です。私はどう思いますか？"), ("B", "いいですね")]


@pytest.fixture(scope="module")
def trained(tiny_model, tmp_path_factory):
    """An adapter trained in 4-bit through the CLI (its default setup), once for this module."""
    root = write_tiny_corpus(tmp_path_factory.mktemp("corpus"))
    out = tmp_path_factory.mktemp("adapter")
    with pytest.MonkeyPatch.context() as mp:  # module scope: conftest's isolation is not active yet
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("ETC_PROGRESS", "0")
        mp.setenv("ETC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        mp.delenv("ETC_HF_DEVICE", raising=False)
        code = main(
            [
                "train",
                *("--base", str(tiny_model), "--out", str(out), "--data", str(root)),
                *("--limit", "8", "--eval-limit", "3", "--max-steps", "4"),
                *("--batch-size", "2", "--micro-batch-size", "1", "--lr", "0.02"),
                *("--warmup-steps", "0", "--eval-steps", "2", "--logging-steps", "1"),
                *("--lora-r", "4", "--lora-alpha", "8", "--seed", "3", "--max-length", "1024"),
            ]
        )
    assert code == 0
    return out, root


def test_training_runs_in_4bit_with_paged_8bit_adamw(trained):
    out, _ = trained
    record = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    assert record["config"]["load_in_4bit"] is True
    assert record["resolved"]["optim"] == "paged_adamw_8bit"
    assert record["result"]["steps"] == 4
    assert (out / "adapter_model.safetensors").is_file()
    curve = json.loads((out / "loss.json").read_text(encoding="utf-8"))
    assert [r["step"] for r in curve if r["eval_loss"] is not None] == [2, 4]


def test_the_adapter_runs_on_the_4bit_base_and_changes_the_output(trained, tiny_model):
    import bitsandbytes as bnb
    import torch

    out, root = trained
    chats = items(load_corpus(root), "test")[:4]
    base = get_backend("hf", model=str(tiny_model), load_in_4bit=True, max_new_tokens=8)
    tuned = get_backend(
        "hf", model=str(tiny_model), adapter=str(out), load_in_4bit=True, max_new_tokens=8
    )
    assert any(isinstance(m, bnb.nn.Linear4bit) for m in tuned.model.modules())
    assert next(tuned.model.parameters()).device.type == "cuda"
    assert torch.cuda.memory_allocated() > 0
    assert tuned.predict(chats) != base.predict(chats)
    # The stream is the same answer, and closing it stops generation.
    item = chat_item(CHAT)
    assert "".join(tuned.stream(item)).strip() == tuned.predict([item])[0]


def test_predict_writes_a_valid_file_with_the_adapter_in_4bit(trained, tiny_model, tmp_path):
    out, root = trained
    dest = tmp_path / "tuned.jsonl"
    code = main(
        [
            "predict",
            *("--backend", "hf", "--model", str(tiny_model), "--adapter", str(out), "--4bit"),
            *("--max-new-tokens", "4", "--batch-size", "8", "--data", str(root)),
            *("--out", str(dest)),
        ]
    )
    assert code == 0
    assert len(read_predictions(dest, "test", load_corpus(root))) == 20
    run = json.loads((tmp_path / "tuned.jsonl.run.json").read_text(encoding="utf-8"))
    assert run["signature"]["adapter"] == str(out)


def test_the_chat_streams_from_its_in_process_4bit_backend(trained, tiny_model, monkeypatch):
    from views import chat

    out, _ = trained
    monkeypatch.setenv("ETC_HF_MODEL", str(tiny_model))
    monkeypatch.setenv("ETC_HF_ADAPTER", str(out))
    monkeypatch.setenv("ETC_HF_4BIT", "1")
    monkeypatch.setenv("ETC_HF_MAX_NEW_TOKENS", "6")
    picked = chat.choice("hf")
    assert picked.usable, picked.reason
    backend = chat.make_backend("hf")
    assert backend.load_in_4bit and backend.signature()["adapter"] == str(out)
    chunks = list(chat.stream_prediction(backend, chat.conversation_item(CHAT), picked=picked))
    assert "".join(chunks).strip() == backend.predict([chat.conversation_item(CHAT)])[0]
