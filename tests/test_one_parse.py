"""A submission is read and validated once, from its upload to its stored rows (issue #24 item 4).

The Submit page checks the upload (``views.upload_check``), hands the validated
``Predictions`` to ``lb.submit``, which stores each value in its track's encoding
(``Track.encode``); the worker reads the rows back with ``Track.decode`` and checks them against
the content hash, without validating the file again. Study 2 is fed after a result is stored,
never for a result dropped as another worker's duplicate.

Counts are of etclib's own entry points (``parse``: bytes to rows; ``check_coverage``: one
prediction per item; ``label_values``: a label check of a key->value dict), wrapped here.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib import predictions, tracks
from etclib.corpus import load_corpus
from etclib.predictions import dumps_csv, dumps_jsonl, read_predictions
from etclib.task import items as split_items
from leaderboard import queue, worker
from leaderboard.db import open_db
from tests.conftest import REPO
from tests.test_hostile import CASES as HOSTILE
from views import upload_check

META = {"name": "Once", "setting": "zero-shot", "saw_test": "no"}
COUNTED = ("parse", "check_coverage", "label_values")


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


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """How often each of etclib's parse and validation entry points ran."""
    counts: Counter = Counter()
    for name in COUNTED:
        real = getattr(predictions, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(predictions, name, counted)
    return counts


def _file(items, track: str) -> tuple[str, bytes, dict]:
    """A valid file of ``track`` for ``items``: (name, bytes, key -> the text stored for it)."""
    if track == "erc":
        rows = [(it.key, it.label) for it in items]
        stored = {it.key: ";".join(it.label) for it in items}  # the labels' CSV form
        return "labels.csv", dumps_csv(rows, "erc").encode("utf-8"), stored
    rows = [(it.key, f"{it.utterance[:6]}と感じた") for it in items]
    return "preds.jsonl", dumps_jsonl(rows).encode("utf-8"), dict(rows)


def _stored(sid: str) -> dict:
    rows = open_db().query(
        "SELECT dialogue_id, turn, role, prediction FROM predictions WHERE submission_id = ?",
        [sid],
    )
    return {(d, t, r): p for d, t, r, p in rows}


@pytest.mark.parametrize("track", ["transcription", "erc"])
def test_an_upload_is_parsed_once_from_the_submit_page_to_stored_scores(tiny, calls, track):
    name, data, expected = _file(tiny, track)
    at = AppTest.from_file(str(REPO / "site_pages" / "submit.py"), default_timeout=60).run()
    at.file_uploader(key="submit_file").upload(name, data).run()
    assert not at.exception, at.exception
    assert any(f"valid, {len(tiny):,} predictions" in s.value for s in at.success)
    at.text_input(key="submit_name").set_value("Once")
    next(b for b in at.button if b.proto.label == "Submit for scoring").click().run()
    assert not at.exception, at.exception
    received = [s.value for s in at.success if "Received as submission" in s.value]
    assert received, [e.value for e in at.error]
    sid = received[0].removeprefix("Received as submission ").rstrip(".")
    assert lb.process_jobs() >= 1
    assert lb.status(sid)["status"] == "scored", lb.status(sid)
    assert _stored(sid) == expected
    assert lb.status(sid)["track"] == track
    # the page ran four times (load, upload, details, send); the file was read once
    assert calls == Counter(parse=1, check_coverage=1)


def test_a_file_given_to_lb_submit_is_parsed_once_too(tiny, calls):
    name, data, expected = _file(tiny, "erc")
    receipt = lb.submit(data, META, file_name=name)
    assert lb.process_jobs() >= 1
    assert lb.status(receipt.id)["status"] == "scored"
    assert _stored(receipt.id) == expected
    assert calls == Counter(parse=1, check_coverage=1)


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


def test_an_erc_row_stored_by_earlier_code_reads_back(tiny):
    """Rows written before Track.encode existed (the label set joined by ";", by
    format_label_set) are the form decode reads: such a board scores without a migration."""
    _, data, _ = _file(tiny, "erc")
    sid = lb.submit(data, META, file_name="labels.csv").id
    db = open_db()
    with db.write() as cur:  # the rows as the earlier store wrote them, written here by hand
        for it in tiny:
            cur.execute(
                "UPDATE predictions SET prediction = ? WHERE submission_id = ? AND "
                "dialogue_id = ? AND turn = ? AND role = ?",
                [";".join(it.label), sid, *it.key],
            )
    assert lb.process_jobs() >= 1
    assert lb.status(sid)["status"] == "scored"


def test_stored_rows_changed_after_submission_are_not_scored(tiny):
    _, data, _ = _file(tiny, "transcription")
    sid = lb.submit(data, META, file_name="preds.jsonl").id
    db = open_db()
    with db.write() as cur:
        cur.execute(
            "UPDATE predictions SET prediction = 'changed' WHERE submission_id = ? AND "
            "item_index = 3",
            [sid],
        )
    lb.process_jobs()
    st_ = lb.status(sid)
    assert st_["status"] == "failed", st_
    assert f"stored predictions of submission {sid} do not match" in st_["message"]
    assert db.query("SELECT count(*) FROM scores WHERE submission_id = ?", [sid])[0][0] == 0


def test_the_content_hash_checked_on_reading_is_the_one_stored(tiny):
    """The hash the worker checks is the stored one, computed independently here."""
    _, data, _ = _file(tiny, "transcription")
    sid = lb.submit(data, META, file_name="preds.jsonl").id
    body = [[*it.key, f"{it.utterance[:6]}と感じた"] for it in tiny]
    expected = hashlib.sha256(json.dumps(["etc-predictions-v1", body]).encode("ascii"))
    row = open_db().query("SELECT content_sha256 FROM submissions WHERE id = ?", [sid])
    assert row[0][0] == expected.hexdigest()


def test_study2_is_fed_after_the_result_is_stored_and_not_for_a_dropped_duplicate(
    tiny, monkeypatch
):
    fed: list[int] = []
    real = worker.feed_study

    def feed(submission_id, result):
        # the scores of the job are committed: a fresh read sees them
        fed.append(
            open_db().query("SELECT count(*) FROM scores WHERE submission_id = ?", [sid])[0][0]
        )
        return real(submission_id, result)

    monkeypatch.setattr(worker, "feed_study", feed)
    _, data, _ = _file(tiny, "transcription")
    sid = lb.submit(data, META, file_name="preds.jsonl").id
    db = open_db()
    job = queue.claim(db, worker.worker_name())
    assert job is not None and job.submission_id == sid
    assert worker.run_job(db, job)
    groups = db.query("SELECT count(*) FROM scores WHERE submission_id = ?", [sid])[0][0]
    assert groups > 0 and fed == [groups]
    # the same job finished again (a worker whose lease had expired): dropped, nothing fed
    assert worker.run_job(db, job)
    assert fed == [groups]
    assert db.query("SELECT count(*) FROM scores WHERE submission_id = ?", [sid])[0][0] == groups


def test_a_study2_failure_after_the_store_leaves_the_job_scored(tiny, monkeypatch):
    def broken(submission_id, result):
        raise RuntimeError("the studies database went away")

    monkeypatch.setattr(worker, "feed_study", broken)
    _, data, _ = _file(tiny, "transcription")
    sid = lb.submit(data, META, file_name="preds.jsonl").id
    assert lb.process_jobs() == 1
    assert lb.status(sid)["status"] == "scored"
    assert open_db().query("SELECT count(*) FROM jobs WHERE status <> 'done'")[0][0] == 0


@pytest.mark.parametrize("case", HOSTILE, ids=[c.id for c in HOSTILE])
def test_the_pages_check_keeps_the_predictions_it_accepted(tiny, case):
    """The page checks an upload with ``upload_check.validate`` (``validate_upload``), which keeps
    the validated predictions of every crafted file of tests/test_hostile.py that it accepts, and
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
