"""What a visitor learns of entries the moderators took off the board, and of the server: the
same predictions as a hidden or deleted entry, uploaded on the Submit page, are received as the
visitor's own entry without a word about the other one; the page's status history shows times
and states only; a file submitted from the operator's command line is stored under its name,
not its path.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.tracks.predictions import dumps_csv, dumps_jsonl
from tests.conftest import REPO
from tests.fixtures.predictions import ENTRY_META as META

TOKEN = "s3cret-admin-token-0123456789"


def submit_on_the_page(name: str, data: bytes):
    """The Submit page after uploading ``data`` as ``name`` and sending it as "Mine"."""
    at = AppTest.from_file(str(REPO / "site_pages" / "submit.py"), default_timeout=60).run()
    at.file_uploader(key="submit_file").upload(name, data).run()
    at.text_input(key="submit_name").set_value("Mine")
    next(b for b in at.button if b.proto.label == "Submit for scoring").click().run()
    assert not at.exception, at.exception
    return at


def page_text(at) -> str:
    parts = [*at.success, *at.info, *at.error, *at.warning, *at.markdown, *at.text]
    return "\n".join(str(p.value) for p in parts) + "\n".join(
        d.value.to_csv() for d in at.dataframe
    )


@pytest.mark.parametrize("action", [lb.hide, lb.delete])
def test_the_same_predictions_as_a_removed_entry_are_the_visitors_own(
    tiny,  # noqa: F811 - the fixture imported above
    monkeypatch,
    action,
):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", TOKEN)
    rows = [(it.key, f"{it.reference}!") for it in tiny]
    removed = lb.submit(dumps_jsonl(rows).encode(), META, file_name="removed.jsonl").id
    action(removed, TOKEN, "spam")
    # the same predictions in another format and order
    at = submit_on_the_page("mine.csv", dumps_csv(reversed(rows)).encode())
    received = [s.value for s in at.success if "Received as submission" in s.value]
    assert received, page_text(at)
    mine = received[0].removeprefix("Received as submission ").rstrip(".")
    assert mine != removed
    shown = page_text(at)
    assert removed not in shown and "submitted before" not in shown and "removed" not in shown
    stored = lb.open_db().query(
        "SELECT id, visibility, content_sha256 FROM submissions ORDER BY created_at"
    )
    assert [r[0] for r in stored] == [removed, mine]
    assert stored[1][1] == "public" and stored[0][2] == stored[1][2]


def test_the_same_predictions_as_a_public_entry_name_that_entry(tiny):  # noqa: F811
    rows = [(it.key, f"{it.reference}?") for it in tiny]
    first = lb.submit(dumps_jsonl(rows).encode(), META, file_name="first.jsonl").id
    at = submit_on_the_page("again.jsonl", dumps_jsonl(rows).encode())
    said = [i.value.replace("\\", "") for i in at.info]
    assert any(f"the same as the entry “{META['name']}” ({first})" in i for i in said), page_text(
        at
    )


def test_the_status_history_on_the_page_is_times_and_states(tiny):  # noqa: F811
    rows = [(it.key, f"{it.reference}#") for it in tiny]
    at = submit_on_the_page("history.jsonl", dumps_jsonl(rows).encode())
    history = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert list(history.columns) == ["at", "status"]
    assert history["status"].tolist() == ["queued"]
    assert "received" not in page_text(at)  # the operator's message, kept for the CLI


def test_a_command_line_submission_stores_the_files_name(tiny, tmp_path, capsys):  # noqa: F811
    from leaderboard.__main__ import main

    deep = tmp_path / "srv" / "lab" / "runs"
    deep.mkdir(parents=True)
    path = deep / "preds.jsonl"
    path.write_text(dumps_jsonl((it.key, it.utterance) for it in tiny), encoding="utf-8")
    assert main(["submit", str(path), "--name", "From the CLI", "--create"]) == 0
    sid = capsys.readouterr().out.split()[0]
    (name,) = lb.open_db().query("SELECT file_name FROM submissions WHERE id = ?", [sid])[0]
    assert name == "preds.jsonl"
    status = json.dumps(lb.status(sid), default=str)
    assert "received preds.jsonl" in status and str(deep) not in status
