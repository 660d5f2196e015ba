"""Batch judging: `etclib score --metrics judge --batch` sends the uncached
questions through OpenAI's Batch API or Gemini's batch mode (the real SDKs against the fake
server's batch endpoints), fills the same cache, and the online pass that follows makes no call
for a question the batch answered. A killed run resumes the same batch; expired and failed
batch items are asked online; `--service-tier flex` reaches OpenAI's online calls."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4.1-mini", (0.40 + 1.60) / 2),  # list price per 1M input + 1M output, halved
        ("gemini-2.5-flash", (0.30 + 2.50) / 2),
        ("gpt-5-mini-2025-08-07", (0.25 + 2.00) / 2),
        ("claude-haiku-4-5", None),  # Anthropic: no batch interface in etclib, no batch price
        ("my-vllm-model", None),
    ],
)
def test_the_batch_price_is_half_the_list_price(model, expected):
    from etclib.judge import pricing

    got = pricing.batch_cost_usd(model, 1_000_000, 1_000_000)
    assert got == (None if expected is None else pytest.approx(expected))


def test_a_batch_record_is_whole_or_refused_with_the_fix(tmp_path):
    from etclib.core.errors import JudgeError
    from etclib.judge.batch import BatchStore, request_set

    store = BatchStore(tmp_path / "judge_batches")
    set_id = request_set("openai", "gpt-4.1-mini", ["b", "a"])
    assert set_id == request_set("openai", "gpt-4.1-mini", ["a", "b"])  # a set: order aside
    assert set_id != request_set("openai", "gpt-4.1", ["a", "b"])
    assert store.load(set_id) is None
    store.save(set_id, {"batch_ids": ["batch_1"]})
    assert store.load(set_id) == {"batch_ids": ["batch_1"]}
    assert [p.name for p in store.folder.iterdir()] == [f"{set_id}.json"]  # no temp file left
    (store.folder / f"{set_id}.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(JudgeError, match="cannot read the batch record .*Delete it"):
        store.load(set_id)
    store.done(set_id)
    assert store.load(set_id) is None
