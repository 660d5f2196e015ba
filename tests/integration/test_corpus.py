from tests.conftest import needs_corpus


@needs_corpus
def test_real_corpus_sizes(corpus):
    assert len(corpus.dialogues) == 997
    assert len(corpus.participants) == 198
    assert len(corpus.utterances) == 9970
    assert {s: len(corpus.split(s)) for s in ("train", "valid", "test")} == {
        "train": 797,
        "valid": 99,
        "test": 101,
    }
    d = corpus.by_id[945]
    assert d.dialogue_emotion == "信頼する"
    assert d.utterances[0].text.startswith("信頼がないと")
    assert d.utterances[0].label == ("fear",)  # 恐怖, 恐怖, 該当なし
