"""Backend registry, the CPU backends (retrieval, constant, copy) and the in-process hf backend."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from etclib.backends import (
    REGISTRY,
    configured_backends,
    get_backend,
    options_of,
)
from etclib.backends import retrieval as retrieval_module
from etclib.backends._tfidf import ngrams
from etclib.backends.base import as_bool, positive_int
from etclib.corpus import load_corpus
from etclib.errors import BackendError, ConfigError
from etclib.task import chat_item, items
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture


def _cuda() -> bool:
    """Whether torch sees a CUDA GPU (asked only by the tests that need to know: importing torch
    takes seconds, which the unit tier does not pay)."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return torch.cuda.is_available()


@pytest.fixture(autouse=True)
def _fresh_memory():
    retrieval_module._MEMORY.clear()
    yield
    retrieval_module._MEMORY.clear()


# --- registry ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("retrival", "retrieval"), ("constnt", "constant"), ("gemni", "gemini"), ("openia", "openai")],
)
def test_unknown_backend_suggests(name, suggestion):
    with pytest.raises(BackendError) as exc:
        get_backend(name)
    assert f"Did you mean {suggestion!r}?" in str(exc.value)
    assert f"Available: {', '.join(REGISTRY)}." in str(exc.value)


def test_unknown_backend_without_close_match():
    with pytest.raises(BackendError, match="Unknown backend 'zzz'. Available"):
        get_backend("zzz")


def test_unknown_option_is_refused_before_loading(tiny_corpus):
    with pytest.raises(ConfigError) as exc:
        get_backend("retrieval", data=str(tiny_corpus), context_weigth=1.0)
    assert (
        "Backend 'retrieval' has no option 'context_weigth'. Did you mean 'context_weight'?"
        in str(exc.value)
    )
    with pytest.raises(ConfigError, match="Backend 'copy' has no option 'model'"):
        get_backend("copy", model="gpt-4.1")


def test_none_options_are_dropped():
    assert get_backend("copy", model=None).name == "copy"


def test_every_registered_module_defines_its_backend():
    for name in REGISTRY:
        from etclib.backends import backend_class

        cls = backend_class(name)
        assert cls.name == name
        assert cls.description
        assert isinstance(options_of(name), dict)


def test_configured_backends_without_anything(tmp_path, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.delenv("ETC_HF_MODEL", raising=False)
    status = {s.name: s for s in configured_backends()}
    assert list(status) == list(REGISTRY)
    assert status["copy"].usable
    for name in ("retrieval", "constant"):
        assert not status[name].usable and "ETC_DATA_DIR" in status[name].reason
    assert not status["hf"].usable and "ETC_HF_MODEL" in status["hf"].reason
    assert not status["openai"].usable and "OPENAI_API_KEY" in status["openai"].reason
    assert not status["gemini"].usable and "GEMINI_API_KEY" in status["gemini"].reason


def test_configured_backends_from_secrets_file(tmp_path, monkeypatch, tiny_corpus):
    (tmp_path / "secrets.toml").write_text(
        'OPENAI_API_KEY = "sk-test"\nETC_OPENAI_MODEL = "my-lora"\nGEMINI_API_KEY = "g"\n'
        'ANTHROPIC_API_KEY = "sk-ant-test"\n'
        f'ETC_HF_MODEL = "some/model"\nETC_DATA_DIR = "{tiny_corpus}"\n',
        encoding="utf-8",
    )
    monkeypatch.delenv("ETC_DATA_DIR", raising=False)  # unset already where there is no corpus
    status = {s.name: s for s in configured_backends()}
    assert all(s.usable for s in status.values()), status
    assert "my-lora" in status["openai"].reason
    assert "some/model" in status["hf"].reason


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1),
        (8, 8),
        ("16", 16),
        (" 3 ", 3),
        (0, None),
        (-1, None),
        ("x", None),
        (True, None),
        (2.5, None),
        ("", None),
        (None, None),
    ],
)
def test_positive_int(value, expected):
    if expected is None:
        with pytest.raises(ConfigError, match="option 'n' must be a positive integer"):
            positive_int(value, "n", "hf")
    else:
        assert positive_int(value, "n", "hf") == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("1", True),
        ("true", True),
        ("Yes", True),
        ("0", False),
        ("off", False),
        ("", False),
        ("maybe", None),
    ],
)
def test_as_bool(value, expected):
    if expected is None:
        with pytest.raises(ConfigError, match="must be true or false"):
            as_bool(value, "load_in_4bit", "hf")
    else:
        assert as_bool(value, "load_in_4bit", "hf") is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("私", ["私"]),
        ("嬉しい", ["嬉", "し", "い", "嬉し", "しい", "嬉しい"]),
        ("ab", ["a", "b", "ab"]),
    ],
)
def test_ngrams(text, expected):
    assert ngrams(text) == expected


# --- copy and constant ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines",
    [
        [("A", "こんにちは")],
        [("A", "今日は晴れ"), ("B", "そうですね！")],
        [("A", "")],
        [("A", "x"), ("B", "")],
    ],
)
def test_copy_returns_the_utterance(lines):
    backend = get_backend("copy")
    item = chat_item(lines)
    assert backend.predict([item]) == [lines[-1][1]]
    assert "".join(backend.stream(item)) == lines[-1][1]


def test_copy_reports_progress():
    seen = []
    get_backend("copy").predict([chat_item([("A", "a")])] * 3, progress=seen.append)
    assert sum(seen) == 3


def _brute_force_medoid(texts: list[str]) -> str:
    """Independent computation: TF-IDF by hand with dicts, all pairwise cosines."""
    grams = [Counter(ngrams(t)) for t in texts]
    n = len(texts)
    df = Counter(g for c in grams for g in c)
    vecs = []
    for c in grams:
        v = {g: (1 + math.log(k)) * (math.log((1 + n) / (1 + df[g])) + 1) for g, k in c.items()}
        norm = math.sqrt(sum(x * x for x in v.values()))
        vecs.append({g: x / norm for g, x in v.items()})
    best, best_score = None, -1.0
    for i, vi in enumerate(vecs):
        s = sum(
            sum(x * vj.get(g, 0.0) for g, x in vi.items()) for j, vj in enumerate(vecs) if j != i
        )
        if s / (n - 1) > best_score + 1e-12:
            best, best_score = texts[i], s / (n - 1)
    return best


def test_constant_is_the_train_medoid(tiny_corpus):
    corpus = load_corpus(tiny_corpus)
    train = [it.reference for it in items(corpus, "train")]
    backend = get_backend("constant", corpus=corpus)
    assert backend.text == _brute_force_medoid(train)
    assert backend.text in train
    test_items = items(corpus, "test")
    assert backend.predict(test_items) == [backend.text] * len(test_items)


def test_constant_on_the_real_corpus_is_reproducible(corpus):
    a = get_backend("constant", corpus=corpus).text
    from etclib.backends import constant

    constant._MEMORY.clear()
    assert get_backend("constant", corpus=corpus).text == a
    assert a in {it.reference for it in items(corpus, "train")}


# --- retrieval -----------------------------------------------------------------------------------


def _corpus_with_copied_test_dialogue(root: Path) -> Path:
    """Test dialogue 7 gets dialogue 2's utterances and transcriptions that must never leak."""
    train = json.loads((root / "dialogues" / "0002.json").read_text(encoding="utf-8"))
    test_path = root / "dialogues" / "0007.json"
    test = json.loads(test_path.read_text(encoding="utf-8"))
    for mine, theirs in zip(test["dialogue"], train["dialogue"], strict=True):
        mine["utterance"] = theirs["utterance"]
        mine["emotion_transcription"] = f"漏洩{mine['turn']}{mine['role']}"
    test_path.write_text(json.dumps(test, ensure_ascii=False), encoding="utf-8")
    return root


def test_retrieval_returns_the_exact_match_and_never_the_evaluated_split(tiny_corpus):
    corpus = load_corpus(_corpus_with_copied_test_dialogue(tiny_corpus))
    backend = get_backend("retrieval", corpus=corpus)
    by_key = {it.key: it.reference for it in items(corpus, "train")}
    test_items = [it for it in items(corpus, "test") if it.dialogue_id == 7]
    preds = backend.predict(test_items)
    assert preds == [by_key[(2, it.turn, it.role)] for it in test_items]
    every = backend.predict(items(corpus, "test") + items(corpus, "valid"))
    assert not any("漏洩" in p for p in every)
    assert set(every) <= set(by_key.values())
    assert {k[0] for k in backend.index.keys} == {1, 2, 3, 4, 5}


def test_retrieval_matches_the_role(tiny_corpus):
    corpus = load_corpus(tiny_corpus)
    backend = get_backend("retrieval", corpus=corpus, context_weight=0, turn_weight=0)
    train = {it.reference: it.role for it in items(corpus, "train")}
    for it in items(corpus, "test"):
        assert train[backend.predict([it])[0]] == it.role


def test_retrieval_index_is_cached_on_disk(tiny_corpus, tmp_path, monkeypatch):
    corpus = load_corpus(tiny_corpus)
    first = get_backend("retrieval", corpus=corpus).predict(items(corpus, "test"))
    files = sorted((tmp_path / "cache" / "retrieval").iterdir())
    assert [f.suffix for f in files] == [".json", ".npz"]
    retrieval_module._MEMORY.clear()

    def no_build(*a, **k):
        raise AssertionError("the index should come from the disk cache")

    monkeypatch.setattr(retrieval_module, "build_index", no_build)
    assert get_backend("retrieval", corpus=corpus).predict(items(corpus, "test")) == first


def test_retrieval_cache_is_keyed_by_corpus_content(tiny_corpus, tmp_path):
    corpus = load_corpus(tiny_corpus)
    get_backend("retrieval", corpus=corpus)
    path = tiny_corpus / "dialogues" / "0001.json"
    path.write_text(path.read_text(encoding="utf-8").replace("旅行", "旅路"), encoding="utf-8")
    changed = load_corpus(tiny_corpus)
    assert changed.content_hash != corpus.content_hash
    backend = get_backend("retrieval", corpus=changed)
    assert any("旅路" in t for t in backend.index.transcriptions)
    assert len(list((tmp_path / "cache" / "retrieval").glob("*.npz"))) == 2


def test_retrieval_damaged_cache_is_rebuilt(tiny_corpus, tmp_path):
    corpus = load_corpus(tiny_corpus)
    expected = get_backend("retrieval", corpus=corpus).predict(items(corpus, "test"))
    for f in (tmp_path / "cache" / "retrieval").glob("*.npz"):
        f.write_bytes(b"not a zip")
    retrieval_module._MEMORY.clear()
    assert get_backend("retrieval", corpus=corpus).predict(items(corpus, "test")) == expected


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("context_weight", -1),
        ("turn_weight", "a"),
        ("context_lines", -2),
        ("context_lines", 1.5),
        ("neighbours", 0),
        ("neighbours", True),
        ("neighbours", "5"),
    ],
)
def test_retrieval_option_values(tiny_corpus, option, value):
    with pytest.raises(ConfigError, match=f"option '{option}'"):
        get_backend("retrieval", data=str(tiny_corpus), **{option: value})


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            [("A", "旅行の話1の1番目です。私はどう思いますか")],
            "旅行について1回目に話したくて嬉しかった1",
        ),
        (
            [("A", "x"), ("B", "仕事の話2の3番目です。あなたはどう思いますか")],
            "仕事について3回目に共感したくて嬉しかった2",
        ),
    ],
)
def test_retrieval_nearest_neighbour_of_a_near_copy(tiny_corpus, lines, expected):
    backend = get_backend("retrieval", data=str(tiny_corpus), neighbours=1, context_weight=0)
    assert backend.predict([chat_item(lines)]) == [expected]


@pytest.mark.parametrize("k", [1, 3, 50])
def test_retrieval_consensus_picks_a_candidate_of_the_same_role(tiny_corpus, k):
    corpus = load_corpus(tiny_corpus)
    backend = get_backend("retrieval", corpus=corpus, neighbours=k)
    role_of = {it.reference: it.role for it in items(corpus, "train")}
    for it in items(corpus, "test"):
        (pred,) = backend.predict([it])
        assert role_of[pred] == it.role
        idx, _ = backend.candidates(it)
        assert len(idx) == min(k, 25)
        assert pred in {backend.index.transcriptions[i] for i in idx}


def test_retrieval_chat_items_and_empty_text(tiny_corpus):
    backend = get_backend("retrieval", data=str(tiny_corpus))
    train = {it.reference for it in items(load_corpus(tiny_corpus), "train")}
    for lines in ([("A", "")], [("A", "映画の話")], [("A", "x"), ("B", "犬の話2の3番目です。")]):
        (pred,) = backend.predict([chat_item(lines)])
        assert pred in train
        assert "".join(backend.stream(chat_item(lines))) == pred


def test_retrieval_on_the_real_corpus_finds_train_items_with_bounded_work(corpus, monkeypatch):
    """Train items find themselves; a prediction reuses the index (never rebuilt nor reloaded)
    and weighs at most ``neighbours`` candidates. Its latency (p95 < 50 ms) is a performance
    claim, measured by benchmarks/retrieval.py."""
    from etclib.backends import retrieval

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


# --- hf -----------------------------------------------------------------------------------------


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
    """Replace the head by one that always prefers ``token_id``."""
    import torch

    head = torch.nn.Linear(model.lm_head.in_features, model.lm_head.out_features, bias=True)
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


@pytest.mark.slow  # imports torch and transformers: seconds (tests/tiers.py)
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


@pytest.mark.skipif(
    "not _cuda()", reason="4-bit NF4 (bitsandbytes) needs a CUDA GPU; none is visible"
)
def test_hf_4bit_on_gpu(tiny_model):  # noqa: F811
    backend = get_backend("hf", model=str(tiny_model), load_in_4bit=True, max_new_tokens=4)
    import bitsandbytes as bnb

    assert any(isinstance(m, bnb.nn.Linear4bit) for m in backend.model.modules())
    preds = backend.predict([chat_item(c) for c in CHATS])
    assert len(preds) == len(CHATS)
