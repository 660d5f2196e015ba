"""The parsed corpus cached on disk: a later process reads the cached parse
instead of parsing and checking every dialogue file, only the splits it asks for, and a changed
corpus file is parsed again.

Equality is against a fresh parse (``etclib.data.corpus._load``), never against the cache itself.
"""

from __future__ import annotations

import json

import pytest

from etclib.core.errors import PredictionsError
from etclib.data import corpus as corpus_mod
from etclib.data.corpus import content_hash, load_corpus
from etclib.data.task import items
from etclib.tracks.predictions import dumps_jsonl
from etclib.tracks.scoring import score

_PARSE = corpus_mod._load  # a fresh parse, whatever the tests count


def fresh(root):
    return _PARSE(root.resolve(), content_hash(root.resolve()))


@pytest.fixture
def parses(monkeypatch):
    """Counts full parses of the corpus files; the in-memory cache is emptied first."""
    calls = []
    load = corpus_mod._load

    def counted(path, digest):
        calls.append(path)
        return load(path, digest)

    monkeypatch.setattr(corpus_mod, "_load", counted)
    monkeypatch.setattr(corpus_mod, "_CACHE", {})
    return calls


@pytest.fixture
def parts_read(monkeypatch):
    """The splits read from the cache's per-split files, in order."""
    calls = []
    read = corpus_mod._read_part

    def counted(corpus, split):
        calls.append(split)
        return read(corpus, split)

    monkeypatch.setattr(corpus_mod, "_read_part", counted)
    return calls


def cached_files(tmp_path):
    """The cache's states of the corpus (one folder each), by their ``meta.json``."""
    return sorted((tmp_path / "cache" / "corpus").glob("*/meta.json"))


def test_a_second_process_reads_the_cached_corpus_equal_to_a_fresh_parse(
    tiny_corpus, tmp_path, parses
):
    first = load_corpus(tiny_corpus)
    assert len(parses) == 1 and len(cached_files(tmp_path)) == 1
    corpus_mod._CACHE.clear()  # as a new process
    again = load_corpus(tiny_corpus)
    assert len(parses) == 1  # read from the cache, not parsed
    assert again is not first and again == first == fresh(tiny_corpus)
    assert again.content_hash == content_hash(tiny_corpus.resolve())
    assert items(again, "test") == items(fresh(tiny_corpus), "test")


def test_a_changed_corpus_file_is_parsed_again(tiny_corpus, tmp_path, parses):
    before = load_corpus(tiny_corpus)
    path = sorted((tiny_corpus / "dialogues").glob("*.json"))[0]
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["dialogue"][0]["emotion_transcription"] += "（書き換え）"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    corpus_mod._CACHE.clear()
    after = load_corpus(tiny_corpus)
    assert len(parses) == 2  # the change was seen: parsed again
    assert after != before and after == fresh(tiny_corpus)
    changed = after.by_id[raw["dialogue_id"]].utterances[0]
    assert changed.transcription.endswith("（書き換え）")
    assert after.content_hash != before.content_hash
    assert len(cached_files(tmp_path)) == 1  # the stale one replaced


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"version": 1}', b'{"version": 999}'])
def test_a_damaged_or_foreign_cache_file_costs_a_parse_only(tiny_corpus, tmp_path, parses, damage):
    load_corpus(tiny_corpus)
    cached_files(tmp_path)[0].write_bytes(damage)
    corpus_mod._CACHE.clear()
    assert load_corpus(tiny_corpus) == fresh(tiny_corpus)
    assert len(parses) == 2


@pytest.mark.parametrize("damage", [None, b"", b"[1, 2]", b"[]"])
def test_a_damaged_or_missing_split_file_costs_a_parse_only(tiny_corpus, tmp_path, parses, damage):
    load_corpus(tiny_corpus)
    part = cached_files(tmp_path)[0].parent / "test.json"
    if damage is None:
        part.unlink()
    else:
        part.write_bytes(damage)
    corpus_mod._CACHE.clear()
    again = load_corpus(tiny_corpus)
    assert len(parses) == 1  # meta.json was fine
    assert again.split("test") == fresh(tiny_corpus).split("test")
    assert len(parses) == 2  # the test split's file was not: parsed again
    assert again == fresh(tiny_corpus)


def test_scoring_the_test_split_reads_only_its_part_of_the_cache(tiny_corpus, parses, parts_read):
    load_corpus(tiny_corpus)
    corpus_mod._CACHE.clear()  # as a new process
    cached = load_corpus(tiny_corpus)
    its = items(fresh(tiny_corpus), "test")
    assert len(its) > 0 and len(fresh(tiny_corpus).split("train")) > 0
    preds = {it.key: it.reference for it in its}
    path = tiny_corpus.parent / "preds.jsonl"
    path.write_text(dumps_jsonl(preds.items()), encoding="utf-8")
    result = score(path, corpus=cached, metrics="bleu,rouge", split="test")
    assert result.n_items == len(its)
    assert parts_read == ["test"] and len(parses) == 1
    assert cached.split("train") == fresh(tiny_corpus).split("train")  # read when asked for
    assert parts_read == ["test", "train"]


def test_a_file_of_another_split_is_refused_naming_it_without_reading_that_split(
    tiny_corpus, parses, parts_read
):
    load_corpus(tiny_corpus)
    corpus_mod._CACHE.clear()
    cached = load_corpus(tiny_corpus)
    valid = items(fresh(tiny_corpus), "valid")
    path = tiny_corpus.parent / "preds.jsonl"
    path.write_text(dumps_jsonl((it.key, "はい") for it in valid), encoding="utf-8")
    with pytest.raises(PredictionsError, match="belongs to the valid split, not test"):
        score(path, corpus=cached, metrics="bleu")
    assert parts_read == ["test"]


def test_scores_are_identical_with_and_without_the_cache(tiny_corpus, parses):
    load_corpus(tiny_corpus)
    corpus_mod._CACHE.clear()
    cached = load_corpus(tiny_corpus)
    assert len(parses) == 1
    parsed = fresh(tiny_corpus)
    its = items(parsed, "test")
    preds = {it.key: it.reference[: len(it.reference) // 2] or "はい" for it in its}
    path = tiny_corpus.parent / "preds.jsonl"
    path.write_text(dumps_jsonl(preds.items()), encoding="utf-8")
    runs = [score(path, corpus=c, metrics="bleu,rouge").to_json() for c in (cached, parsed)]
    assert runs[0] == runs[1]
    assert runs[0]["signature"]["corpus"] == content_hash(tiny_corpus.resolve())[:12]


def test_items_are_built_once_per_corpus_and_handed_out_as_new_lists(tiny_corpus):
    corpus = load_corpus(tiny_corpus)
    a, b = items(corpus, "test"), items(corpus, "test")
    assert a == b and a is not b and a[0] is b[0]
    a.clear()
    assert items(corpus, "test") == b


def test_a_lookup_by_id_builds_that_dialogues_split_only(tiny_corpus, parses, parts_read):
    load_corpus(tiny_corpus)
    corpus_mod._CACHE.clear()
    cached = load_corpus(tiny_corpus)
    parsed = fresh(tiny_corpus)
    test_id = parsed.split("test")[0].dialogue_id
    assert cached.by_id[test_id] == parsed.by_id[test_id]
    assert cached.by_id.get(-1) is None and -1 not in cached.by_id
    assert parts_read == ["test"]
    assert list(cached.by_id) == list(parsed.by_id) == [d.dialogue_id for d in parsed.dialogues]
    assert dict(cached.by_id) == dict(parsed.by_id)
