"""A refused file's message says what is wrong once: the unexpected and missing fields named in
one line, identical problems on consecutive lines grouped ("lines 1–1010: ..."), in the page; and
the crafted files of tests/fixtures/predictions.py get their line's message in the page."""

from __future__ import annotations

import json

import pytest

from etclib.core.errors import Problem
from tests.conftest import REPO, needs_corpus
from tests.fixtures.predictions import CASES


def wrong_keys_file(corpus) -> bytes:
    from etclib.data.task import items

    return "\n".join(
        json.dumps(
            {
                "dialogue_id": it.dialogue_id,
                "turn": it.turn,
                "role": it.role,
                "pred": "x",
                "text": "嬉しい",
            },
            ensure_ascii=False,
        )
        for it in items(corpus, "test")
    ).encode()


EXPECTED = (
    'missing field(s): prediction; found instead: "pred", "text" (a record has dialogue_id, '
    "turn, role, prediction; other fields are ignored)."
)


@needs_corpus
def test_wrong_keys_are_named_once_for_every_line(corpus, tmp_path, capsys):
    from etclib.cli import main
    from etclib.core.errors import PredictionsError
    from etclib.tracks.predictions import read_predictions

    data = wrong_keys_file(corpus)
    with pytest.raises(PredictionsError) as err:
        read_predictions(data, corpus=corpus, name="p.jsonl")
    assert err.value.problems == [Problem(1, EXPECTED, 1010)]
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    assert main(["validate", str(path)]) == 1
    assert f"refused, 1 problem; nothing was scored:\n  lines 1–1010: {EXPECTED}" in (
        capsys.readouterr().err
    )


@needs_corpus
def test_submit_page_shows_the_grouped_problem_in_the_page(corpus):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("site_pages/submit.py").run()
    at.file_uploader(key="submit_file").upload("wrong.jsonl", wrong_keys_file(corpus)).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("was refused: 1 problem" in e for e in errors), errors  # in the page itself
    # the problem itself in the message's words (a table cell cuts a long one)
    assert any(f"First: lines 1–1010: {EXPECTED}" in e for e in errors), errors
    table = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    assert table.to_dict("records") == [{"line": "1–1010", "problem": EXPECTED}]


#: Crafted files of each kind (integers, nesting, surrogates) sent through the Submit page.
ON_THE_PAGE = [
    "csv-id-double-minus",
    "json-id-5000-digits",
    "json-nested-100000-deep",
    "json-lone-surrogate",
]


@pytest.mark.parametrize("case", [c for c in CASES if c.id in ON_THE_PAGE], ids=ON_THE_PAGE)
def test_submit_page_shows_line_messages(keys, case):
    """Through the Submit page: the problems table, never the generic error page."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("site_pages/submit.py").run()
    at.file_uploader(key="submit_file").upload(case.name, case.make(keys)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("was refused" in e.value for e in at.error)
    table = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    assert table["line"].iloc[0] == str(case.line) and case.needle in table["problem"].iloc[0]
