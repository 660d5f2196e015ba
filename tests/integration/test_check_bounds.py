"""What checking one crafted file may cost: the check stops reading after a bounded number of
problems, whether or not they merge into one run of lines (10 MB of ``{}`` lines), and after a
bounded number of records beyond the split's items (10 MB of one record repeated), saying where
it stopped; through ``etclib validate`` and the Submit page. One visitor's checks run one at a
time, others' beside them (views.upload_check).
"""

from __future__ import annotations

import json
import threading

import pytest

from etclib.tracks import predictions
from etclib.tracks.predictions import MAX_FOUND, MAX_PROBLEMS
from tests.conftest import REPO, observed

#: 9.9 MB of empty records: 3.3 million lines with the same problem.
EMPTY_RECORDS = b"{}\n" * 3_300_000


@pytest.fixture
def counted(tiny_corpus, monkeypatch) -> list[int]:
    """The tiny corpus as ETC_DATA_DIR; the list holds how many records the reader checked."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    calls = [0]
    check = predictions._check_record

    def counting(*args, **kwargs):
        calls[0] += 1
        return check(*args, **kwargs)

    monkeypatch.setattr(predictions, "_check_record", counting)
    return calls


def test_a_file_of_empty_records_stops_after_a_bounded_number_of_problems(
    counted, tmp_path, capsys
):
    from etclib.cli import main

    path = tmp_path / "empty.jsonl"
    path.write_bytes(EMPTY_RECORDS)
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"lines 1–{MAX_FOUND}: missing field(s): dialogue_id, turn, role, prediction" in err
    assert (
        f"the check stopped at line {MAX_FOUND + 1:,} of 3,300,001 after {MAX_FOUND:,} problems"
        in err
    )
    assert "Traceback" not in err
    assert counted[0] == MAX_FOUND


def test_a_record_repeated_over_ten_megabytes_stops_after_the_split_and_a_bound(
    counted, tiny_corpus, tmp_path, capsys
):
    from etclib.cli import main
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    first = items(load_corpus(tiny_corpus), "test")[0]
    line = json.dumps(dict(zip(predictions.FIELDS, (*first.key, "x"), strict=True))) + "\n"
    path = tmp_path / "repeated.jsonl"
    path.write_text(line * (9_900_000 // len(line)), encoding="utf-8")
    most = 20 + MAX_PROBLEMS  # the tiny test split's items, and the bound
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"the check stopped at line {most + 2:,} of" in err
    assert f"after more than {most:,} records" in err
    assert counted[0] == most + 1


def test_the_submit_page_says_where_the_check_stopped(counted):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("site_pages/submit.py").run()
    at.file_uploader(key="submit_file").upload("empty.jsonl", EMPTY_RECORDS).run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    assert table["line"].tolist() == [f"1–{MAX_FOUND}", ""]
    assert table["problem"].iloc[1].startswith(f"the check stopped at line {MAX_FOUND + 1:,}")
    assert counted[0] == MAX_FOUND


def test_one_visitor_has_one_check_running_at_a_time(monkeypatch):
    """Visitor A's second upload waits while A's first is being checked; visitor B's runs."""
    from views import upload_check

    upload_check.clear()
    release = threading.Event()
    running: dict[str, int] = {}
    most: dict[str, int] = {}
    lock = threading.Lock()

    def blocking(data: bytes, name: str):
        who = name.split("-")[0]
        with lock:
            running[who] = running.get(who, 0) + 1
            most[who] = max(most.get(who, 0), running[who])
        release.wait(30)
        with lock:
            running[who] -= 1
        return predictions_check(name)

    monkeypatch.setattr(upload_check, "validate", blocking)
    threads = [
        threading.Thread(target=upload_check.checked, args=(f"{n}".encode(), name, who))
        for n, (name, who) in enumerate(
            [("a-1.jsonl", "visitor-a"), ("a-2.jsonl", "visitor-a"), ("b-1.jsonl", "visitor-b")]
        )
    ]
    for t in threads:
        t.start()
    # A's first check and B's are running, A's second is waiting for A's first
    observed(lambda: running.get("a") == 1 and running.get("b") == 1)
    observed(lambda: upload_check.waiting() == 1)
    release.set()
    for t in threads:
        t.join(30)
    assert most == {"a": 1, "b": 1}
    assert upload_check.entries() == 3  # every check made and cached


def predictions_check(name: str):
    from views.submission import Validation

    return Validation(False, name, message="refused")
