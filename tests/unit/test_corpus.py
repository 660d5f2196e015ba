import json

import pytest

from etclib.core.errors import DataError
from etclib.data.corpus import aggregate_label, load_corpus


@pytest.mark.parametrize(
    "annotations, expected",
    [
        ((("joy",), ("joy",), ("neutral",)), ("joy",)),
        ((("joy",), ("sadness",), ("neutral",)), ("neutral",)),
        ((("neutral",), ("neutral",), ("joy",)), ("neutral",)),
        ((("joy", "fear"), ("fear",), ("joy",)), ("joy", "fear")),
        ((("anger",), ("anger",), ("anger",)), ("anger",)),
        ((("disgust", "joy"), ("disgust",), ("neutral",)), ("disgust",)),
        ((("surprise",), ("joy",), ("fear",)), ("neutral",)),
    ],
)
def test_aggregate_label_two_of_three(annotations, expected):
    assert aggregate_label(annotations) == expected


def _mutate(root, file, fn):
    path = root / "dialogues" / file
    data = json.loads(path.read_text(encoding="utf-8"))
    fn(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize(
    "mutation, message",
    [
        (lambda d: d.pop("dialogue_emotion"), "missing field 'dialogue_emotion'"),
        (lambda d: d.__setitem__("dialogue_id", "7"), "field 'dialogue_id' should be int"),
        (
            lambda d: d["dialogue"][3].pop("emotion_transcription"),
            "dialogue[3]: missing field 'emotion_transcription'",
        ),
        (lambda d: d["dialogue"][2]["emotions"].pop(), "must hold 3 non-empty label lists"),
        (
            lambda d: d["dialogue"][1]["emotions"][0].__setitem__(0, "happy"),
            "unknown label 'happy'",
        ),
        (
            lambda d: d["dialogue"][0].__setitem__("role", "listener"),
            "must alternate speaker, listener",
        ),
        (lambda d: d["dialogue"].pop(), "has 9 utterances, expected 10"),
        (lambda d: d["participants"].__setitem__("speaker", "ZZ"), "participant 'ZZ' has no entry"),
    ],
)
def test_schema_errors_name_file_and_field(tiny_corpus, mutation, message):
    _mutate(tiny_corpus, "0007.json", mutation)
    with pytest.raises(DataError) as err:
        load_corpus(tiny_corpus)
    assert "0007.json" in str(err.value)
    assert message in str(err.value)


def test_invalid_json_and_missing_folder(tiny_corpus, tmp_path):
    (tiny_corpus / "dialogues" / "0003.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(DataError, match=r"0003.json: invalid JSON at line 1"):
        load_corpus(tiny_corpus)
    with pytest.raises(DataError, match="ETC_DATA_DIR"):
        load_corpus(tmp_path / "nowhere")


def test_split_must_cover_files(tiny_corpus):
    (tiny_corpus / "split.json").write_text(
        json.dumps({"train": ["0001.json"], "valid": [], "test": []})
    )
    with pytest.raises(DataError, match="not listed in any split"):
        load_corpus(tiny_corpus)
