"""A submission is read and validated once, from its upload to its stored rows.

The Submit page takes a file by its type (refused by name before it is read), checks the upload
(``views.upload_check``), hands the validated ``Predictions`` to ``lb.submit``, which stores each
value in its track's encoding (``Track.encode``); the worker reads the rows back with
``Track.decode`` and checks them against the content hash, without validating the file again. Study
2 is fed after a result is stored, never for a result dropped as another worker's duplicate.

Counts are of etclib's own entry points (``parse``: bytes to rows; ``check_coverage``: one
prediction per item; ``check_values``: a track's check of a key->value dict), wrapped here.
"""

from __future__ import annotations

import hashlib
import json

import pytest

import leaderboard as lb
from etclib import tracks
from etclib.tracks import predictions
from etclib.tracks.predictions import read_predictions
from leaderboard.db import open_db
from tests.fixtures.predictions import (  # noqa: F401 - submissions_tiny: the fixture "tiny"
    CASES,
    SUBMISSION_META,
    submissions_tiny,
    unknown_items,
    valid_file,
)
from views import upload_check


def test_validated_predictions_for_another_split_are_refused_and_nothing_is_stored(tiny):
    name, data, _ = valid_file(tiny, "transcription")
    preds = read_predictions(data, split="test", name=name)
    with pytest.raises(lb.SubmissionError, match="checked for the split 'test', not 'dev'"):
        lb.submit(preds, SUBMISSION_META, split="dev")
    with pytest.raises(lb.SubmissionError, match="the track 'transcription', not 'erc'"):
        lb.submit(preds, SUBMISSION_META, track="erc")
    assert open_db().query("SELECT count(*) FROM submissions")[0][0] == 0


@pytest.mark.parametrize(
    ("track", "value", "stored"),
    [
        ("transcription", "嬉しいと思った。", "嬉しいと思った。"),
        ("transcription", "", ""),
        ("transcription", "a;b", "a;b"),  # a ";" in a transcription is text
        ("erc", ("joy", "surprise"), "joy;surprise"),
        ("erc", ("neutral",), "neutral"),
        ("erc", ("anger", "disgust", "fear"), "anger;disgust;fear"),
    ],
)
def test_a_track_stores_a_prediction_in_one_form_and_reads_it_back(track, value, stored):
    t = tracks.get(track)
    assert t.encode(value) == stored
    assert t.decode(stored) == value


@pytest.mark.parametrize(
    ("track", "stored", "value"),
    [("transcription", None, ""), ("erc", None, ()), ("erc", "", ()), ("erc", "joy;", ("joy",))],
)
def test_a_track_reads_an_empty_stored_value(track, stored, value):
    assert tracks.get(track).decode(stored) == value


def test_the_content_hash_checked_on_reading_is_the_one_stored(tiny):
    """The hash the worker checks is the stored one, computed independently here."""
    _, data, _ = valid_file(tiny, "transcription")
    sid = lb.submit(data, SUBMISSION_META, file_name="preds.jsonl").id
    body = [[*it.key, f"{it.utterance[:6]}と感じた"] for it in tiny]
    expected = hashlib.sha256(json.dumps(["etc-predictions-v1", body]).encode("ascii"))
    row = open_db().query("SELECT content_sha256 FROM submissions WHERE id = ?", [sid])
    assert row[0][0] == expected.hexdigest()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_pages_check_keeps_the_predictions_it_accepted(tiny, case):
    """The page checks an upload with ``upload_check.validate`` (``validate_upload``), which
    keeps the validated predictions of every crafted file of tests/fixtures/predictions.py that
    it accepts, and none of one it refuses."""
    data = case.make([it.key for it in tiny])
    got = upload_check.validate(data, case.name)
    if got.ok:
        assert got.predictions is not None and len(got.predictions) == len(tiny) == got.items
        for key, value in case.expect.items():
            assert got.predictions.by_key[key] == value
    else:
        assert got.predictions is None and got.problems


def test_the_pages_check_never_raises(tiny, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(predictions, "read_predictions", broken)
    check = upload_check.validate(b"{}\n", "p.jsonl")
    assert not check.ok and check.predictions is None
    assert check.problems and "a bug" not in check.problems[0].message


def test_cached_checks_expire(tiny, monkeypatch):
    from views import upload_check

    upload_check.clear()
    clock = [1000.0]
    monkeypatch.setattr(upload_check.time, "monotonic", lambda: clock[0])
    upload_check.checked(unknown_items(10), "a.jsonl")
    assert upload_check.entries() == 1
    clock[0] += upload_check.TTL_S + 1
    upload_check.checked(unknown_items(10, 50), "b.jsonl")  # any check drops the expired ones
    assert upload_check.entries() == 1
    upload_check.clear()


ACCEPTED = "JSON Lines (.jsonl, .json, .ndjson) or CSV (.csv)"


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        ("preds.jsonl", None),
        ("preds.json", None),
        ("preds.ndjson", None),
        ("preds.csv", None),
        ("PREDS.CSV", None),
        ("予測.jsonl", None),
        ("notes.txt", "a .txt file is not taken here"),
        ("preds.jsonl.txt", "a .txt file is not taken here"),
        ("preds.xlsx", "a .xlsx file is not taken here"),
        ("preds", "a file without a type in its name is not taken here"),
        ("", "a file without a type in its name is not taken here"),
    ],
)
def test_upload_type_problem(name, refused):
    from views.submission import upload_type_problem

    said = upload_type_problem(name)
    if refused is None:
        assert said is None
    else:
        assert said.startswith(refused) and ACCEPTED in said, said


def test_accepted_types_in_words():
    from views.submission import accepted_types_text, upload_types

    assert accepted_types_text() == ACCEPTED
    assert upload_types() == ["jsonl", "json", "ndjson", "csv"]


def test_a_txt_file_is_refused_by_its_type_before_it_is_read():
    from views.submission import validate_upload

    valid = b'{"dialogue_id": 1, "turn": 1, "role": "speaker", "prediction": "x"}\n'
    check = validate_upload(valid, "predictions.txt")
    assert not check.ok
    assert [(p.line, p.message[:30]) for p in check.problems] == [
        (0, "a .txt file is not taken here.")
    ]
