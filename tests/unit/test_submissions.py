"""A submission is read and validated once, from its upload to its stored rows (issue #24 item 4).

The Submit page checks the upload (``views.upload_check``), hands the validated
``Predictions`` to ``lb.submit``, which stores each value in its track's encoding
(``Track.encode``); the worker reads the rows back with ``Track.decode`` and checks them against
the content hash, without validating the file again. Study 2 is fed after a result is stored,
never for a result dropped as another worker's duplicate.

Counts are of etclib's own entry points (``parse``: bytes to rows; ``check_coverage``: one
prediction per item; ``check_values``: a track's check of a key->value dict), wrapped here.
"""

from __future__ import annotations

import hashlib
import json

import pytest
import streamlit as st

import leaderboard as lb
from etclib import predictions, tracks
from etclib.corpus import load_corpus
from etclib.predictions import dumps_csv, dumps_jsonl, read_predictions
from etclib.task import items as split_items
from leaderboard.db import open_db
from tests.unit.test_prediction_files import CASES as HOSTILE
from views import upload_check

META = {"name": "Once", "setting": "zero-shot", "saw_test": "no"}


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    """The tiny corpus's test items; no scoring threads (this test runs the worker itself)."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_WORKERS", "0")
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "100")
    st.cache_data.clear()
    st.cache_resource.clear()
    upload_check.clear()  # a check cached by another test would hide this one's parse
    yield split_items(load_corpus(tiny_corpus), "test")
    upload_check.clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    lb.close_all()


def _file(items, track: str) -> tuple[str, bytes, dict]:
    """A valid file of ``track`` for ``items``: (name, bytes, key -> the text stored for it)."""
    if track == "erc":
        rows = [(it.key, it.label) for it in items]
        stored = {it.key: ";".join(it.label) for it in items}  # the labels' CSV form
        return "labels.csv", dumps_csv(rows, "erc").encode("utf-8"), stored
    rows = [(it.key, f"{it.utterance[:6]}と感じた") for it in items]
    return "preds.jsonl", dumps_jsonl(rows).encode("utf-8"), dict(rows)


def test_validated_predictions_for_another_split_are_refused_and_nothing_is_stored(tiny):
    name, data, _ = _file(tiny, "transcription")
    preds = read_predictions(data, split="test", name=name)
    with pytest.raises(lb.SubmissionError, match="checked for the split 'test', not 'dev'"):
        lb.submit(preds, META, split="dev")
    with pytest.raises(lb.SubmissionError, match="the track 'transcription', not 'erc'"):
        lb.submit(preds, META, track="erc")
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
    _, data, _ = _file(tiny, "transcription")
    sid = lb.submit(data, META, file_name="preds.jsonl").id
    body = [[*it.key, f"{it.utterance[:6]}と感じた"] for it in tiny]
    expected = hashlib.sha256(json.dumps(["etc-predictions-v1", body]).encode("ascii"))
    row = open_db().query("SELECT content_sha256 FROM submissions WHERE id = ?", [sid])
    assert row[0][0] == expected.hexdigest()


@pytest.mark.parametrize("case", HOSTILE, ids=[c.id for c in HOSTILE])
def test_the_pages_check_keeps_the_predictions_it_accepted(tiny, case):
    """The page checks an upload with ``upload_check.validate`` (``validate_upload``), which keeps
    the validated predictions of every crafted file of tests/unit/test_prediction_files.py that it accepts, and
    none of one it refuses."""
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
