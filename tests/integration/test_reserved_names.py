"""An entry cannot be named like one of the board's own rows (leaderboard/names.py): not the
name of a computed baseline or a published result, in the same letters or in lookalikes from
other scripts, full-width forms or other case, and nothing ending in the baselines' mark
"(etclib)"; through the Submit page and ``python -m leaderboard submit``. Other names, Japanese
ones included, are as before.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.tracks.predictions import dumps_jsonl
from tests.conftest import REPO

PUBLISHED = "GPT-4.1 (gpt-4.1-2025-04-14), zero-shot"

REFUSED = [
    "Retrieval baseline (etclib)",
    "Retrieval baseline (\u0435tclib)",  # a Cyrillic е
    "R\u0435tri\u0435val baselin\u0435 (etclib)",
    "My own model (ETCLIB)",
    "Majority label set (etclib)",
    PUBLISHED,
    "GPT-4.1 (gpt-4.1-2025-04-14),  ZERO-SHOT",
    "GPT-4.1 (gpt-4.1-2025-04-14), zer\u043e-sh\u043et",  # Cyrillic о
    "\uff27\uff30\uff34-4.1 (gpt-4.1-2025-04-14), zero-shot",  # full-width GPT
]
ALLOWED = [
    "Retrieval baseline",
    "GPT-4.1 zero-shot, our prompt",
    "相手の気持ちモデル",
    "etclib fan",
]


@pytest.fixture
def board(tiny):  # noqa: F811 - the fixture imported above
    """The tiny board with the paper's published rows; a valid file's bytes per call."""
    lb.seed_baselines(computed=False)
    assert PUBLISHED in {n for (n,) in lb.open_db().query("SELECT name FROM submissions")}
    count = iter(range(100))
    return lambda: dumps_jsonl((it.key, f"{it.reference}{next(count)}") for it in tiny).encode()


def submit_on_the_page(name: str, data: bytes):
    at = AppTest.from_file(str(REPO / "site_pages" / "submit.py"), default_timeout=60).run()
    at.file_uploader(key="submit_file").upload("mine.jsonl", data).run()
    at.text_input(key="submit_name").set_value(name)
    next(b for b in at.button if b.proto.label == "Submit for scoring").click().run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("name", REFUSED)
def test_a_name_that_reads_as_the_boards_own_is_refused_on_the_page(board, name):
    at = submit_on_the_page(name, board())
    assert any("Some details were refused" in e.value for e in at.error), at.error
    problems = next(d.value for d in at.dataframe if "field" in d.value.columns)
    assert problems["field"].tolist() == ["name"]
    assert "the board's own" in problems["problem"].iloc[0]
    assert not any("Received as submission" in s.value for s in at.success)


@pytest.mark.parametrize("name", ALLOWED)
def test_other_names_are_received(board, name):
    at = submit_on_the_page(name, board())
    assert any("Received as submission" in s.value for s in at.success), at.error


def test_the_command_line_refuses_the_name_in_one_line(board, tmp_path, capsys):
    from leaderboard.__main__ import main

    path = tmp_path / "p.jsonl"
    path.write_bytes(board())
    capsys.readouterr()
    assert main(["submit", str(path), "--name", "Copy of the utterance (etclib)"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and 'name: ends in "(etclib)"' in err
