"""A submission is read and validated once, from its upload to its stored rows.

The Submit page checks the upload (``views.upload_check``), hands the validated
``Predictions`` to ``lb.submit``, which stores each value in its track's encoding
(``Track.encode``); the worker reads the rows back with ``Track.decode`` and checks them against
the content hash, without validating the file again. Study 2 is fed after a result is stored,
never for a result dropped as another worker's duplicate.

Counts are of etclib's own entry points (``parse``: bytes to rows; ``check_coverage``: one
prediction per item; ``check_values``: a track's check of a key->value dict), wrapped here.
"""

from __future__ import annotations

from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.tracks import predictions
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import queue, worker
from leaderboard.db import open_db
from tests.conftest import REPO, needs_corpus
from tests.fixtures.predictions import (  # noqa: F401 - submissions_tiny: the fixture "tiny"
    SUBMISSION_META,
    submissions_tiny,
    unknown_items,
    valid_file,
)
from tests.site_apptest import app

COUNTED = ("parse", "check_coverage", "check_values")


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


def _stored(sid: str) -> dict:
    rows = open_db().query(
        "SELECT dialogue_id, turn, role, prediction FROM predictions WHERE submission_id = ?",
        [sid],
    )
    return {(d, t, r): p for d, t, r, p in rows}


@pytest.mark.parametrize("track", ["transcription", "erc"])
def test_an_upload_is_parsed_once_from_the_submit_page_to_stored_scores(tiny, calls, track):
    name, data, expected = valid_file(tiny, track)
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
    name, data, expected = valid_file(tiny, "erc")
    receipt = lb.submit(data, SUBMISSION_META, file_name=name)
    assert lb.process_jobs() >= 1
    assert lb.status(receipt.id)["status"] == "scored"
    assert _stored(receipt.id) == expected
    assert calls == Counter(parse=1, check_coverage=1)


def test_an_erc_row_stored_by_earlier_code_reads_back(tiny):
    """Rows written before Track.encode existed (the label set joined by ";", by
    format_label_set) are the form decode reads: such a board scores without a migration."""
    _, data, _ = valid_file(tiny, "erc")
    sid = lb.submit(data, SUBMISSION_META, file_name="labels.csv").id
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
    _, data, _ = valid_file(tiny, "transcription")
    sid = lb.submit(data, SUBMISSION_META, file_name="preds.jsonl").id
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
    _, data, _ = valid_file(tiny, "transcription")
    sid = lb.submit(data, SUBMISSION_META, file_name="preds.jsonl").id
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
    _, data, _ = valid_file(tiny, "transcription")
    sid = lb.submit(data, SUBMISSION_META, file_name="preds.jsonl").id
    assert lb.process_jobs() == 1
    assert lb.status(sid)["status"] == "scored"
    assert open_db().query("SELECT count(*) FROM jobs WHERE status <> 'done'")[0][0] == 0


def test_many_crafted_refused_uploads_leave_the_cache_under_its_bound(tiny, monkeypatch):
    from etclib.tracks.predictions import MAX_PROBLEMS
    from views import upload_check

    upload_check.clear()
    monkeypatch.setattr(upload_check, "MAX_BYTES", 400_000)
    at = app("site_pages/submit.py")
    sizes = []
    n_items = len(tiny) + MAX_PROBLEMS  # as many records as the reader reads
    for n in range(8):
        at.file_uploader(key="submit_file").upload(f"crafted{n}.jsonl", unknown_items(n_items, n))
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(f"refused\\: {n_items + 1:,} problem" in e.value for e in at.error), at.error
        assert upload_check.held_bytes() <= upload_check.MAX_BYTES
        sizes.append(upload_check.held_bytes())
    entry = upload_check.size_of(upload_check.checked(unknown_items(n_items, 7), "crafted7.jsonl"))
    assert entry > 100_000  # a full refusal is large...
    assert 1 <= upload_check.entries() <= upload_check.MAX_BYTES // entry < 8  # ...a few stay
    check = upload_check.checked(unknown_items(n_items, 0), "crafted0.jsonl")
    assert len(check.problems) <= MAX_PROBLEMS and check.problem_count == n_items + 1


BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "evil\u202elmsj.exe" shows as "evilexe.jsml"


def test_bidi_controls_are_stripped_from_file_names_on_the_page_and_in_the_history(tiny):
    name = f"evil{BIDI}lnosj\u200b.jsonl"
    # the Submit page's message, for a refused file
    at = app("site_pages/submit.py")
    at.file_uploader(key="submit_file").upload(name, b'{"dialogue_id": 1}\n').run()
    shown = " ".join(e.value for e in at.error)
    assert "was refused" in shown and BIDI not in shown and "\u200b" not in shown
    assert "evillnosj" in shown
    # the status history of an accepted one
    data = dumps_jsonl((it.key, it.reference) for it in tiny).encode("utf-8")
    receipt = lb.submit(data, SUBMISSION_META, file_name=name)
    history = " ".join(h["message"] or "" for h in lb.status(receipt.id)["history"])
    assert "received evillnosj.jsonl" in history and BIDI not in history


@needs_corpus
def test_submit_page_says_a_txt_file_is_refused_in_the_page(corpus):
    from tests.site_apptest import assert_clean, predictions_file, send_button

    at = app("site_pages/submit.py")
    at.file_uploader(key="submit_file").upload("preds.txt", predictions_file(corpus)).run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith(r"preds\.txt was refused\: a \.txt file is not taken here\.")
    assert r"JSON Lines \(\.jsonl, \.json, \.ndjson\) or CSV \(\.csv\)" in errors[0]
    assert send_button(at).proto.disabled
