"""Which track a file is for, read from its first record whole: however long that record is and
however many blank lines come before it, on the Submit page and in `etclib validate`; a file
that mixes two tracks' fields is refused naming the way to the other track that each place
has (the page's template buttons, the CLI's --track)."""

from __future__ import annotations

import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from etclib.cli import main
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from tests.conftest import REPO
from views import upload_check


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    """The tiny corpus as ETC_DATA_DIR; its test items."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    st.cache_data.clear()
    upload_check.clear()  # a check cached by another test would hide this one's
    yield split_items(load_corpus(tiny_corpus), "test")
    upload_check.clear()


def _labels(items, first: dict | None = None, before: str = "", mix: bool = False) -> bytes:
    """A categories file: ``first`` merged into its first record, ``before`` ahead of it, and
    with ``mix`` a transcription's field instead of the second record's labels."""
    records = [
        {"dialogue_id": it.dialogue_id, "turn": it.turn, "role": it.role, "labels": list(it.label)}
        for it in items
    ]
    records[0].update(first or {})
    if mix:
        records[1]["prediction"] = records[1].pop("labels")[0]
    return (before + "\n".join(json.dumps(r) for r in records) + "\n").encode("utf-8")


def _submit_page(name: str, data: bytes) -> AppTest:
    at = AppTest.from_file(str(REPO / "site_pages" / "submit.py"), default_timeout=60).run()
    at.file_uploader(key="submit_file").upload(name, data).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize(
    ("first", "before"),
    [({"notes": "x" * 70_000}, ""), (None, "\n" * 70_000), (None, " \r\n" * 30_000)],
    ids=["70-kB-extra-field", "70000-blank-lines", "blank-crlf-lines"],
)
def test_a_long_first_record_or_blank_lines_keep_the_track(tiny, tmp_path, capsys, first, before):
    data = _labels(tiny, first, before)
    at = _submit_page("labels.jsonl", data)
    (accepted,) = [s.value for s in at.success]
    assert "categories track" in accepted and not at.error
    path = tmp_path / "labels.jsonl"
    path.write_bytes(data)
    assert main(["validate", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["track"] == "erc"


def test_a_mixed_file_names_each_places_own_way_to_the_other_track(tiny, tmp_path, capsys):
    data = _labels(tiny, mix=True)
    at = _submit_page("mixed.jsonl", data)
    table = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    problem = table.set_index("line").loc["2", "problem"]
    assert (
        'transcription track: was it made for that track (its template: the "Template"' in problem
    )
    assert "--track" not in " ".join(table["problem"])
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(data)
    assert main(["validate", str(path)]) == 1
    assert "line 2: missing field(s): labels; " in (err := capsys.readouterr().err)
    assert "was it made for --track transcription?" in err
