"""Predictions files, well-formed and crafted, through every way in: the library reader,
``etclib validate``, ``etclib score``, ``python -m leaderboard submit`` and the site's upload
check (the Submit page itself: tests/integration/test_refusals.py). A refusal is a line-numbered message, never a traceback; an accepted file
keeps exactly the text that was written; the same predictions saved differently are one
submission. Expected predictions are the literal texts the tests wrote (tests/fixtures/
predictions.py), never the reader's own output.
"""

from __future__ import annotations

import codecs
import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leaderboard as lb
from etclib.core.errors import PredictionsError
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import FIELDS, dumps_jsonl, read_predictions
from tests.fixtures.predictions import CASES, IDS, Case, base_records, csv_text, jsonl_lines
from tests.fixtures.predictions import ENTRY_META as META


@pytest.fixture
def keys(tiny_corpus_shared, monkeypatch):
    """The tiny corpus's test keys in order, the corpus as ETC_DATA_DIR: the module's tests
    only read it."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus_shared))
    return [it.key for it in split_items(load_corpus(tiny_corpus_shared), "test")]


def expected_predictions(keys, case: Case) -> dict:
    out = {k: r["prediction"] for k, r in zip(keys, base_records(keys))}
    out.update(case.expect)
    return out


def check_message(text: str) -> None:
    """A refusal a person can read: no traceback, printable, no 'at at', not a screenful."""
    assert "Traceback" not in text
    assert " at at " not in text
    text.encode("utf-8")  # no lone surrogate reaches a terminal
    assert all(len(line) < 400 for line in text.splitlines()), text[:400]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_library_reader(keys, case):
    data = case.make(keys)
    if case.refused:
        with pytest.raises(PredictionsError) as err:
            read_predictions(data, corpus=load_corpus(), name=case.name)
        first = err.value.problems[0]
        assert (first.line, case.needle in first.message) == (case.line, True), str(err.value)
        check_message(str(err.value))
    else:
        preds = read_predictions(data, corpus=load_corpus(), name=case.name)
        assert preds.by_key == expected_predictions(keys, case)


def _cli(argv, capsys):
    from etclib.cli import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cli_validate_and_score(keys, tmp_path, capsys, case):
    path = tmp_path / case.name
    path.write_bytes(case.make(keys))
    for command in ("validate", "score"):
        code, out, err = _cli([command, str(path)], capsys)
        if case.refused:
            assert code == 1, (command, out, err)
            assert f"line {case.line}: " in err and case.needle in err, err
            check_message(err)
        else:
            assert code == 0, (command, err)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_leaderboard_submit_command(keys, tmp_path, capsys, case):
    from leaderboard.__main__ import main

    path = tmp_path / case.name
    path.write_bytes(case.make(keys))
    code = main(["submit", str(path), "--name", "Hostile", "--create"])
    out = capsys.readouterr()
    if case.refused:
        assert code == 1, out
        assert f"line {case.line}: " in out.err and case.needle in out.err, out.err
        check_message(out.err)
    else:
        assert code == 0, out.err


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_site_upload_check(keys, case):
    from views.board import validate_upload

    check = validate_upload(case.make(keys), case.name)
    if case.refused:
        assert not check.ok
        assert check.problems[0].line == case.line and case.needle in check.problems[0].message
        for p in check.problems:
            check_message(str(p))
    else:
        assert check.ok and check.items == 20, check.problems


def test_site_upload_check_never_raises(keys, monkeypatch):
    """A bug in the reader is a refusal with a message on the page, not Streamlit's error page."""
    import etclib.tracks.predictions
    from views.board import validate_upload

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(etclib.tracks.predictions, "read_predictions", broken)
    check = validate_upload(b"{}\n", "p.jsonl")
    assert not check.ok and check.problems and "a bug" not in check.problems[0].message


#: Texts a prediction may hold: anything but lone surrogates, control characters other than
#: tab and line breaks, and direction overrides, with the awkward ones often.
PREDICTION_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(
            exclude_categories=("Cs", "Cc"),
            exclude_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
        ),
        st.sampled_from(["\u2028", "\u2029", "\t", "\r", "\n", '"', ",", "\\", "{", "[", " "]),
    ),
    max_size=30,
)


def quote_all_csv(rows) -> str:
    """CSV as spreadsheets write it: every field quoted, "\n" line ends."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    w.writerow(FIELDS)
    w.writerows([*k, p] for k, p in rows)
    return out.getvalue()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(PREDICTION_TEXT, min_size=20, max_size=20))
def test_every_file_etclib_writes_etclib_reads(tiny_corpus, texts):
    from etclib.tracks.predictions import dumps_csv

    corpus = load_corpus(tiny_corpus)
    keys = [it.key for it in split_items(corpus, "test")]
    rows = list(zip(keys, texts))
    written = {
        "p.jsonl": dumps_jsonl(rows),
        "p.csv": dumps_csv(rows),
        "quoted.csv": quote_all_csv(rows),
    }
    for name, text in written.items():
        preds = read_predictions(text.encode("utf-8"), corpus=corpus, name=name)
        assert preds.by_key == dict(rows), name


def test_the_same_predictions_saved_differently_are_one_submission(keys):
    import leaderboard as lb

    records = base_records(keys)
    lines = jsonl_lines(records)
    jsonl = ("\n".join(lines) + "\n").encode()
    variants = {
        "p.jsonl": jsonl,
        "bom.jsonl": codecs.BOM_UTF8 + jsonl,
        "crlf.jsonl": jsonl.replace(b"\n", b"\r\n"),
        "p.csv": csv_text(records).encode(),
        "crlf.csv": csv_text(records, "\r\n").encode(),
        "extra.jsonl": "".join(
            json.dumps({**r, "model": "m", "seed": i}, ensure_ascii=False) + "\n"
            for i, r in enumerate(records)
        ).encode(),
        "reordered.jsonl": ("\n".join(reversed(lines)) + "\n").encode(),
        "spaced.jsonl": "\n\n".join(
            json.dumps(r, indent=None, separators=(" , ", " : ")) for r in records
        ).encode(),
    }
    meta = {"name": "Same model", "contact": "me@example.org"}
    receipts = {name: lb.submit(data, meta, file_name=name) for name, data in variants.items()}
    first = receipts["p.jsonl"]
    assert not first.duplicate
    for name, r in receipts.items():
        assert r.id == first.id, name
        assert r.duplicate == (name != "p.jsonl"), name
    other = lb.submit(
        jsonl.replace("予測0です".encode(), "予測0だ".encode()), meta, file_name="o.jsonl"
    )
    assert not other.duplicate and other.id != first.id
    from leaderboard.db import open_db

    assert len(open_db().query("SELECT id FROM submissions")) == 2


def erc_record(it, extra: dict | None = None) -> dict:
    return {"dialogue_id": it.key[0], "turn": it.key[1], "role": it.key[2], "labels": ["joy"]} | (
        extra or {}
    )


def test_an_erc_file_with_a_stray_prediction_field_is_refused_naming_both(tiny):
    import json

    lines = [
        erc_record(it, {"prediction": "嬉しい"} if n == 3 else None) for n, it in enumerate(tiny)
    ]
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines).encode("utf-8")
    with pytest.raises(lb.SubmissionError) as info:
        lb.submit(data, META, file_name="erc.jsonl")
    problems = [str(p) for p in info.value.problems]
    assert len(problems) == 1 and problems[0].startswith("line 4: this record has both")
    assert "'prediction' (the transcription track)" in problems[0]
    assert "'labels' (the erc track)" in problems[0]
    # every record with both: the same, on each line (not silently scored as transcriptions)
    both = [erc_record(it, {"prediction": "x"}) for it in tiny]
    data = "".join(json.dumps(r) + "\n" for r in both).encode("utf-8")
    with pytest.raises(lb.SubmissionError) as info:
        lb.submit(data, META, file_name="erc.jsonl")
    (problem,) = info.value.problems  # one problem, naming every line (identical ones grouped)
    assert (problem.line, problem.until) == (1, len(tiny)) and "has both" in str(problem)


def test_a_csv_with_both_track_columns_is_refused(tiny):
    rows = ["dialogue_id,turn,role,prediction,labels"]
    rows += [f"{it.key[0]},{it.key[1]},{it.key[2]},x,joy" for it in tiny]
    with pytest.raises(lb.SubmissionError, match="has both 'prediction'"):
        lb.submit("\r\n".join(rows).encode(), META, file_name="both.csv")


@pytest.mark.parametrize(
    ("encoding", "called"),
    [("utf-32", "UTF-32"), ("utf-32-be", "UTF-32"), ("utf-16", "UTF-16"), ("utf-16-be", "UTF-16")],
)
def test_a_utf32_file_is_called_utf32(tiny, encoding, called):
    from views.board import validate_upload

    text = dumps_jsonl((it.key, it.reference) for it in tiny)
    bom = {"utf-32-be": "\ufeff", "utf-16-be": "\ufeff"}.get(encoding, "")
    check = validate_upload((bom + text).encode(encoding), "p.jsonl")
    assert not check.ok
    assert [str(p) for p in check.problems] == [f"line 1: the file is {called}; save it as UTF-8."]


def test_a_cr_only_file_gets_a_hint_about_line_ends(tiny):
    from etclib.tracks.predictions import CR_ONLY
    from views.board import validate_upload

    text = dumps_jsonl((it.key, it.reference) for it in tiny).replace("\n", "\r")
    check = validate_upload(text.encode("utf-8"), "mac.jsonl")
    assert not check.ok and check.problems[0].message == CR_ONLY
    assert "LF or CRLF" in check.message


def test_score_per_item_file_has_one_line_per_record_for_splitlines(tiny, tmp_path, capsys):
    import json

    from etclib.cli import main

    odd = ["a\u2028b", "c\u2029d", "e\u2029\u2028f", "g\r\nh"]
    preds = tmp_path / "p.jsonl"
    preds.write_text(dumps_jsonl((it.key, odd[n % 4]) for n, it in enumerate(tiny)), "utf-8")
    assert len(preds.read_text(encoding="utf-8").splitlines()) == len(tiny)  # the writer too
    out = tmp_path / "items.jsonl"
    code = main(["score", str(preds), "--metrics", "bleu", "--per-item", str(out)])
    capsys.readouterr()
    assert code == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(tiny)
    assert [json.loads(line)["prediction"] for line in lines][:4] == odd
