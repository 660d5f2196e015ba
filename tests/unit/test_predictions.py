import codecs
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etclib.core.errors import PredictionsError
from etclib.data.corpus import load_corpus
from etclib.tracks.predictions import (
    MAX_FILE_BYTES,
    MAX_PREDICTION_CHARS,
    dumps_jsonl,
    read_predictions,
    template_rows,
)
from etclib.tracks.scoring import score


@pytest.fixture
def tiny(tiny_corpus):
    return load_corpus(tiny_corpus)


def good_lines(corpus, split="test"):
    rows = [(k, f"予測{i}です") for i, (k, _) in enumerate(template_rows(corpus, split))]
    return dumps_jsonl(rows).splitlines()


def refused(data: bytes, corpus, name="p.jsonl", split="test") -> PredictionsError:
    with pytest.raises(PredictionsError) as err:
        read_predictions(data, split=split, corpus=corpus, name=name)
    return err.value


def test_valid_jsonl_and_csv(tiny):
    lines = good_lines(tiny)
    p = read_predictions(("\n".join(lines) + "\n").encode(), corpus=tiny, name="p.jsonl")
    assert len(p) == 20 and p.format == "jsonl"
    rows = [json.loads(x) for x in lines]
    csv_text = "dialogue_id,turn,role,prediction,extra\n" + "".join(
        f'{r["dialogue_id"]},{r["turn"]},{r["role"]},"{r["prediction"]}, ""quoted""\nnewline",x\n'
        for r in rows
    )
    c = read_predictions(csv_text.encode(), corpus=tiny, name="p.csv")
    assert c.format == "csv"
    assert c.by_key[(7, 1, "speaker")] == '予測0です, "quoted"\nnewline'


def test_utf8_bom_is_accepted(tiny):
    data = codecs.BOM_UTF8 + "\n".join(good_lines(tiny)).encode()
    assert len(read_predictions(data, corpus=tiny, name="p.jsonl")) == 20


@pytest.mark.parametrize(
    "edit, line, message",
    [
        (lambda L: L.__setitem__(2, "{not json"), 3, "invalid JSON"),
        (lambda L: L.__setitem__(4, "[1, 2]"), 5, "expected a JSON object, found list"),
        (
            lambda L: L.__setitem__(0, '{"dialogue_id": 7, "turn": 1, "role": "speaker"}'),
            1,
            "missing field(s): prediction",
        ),
        (
            lambda L: L.__setitem__(
                1, '{"dialogue_id": "7", "turn": 1, "role": "listener", "prediction": "x"}'
            ),
            2,
            "'dialogue_id' must be an integer",
        ),
        (
            lambda L: L.__setitem__(
                1, '{"dialogue_id": 7, "turn": true, "role": "listener", "prediction": "x"}'
            ),
            2,
            "'turn' must be an integer",
        ),
        (
            lambda L: L.__setitem__(
                1, '{"dialogue_id": 7, "turn": 1, "role": "B", "prediction": "x"}'
            ),
            2,
            "'role' must be",
        ),
        (
            lambda L: L.__setitem__(
                1, '{"dialogue_id": 7, "turn": 1, "role": "listener", "prediction": null}'
            ),
            2,
            "'prediction' must be a string, found null",
        ),
        (lambda L: L.__setitem__(3, L[2]), 4, "repeats line 3"),
        (
            lambda L: L.__setitem__(
                5, '{"dialogue_id": 999, "turn": 1, "role": "speaker", "prediction": "x"}'
            ),
            6,
            "unknown item (dialogue_id=999",
        ),
        (
            lambda L: L.__setitem__(
                5, '{"dialogue_id": 1, "turn": 1, "role": "speaker", "prediction": "x"}'
            ),
            6,
            "belongs to the train split",
        ),
        (
            lambda L: L.__setitem__(
                5,
                json.dumps(
                    {
                        "dialogue_id": 7,
                        "turn": 3,
                        "role": "speaker",
                        "prediction": "長" * (MAX_PREDICTION_CHARS + 1),
                    }
                ),
            ),
            6,
            "the limit is",
        ),
    ],
)
def test_bad_jsonl_lines_are_named(tiny, edit, line, message):
    lines = good_lines(tiny)
    edit(lines)
    err = refused("\n".join(lines).encode(), tiny)
    assert any(p.line == line and message in p.message for p in err.problems), err.problems
    assert f"line {line}: " in str(err)


def test_missing_items_say_how_many_and_show_first(tiny):
    lines = good_lines(tiny)[:-3]
    err = refused("\n".join(lines).encode(), tiny)
    assert "3 of the 20 items of the test split have no prediction" in str(err)
    assert "(8, 4, 'listener')" not in str(err) and "(8, 4, listener)" in str(err)


def test_wrong_split(tiny):
    err = refused(dumps_jsonl(template_rows(tiny, "valid")).encode(), tiny)
    assert "belongs to the valid split, not test" in str(err)


@pytest.mark.parametrize(
    "data, name, message",
    [
        (b"", "p.jsonl", "the file is empty"),
        (b"  \n\n", "p.jsonl", "the file is empty"),
        (b'{"dialogue_id": 7}\n\xff\xfe', "p.jsonl", "line 2: not valid UTF-8"),
        ("x".encode("utf-16"), "p.jsonl", "UTF-16"),
        (b"a,b,c\n1,2,3\n", "p.csv", "missing: dialogue_id, turn, role, prediction"),
        (
            b"dialogue_id,turn,role,prediction\n7,1,speaker\n",
            "p.csv",
            "line 2: row has 3 cells, the header has 4",
        ),
        (
            b"dialogue_id,turn,role,prediction\n7,x,speaker,hi\n",
            "p.csv",
            "line 2: 'turn' must be an integer",
        ),
        (b"dialogue_id,turn,role,prediction\n", "p.csv", "holds no prediction"),
        (b" " * (MAX_FILE_BYTES + 1), "p.jsonl", "larger than the limit of 10 MB"),
    ],
)
def test_bad_files(tiny, data, name, message):
    assert message in str(refused(data, tiny, name=name))


def test_missing_path(tiny, tmp_path):
    with pytest.raises(PredictionsError, match="no such file"):
        read_predictions(tmp_path / "none.jsonl", corpus=tiny)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6))
def test_shuffling_lines_changes_no_score(tiny, seed):
    lines = good_lines(tiny)
    base = score(read_predictions("\n".join(lines).encode(), corpus=tiny), corpus=tiny).to_json()
    random.Random(seed).shuffle(lines)
    shuffled = score(
        read_predictions("\n".join(lines).encode(), corpus=tiny), corpus=tiny
    ).to_json()
    assert shuffled == base


def test_the_coverage_check_lists_at_most_the_cap_and_counts_the_rest(tiny_corpus):
    from etclib.core.errors import PredictionsError
    from etclib.data.corpus import load_corpus
    from etclib.tracks.predictions import MAX_PROBLEMS, check_coverage

    corpus = load_corpus(tiny_corpus)
    rows = [(n + 1, (900000 + n, 1, "speaker"), "") for n in range(160_000)]
    with pytest.raises(PredictionsError) as info:
        check_coverage(rows, "test", corpus, "crafted.jsonl")
    exc = info.value
    assert len(exc.problems) <= MAX_PROBLEMS
    assert exc.total == 160_001  # 160,000 unknown items and the missing test items
    assert exc.problems[0].line == 1 and "unknown item" in exc.problems[0].message
    assert any("have no prediction" in p.message for p in exc.problems)  # the whole-file one
    listed = len(exc.problems) - 1
    assert exc.problems[-1].message.startswith(f"... and {160_001 - listed:,} more problems")
    assert "refused, 160001 problems" in str(exc)
