"""Backend registry, the CPU backends (retrieval, constant, copy) and the in-process hf backend."""

from __future__ import annotations

import pytest

from etclib.core.errors import BackendError, ConfigError
from etclib.data.task import chat_item, items
from etclib.models import get_backend
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture
from tests.fixtures.models import _fresh_memory  # noqa: F401 - for every test here


def _cuda() -> bool:
    """Whether torch sees a CUDA GPU (asked only by the tests that need to know: importing torch
    takes seconds, which the unit tier does not pay)."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return torch.cuda.is_available()


def test_constant_on_the_real_corpus_is_reproducible(corpus):
    a = get_backend("constant", corpus=corpus).text
    from etclib.models import constant

    constant._MEMORY.clear()
    assert get_backend("constant", corpus=corpus).text == a
    assert a in {it.reference for it in items(corpus, "train")}


def test_retrieval_on_the_real_corpus_finds_train_items_with_bounded_work(corpus, monkeypatch):
    """Train items find themselves; a prediction reuses the index (never rebuilt nor reloaded)
    and weighs at most ``neighbours`` candidates. Its latency (p95 < 50 ms) is a performance
    claim, measured by benchmarks/retrieval.py."""
    from etclib.models import retrieval

    backend = get_backend("retrieval", corpus=corpus)
    train = items(corpus, "train")[::40]
    rebuilt = []
    monkeypatch.setattr(retrieval, "build_index", lambda *a, **k: rebuilt.append(a))
    monkeypatch.setattr(retrieval, "_load", lambda *a, **k: rebuilt.append(a))
    hits = sum(p == it.reference for p, it in zip(backend.predict(train), train, strict=True))
    assert hits >= 0.9 * len(train)
    test = items(corpus, "test")[:100]
    assert len(backend.predict(test)) == len(test)
    assert rebuilt == []
    assert max(len(backend.candidates(it)[0]) for it in test) <= backend.neighbours


@pytest.fixture
def hf_backend(tiny_model):  # noqa: F811
    return get_backend("hf", model=str(tiny_model), max_new_tokens=6, batch_size=3)


CHATS = [
    [("A", "こんにちは")],
    [("A", "旅行の話1の1番目です。私はどう思いますか？"), ("B", "いいですね")],
    [("A", "犬"), ("B", "猫"), ("A", "試験が心配です")],
    [("A", "")],
]


def test_hf_batched_equals_one_by_one(hf_backend):
    chats = [chat_item(c) for c in CHATS]
    progress = []
    batched = hf_backend.predict(chats, progress=progress.append)
    assert sum(progress) == len(chats)
    assert batched == [hf_backend.predict([c])[0] for c in chats]
    assert all(isinstance(p, str) for p in batched)


def test_hf_stream_matches_predict(hf_backend):
    item = chat_item(CHATS[1])
    chunks = list(hf_backend.stream(item))
    assert "".join(chunks).strip() == hf_backend.predict([item])[0]


def test_hf_uses_the_chat_template_and_left_padding(hf_backend):
    item = chat_item(CHATS[0])
    text = hf_backend.prompt_text([{"role": "user", "content": "x"}])
    assert text == "<|bos|><|user|>x<|eot|><|assistant|>"
    assert hf_backend.tokenizer.padding_side == "left"
    assert hf_backend.tokenizer.convert_tokens_to_ids("<|eot|>") in hf_backend.stop_ids
    sig = hf_backend.signature()
    assert sig["decoding"] == "greedy" and sig["max_new_tokens"] == 6 and sig["prompt"]
    assert hf_backend.predict([item], shots=[[]]) == hf_backend.predict([item])


def _spy_generate(model) -> list[int]:
    """Record how many tokens each ``model.generate`` call adds."""
    lengths: list[int] = []
    original = model.generate

    def spy(**kw):
        out = original(**kw)
        lengths.append(out.shape[1] - kw["input_ids"].shape[1])
        return out

    model.generate = spy
    return lengths


def test_hf_max_new_tokens_bounds_the_answer(hf_backend):
    lengths = _spy_generate(hf_backend.model)
    hf_backend.predict([chat_item(c) for c in CHATS])
    assert lengths and max(lengths) <= 6


def test_hf_stops_at_end_of_turn(hf_backend):
    """A head that always prefers <|eot|> ends generation after one token."""
    model = hf_backend.model
    _force_token(model, hf_backend.tokenizer.convert_tokens_to_ids("<|eot|>"))
    lengths = _spy_generate(model)
    assert hf_backend.predict([chat_item(CHATS[0])]) == [""]
    assert lengths == [1]


def _force_token(model, token_id: int) -> None:
    """Replace the head by one that always prefers ``token_id`` (on the model's device, in its
    dtype: the model may live on a GPU)."""
    import torch

    old = model.lm_head.weight
    head = torch.nn.Linear(
        old.shape[1], old.shape[0], bias=True, device=old.device, dtype=old.dtype
    )
    with torch.no_grad():
        head.weight.zero_()
        head.bias.zero_()
        head.bias[token_id] = 10.0
    model.lm_head = head


def test_hf_closing_the_stream_stops_generation(tiny_model):  # noqa: F811
    backend = get_backend("hf", model=str(tiny_model), max_new_tokens=200)
    (kanji,) = backend.tokenizer("話", add_special_tokens=False)["input_ids"]
    _force_token(backend.model, kanji)  # a CJK character: the streamer flushes every token
    lengths = _spy_generate(backend.model)
    chunks = backend.stream(chat_item(CHATS[0]))
    assert next(chunks) == "話"
    chunks.close()
    assert len(lengths) == 1 and lengths[0] < 200


def test_hf_unknown_model_folder(tmp_path):
    with pytest.raises(BackendError, match="Cannot load model"):
        get_backend("hf", model=str(tmp_path / "no-model"))


def test_hf_bad_adapter_folder(tiny_model, tmp_path):  # noqa: F811
    (tmp_path / "empty").mkdir()
    with pytest.raises(BackendError, match="Cannot load adapter"):
        get_backend("hf", model=str(tiny_model), adapter=str(tmp_path / "empty"))


@pytest.mark.parametrize(("option", "value"), [("max_new_tokens", 0), ("batch_size", -3)])
def test_hf_option_values(tiny_model, option, value):  # noqa: F811
    with pytest.raises(ConfigError, match=f"option '{option}'"):
        get_backend("hf", model=str(tiny_model), **{option: value})


def test_hf_settings_fill_options(tiny_model, monkeypatch):  # noqa: F811
    monkeypatch.setenv("ETC_HF_MODEL", str(tiny_model))
    monkeypatch.setenv("ETC_HF_MAX_NEW_TOKENS", "3")
    backend = get_backend("hf")
    assert backend.model_name == str(tiny_model) and backend.max_new_tokens == 3


@pytest.mark.skipif("_cuda()", reason="checks the CPU refusal; a GPU is present")
def test_hf_4bit_without_cuda_says_what_to_do(tiny_model):  # noqa: F811
    with pytest.raises(BackendError, match="needs a CUDA GPU.*Run without 4-bit"):
        get_backend("hf", model=str(tiny_model), load_in_4bit=True)
