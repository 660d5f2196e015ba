"""Backend registry, the CPU backends (retrieval, constant, copy) and the in-process hf backend."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from etclib.core.errors import BackendError, ConfigError
from etclib.data.corpus import load_corpus
from etclib.data.task import chat_item, items
from etclib.models import (
    REGISTRY,
    configured_backends,
    get_backend,
    options_of,
)
from etclib.models import retrieval as retrieval_module
from etclib.models._tfidf import ngrams
from etclib.models.base import as_bool, positive_int
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture
from tests.fixtures.models import _fresh_memory  # noqa: F401 - for every test here


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
        from etclib.models import backend_class

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
