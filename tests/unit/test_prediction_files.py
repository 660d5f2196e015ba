"""Hostile inputs (issue #12): crafted predictions files, display names, upload size, duplicates.

Every crafted file goes through each way in: the library reader, ``etclib validate``,
``etclib score``, ``python -m leaderboard submit`` and the site's upload check (and a few through
the Submit page itself). A refusal is a line-numbered message, never a traceback; an accepted file
keeps exactly the text that was written. Expected predictions are the literal texts the tests
wrote, never the reader's own output.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import sys
import tomllib
import unicodedata
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etclib.corpus import load_corpus
from etclib.errors import PredictionsError
from etclib.predictions import FIELDS, MAX_FILE_BYTES, dumps_jsonl, read_predictions
from etclib.task import items as split_items
from tests.conftest import REPO

#: The tiny corpus's test items in order; item 2 is on line 3 of a JSONL file, line 4 of a CSV.
KEY3 = (7, 2, "speaker")


def base_records(keys) -> list[dict]:
    return [
        {"dialogue_id": d, "turn": t, "role": r, "prediction": f"予測{i}です"}
        for i, (d, t, r) in enumerate(keys)
    ]


def jsonl_lines(records) -> list[str]:
    return [json.dumps(r, ensure_ascii=False) for r in records]


def line3(
    prediction: str = '"x"', extra: str = "", dialogue_id: str = "7", role: str = '"speaker"'
) -> str:
    """Line 3 (item (7, 2, speaker)) written by hand: the values are raw JSON text."""
    return (
        f'{{"dialogue_id": {dialogue_id}, "turn": 2, "role": {role}, '
        f'"prediction": {prediction}{extra}}}'
    )


def jsonl_with(keys, line: str, at: int = 2, eol: str = "\n") -> bytes:
    lines = jsonl_lines(base_records(keys))
    lines[at] = line
    return (eol.join(lines) + eol).encode("utf-8", "surrogatepass")


def csv_text(records, eol: str = "\n", header=FIELDS) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator=eol)
    w.writerow(header)
    for r in records:
        w.writerow([r["dialogue_id"], r["turn"], r["role"], r["prediction"]])
    return out.getvalue()


def csv_with(keys, column: str, value: str, at: int = 2, eol: str = "\n", header=FIELDS) -> bytes:
    records = base_records(keys)
    records[at][column] = value
    return csv_text(records, eol, header).encode("utf-8")


@dataclass
class Case:
    """One crafted file: refused at ``line`` with ``needle`` in its message, or accepted."""

    id: str
    name: str
    make: object  # keys -> bytes
    line: int | None = None  # None: accepted
    needle: str = ""
    expect: dict = field(default_factory=dict)  # accepted: key -> prediction as written

    @property
    def refused(self) -> bool:
        return self.line is not None


BIG = "9" * 5000


DEEP = "[" * 100_000 + "]" * 100_000


CASES = [
    # F1: integers
    Case(
        "json-id-5000-digits",
        "p.jsonl",
        lambda k: jsonl_with(k, line3(dialogue_id=BIG)),
        3,
        "dialogue_id",
    ),
    Case(
        "json-5000-digits-in-extra-field",
        "p.jsonl",
        lambda k: jsonl_with(k, line3(extra=f', "score": {BIG}')),
        expect={KEY3: "x"},
    ),
    Case(
        "csv-id-double-minus",
        "p.csv",
        lambda k: csv_with(k, "dialogue_id", "--1"),
        4,
        "dialogue_id",
    ),
    Case(
        "csv-id-superscript-two",
        "p.csv",
        lambda k: csv_with(k, "dialogue_id", "²"),
        4,
        "dialogue_id",
    ),
    Case("csv-turn-5000-digits", "p.csv", lambda k: csv_with(k, "turn", BIG), 4, "turn"),
    Case(
        "csv-id-with-spaces",
        "p.csv",
        lambda k: csv_with(k, "dialogue_id", " 7 "),
        expect={KEY3: "予測2です"},
    ),
    # F2: nesting
    Case("json-nested-100000-deep", "p.jsonl", lambda k: jsonl_with(k, DEEP), 3, "nested"),
    Case(
        "json-nested-100000-deep-in-extra-field",
        "p.jsonl",
        lambda k: jsonl_with(k, line3(extra=f', "meta": {DEEP}')),
        3,
        "nested",
    ),
    Case(
        "json-objects-nested-deep-unclosed",
        "p.jsonl",
        lambda k: jsonl_with(k, '{"a": ' * 100_000),
        3,
        "nested",
    ),
    Case(
        "json-brackets-inside-a-prediction-are-text",
        "p.jsonl",
        lambda k: jsonl_with(k, line3(json.dumps("[" * 1000 + "{" * 900 + '\\"]'))),
        expect={KEY3: "[" * 1000 + "{" * 900 + '\\"]'},
    ),
    # F3: surrogates, NUL, control characters
    Case(
        "json-lone-surrogate",
        "p.jsonl",
        lambda k: jsonl_with(k, line3('"a\\ud800b"')),
        3,
        "surrogate",
    ),
    Case(
        "json-lone-surrogate-in-role",
        "p.jsonl",
        lambda k: jsonl_with(k, line3(role='"\\udc00"')),
        3,
        "role",
    ),
    Case(
        "json-escaped-surrogate-pair-is-one-character",
        "p.jsonl",
        lambda k: jsonl_with(k, line3('"\\ud83d\\ude00"')),
        expect={KEY3: "\U0001f600"},
    ),
    Case("json-escaped-nul", "p.jsonl", lambda k: jsonl_with(k, line3('"a\\u0000b"')), 3, "NUL"),
    Case("json-raw-nul", "p.jsonl", lambda k: jsonl_with(k, line3('"a\x00b"')), 3, "NUL"),
    Case(
        "json-raw-control-character",
        "p.jsonl",
        lambda k: jsonl_with(k, line3('"a\x01b"')),
        3,
        "control character",
    ),
    Case("csv-nul-in-prediction", "p.csv", lambda k: csv_with(k, "prediction", "a\x00b"), 4, "NUL"),
    # F3: line separators other than \n are text
    *[
        Case(
            f"json-raw-U+{ord(ch):04X}-in-prediction",
            "p.jsonl",
            lambda k, ch=ch: jsonl_with(k, line3(json.dumps(f"a{ch}b", ensure_ascii=False))),
            expect={KEY3: f"a{ch}b"},
        )
        for ch in "\u2028\u2029"
    ],
    *[
        Case(
            f"csv-U+{ord(ch):04X}-in-prediction",
            "p.csv",
            lambda k, ch=ch: csv_with(k, "prediction", f"a{ch}b"),
            expect={KEY3: f"a{ch}b"},
        )
        for ch in "\u2028\u2029\t"
    ],
    # ... but control characters (NEL, ANSI escapes, vertical tab...) and direction overrides
    # are not (docs/leaderboard.md)
    *[
        Case(
            f"{fmt}-U+{ord(ch):04X}-in-prediction",
            f"p.{fmt}",
            lambda k, ch=ch, fmt=fmt: (
                jsonl_with(k, line3(json.dumps(f"a{ch}b", ensure_ascii=False)))
                if fmt == "jsonl"
                else csv_with(k, "prediction", f"a{ch}b")
            ),
            3 if fmt == "jsonl" else 4,
            f"(U+{ord(ch):04X}) at character 2",
        )
        for fmt in ("jsonl", "csv")
        for ch in "\u0085\x0b\x0c\x1b\x1c\x7f\u202e\u2066"
    ],
    Case(
        "json-line-numbers-after-U+2028-stay-true",
        "p.jsonl",
        lambda k: jsonl_with(k, line3('"a\u2028b\u2029c"')).replace(
            jsonl_lines(base_records(k))[4].encode(), b"{oops"
        ),
        5,
        "invalid JSON",
    ),
    Case(
        "json-cr-as-whitespace-inside-a-record",
        "p.jsonl",
        lambda k: jsonl_with(k, line3().replace(', "turn"', ',\r "turn"')),
        expect={KEY3: "x"},
    ),
    Case("json-crlf", "p.jsonl", lambda k: jsonl_with(k, line3(), eol="\r\n"), expect={KEY3: "x"}),
    Case(
        "json-bom-crlf",
        "p.jsonl",
        lambda k: codecs.BOM_UTF8 + jsonl_with(k, line3(), eol="\r\n"),
        expect={KEY3: "x"},
    ),
    Case(
        "csv-crlf",
        "p.csv",
        lambda k: csv_with(k, "prediction", "x", eol="\r\n"),
        expect={KEY3: "x"},
    ),
    Case(
        "csv-quoted-newline-keeps-later-line-numbers",
        "p.csv",
        lambda k: csv_with(k, "prediction", "a\nb\r\nc").replace(
            b"\n7,3,speaker", b"\nseven,3,speaker"
        ),
        8,  # the quoted record spans lines 4-6
        "dialogue_id",
    ),
    # duplicate keys
    Case(
        "json-duplicate-key",
        "p.jsonl",
        lambda k: jsonl_with(k, line3('"a", "prediction": "b"')),
        3,
        '"prediction"',
    ),
    Case(
        "json-duplicate-key-in-extra-object",
        "p.jsonl",
        lambda k: jsonl_with(k, line3(extra=', "meta": {"seed": 1, "seed": 2}')),
        3,
        '"seed"',
    ),
    Case(
        "csv-duplicate-column",
        "p.csv",
        lambda k: (
            csv_text(base_records(k), header=(*FIELDS, "prediction"))
            .replace("です\n", "です,y\n")
            .encode()
        ),
        1,
        '"prediction"',
    ),
]


IDS = [c.id for c in CASES]


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    """The tiny corpus as ETC_DATA_DIR; its test keys in order."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    return [it.key for it in split_items(load_corpus(tiny_corpus), "test")]


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
def test_library_reader(tiny, case):
    data = case.make(tiny)
    if case.refused:
        with pytest.raises(PredictionsError) as err:
            read_predictions(data, corpus=load_corpus(), name=case.name)
        first = err.value.problems[0]
        assert (first.line, case.needle in first.message) == (case.line, True), str(err.value)
        check_message(str(err.value))
    else:
        preds = read_predictions(data, corpus=load_corpus(), name=case.name)
        assert preds.by_key == expected_predictions(tiny, case)


def _cli(argv, capsys):
    from etclib.cli import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cli_validate_and_score(tiny, tmp_path, capsys, case):
    path = tmp_path / case.name
    path.write_bytes(case.make(tiny))
    for command in ("validate", "score"):
        code, out, err = _cli([command, str(path)], capsys)
        if case.refused:
            assert code == 1, (command, out, err)
            assert f"line {case.line}: " in err and case.needle in err, err
            check_message(err)
        else:
            assert code == 0, (command, err)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_leaderboard_submit_command(tiny, tmp_path, capsys, case):
    from leaderboard.__main__ import main

    path = tmp_path / case.name
    path.write_bytes(case.make(tiny))
    code = main(["submit", str(path), "--name", "Hostile", "--create"])
    out = capsys.readouterr()
    if case.refused:
        assert code == 1, out
        assert f"line {case.line}: " in out.err and case.needle in out.err, out.err
        check_message(out.err)
    else:
        assert code == 0, out.err


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_site_upload_check(tiny, case):
    from views.board import validate_upload

    check = validate_upload(case.make(tiny), case.name)
    if case.refused:
        assert not check.ok
        assert check.problems[0].line == case.line and case.needle in check.problems[0].message
        for p in check.problems:
            check_message(str(p))
    else:
        assert check.ok and check.items == 20, check.problems


def test_site_upload_check_never_raises(tiny, monkeypatch):
    """A bug in the reader is a refusal with a message on the page, not Streamlit's error page."""
    import etclib.predictions
    from views.board import validate_upload

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(etclib.predictions, "read_predictions", broken)
    check = validate_upload(b"{}\n", "p.jsonl")
    assert not check.ok and check.problems and "a bug" not in check.problems[0].message


FINDINGS = [
    "csv-id-double-minus",
    "json-id-5000-digits",
    "json-nested-100000-deep",
    "json-lone-surrogate",
]


@pytest.mark.parametrize("case", [c for c in CASES if c.id in FINDINGS], ids=FINDINGS)
def test_submit_page_shows_line_messages(tiny, case):
    """F1-F3 through the Submit page: the problems table, never the generic error page."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("site_pages/submit.py").run()
    at.file_uploader(key="submit_file").upload(case.name, case.make(tiny)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("was refused" in e.value for e in at.error)
    table = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    assert table["line"].iloc[0] == str(case.line) and case.needle in table["problem"].iloc[0]


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
    from etclib.predictions import dumps_csv

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


def test_the_same_predictions_saved_differently_are_one_submission(tiny):
    import leaderboard as lb

    records = base_records(tiny)
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


CF = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]


@pytest.mark.parametrize(
    "name",
    [
        "\u200b",
        "\u3164",
        " \u3164\u2800 ",
        "\u115f\u1160",
        "\u034f",
        "\ufe0f\ufe0f",
        "\u3000",
        "\u0301",
    ],
    ids=[
        "ZWSP",
        "hangul-filler",
        "filler-braille-blank",
        "choseong-filler",
        "CGJ",
        "VS16",
        "ideographic-space",
        "combining-acute",
    ],
)
def test_invisible_only_names_are_refused(name):
    from leaderboard.errors import MetadataError
    from leaderboard.metadata import Metadata

    with pytest.raises(MetadataError) as err:
        Metadata.from_dict({"name": name})
    assert "name" in err.value.fields
    with pytest.raises(MetadataError) as err:
        Metadata.from_dict({"name": "Fine", "team": name})
    assert "team" in err.value.fields


def test_every_format_character_and_nul_is_refused_in_names():
    from leaderboard.errors import MetadataError
    from leaderboard.metadata import Metadata

    assert "\u061c" in CF and len(CF) > 150
    for ch in [*CF, "\x00"]:
        for fld in ("name", "team", "description"):
            with pytest.raises(MetadataError) as err:
                Metadata.from_dict({"name": "Fine", fld: f"ab{ch}cd"})
            assert fld in err.value.fields, (fld, f"U+{ord(ch):04X}")
            assert f"U+{ord(ch):04X}" in err.value.fields[fld]


@pytest.mark.parametrize(
    "name",
    ["モデルA", "GPT-4o mini", "🤖 bot", "Ｘ", "e\u0301tude", "Visit https://phish.example/verify"],
)
def test_visible_names_are_kept_exactly(name):
    from leaderboard.metadata import Metadata

    assert Metadata.from_dict({"name": name}).name == name


#: GitHub Markdown's literal autolinks, as Streamlit's renderer (remark-gfm) finds them in the text
#: a reader sees (backslash escapes already resolved): URLs, www. hosts, e-mail addresses.
AUTOLINK = re.compile(r"(?i)(https?://|www(?=\.))[-.\w]+|[-.\w+]+@[-\w]+(\.[-\w]+)+")


def rendered_text(markdown: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


@pytest.mark.parametrize(
    "name",
    [
        "Visit https://phish.example/verify",
        "HTTP://PHISH.EXAMPLE",
        "see www.phish.example now",
        "mail me: a.b+c@phish.example",
        "[x](https://phish.example)",
        "<https://phish.example>",
    ],
)
def test_names_never_become_links(name):
    from views.text import escape_markdown

    assert AUTOLINK.search(rendered_text(name))  # the check would see a link in the raw name
    shown = rendered_text(escape_markdown(name))
    assert not AUTOLINK.search(shown), shown
    assert shown.replace("\u2060", "") == name  # and it reads exactly as typed


def padded(keys, size: int) -> bytes:
    """A valid JSONL file of exactly ``size`` bytes (spaces after the last record)."""
    data = ("\n".join(jsonl_lines(base_records(keys))) + "\n").encode()
    return data + b" " * (size - len(data))


def size_message() -> str:
    return (
        f"the file is larger than the limit of {MAX_FILE_BYTES // 10**6} MB "
        f"({MAX_FILE_BYTES:,} bytes); remove extra fields or check that it is the right file."
    )


def test_upload_limit_is_the_same_everywhere(tiny, tmp_path, capsys):
    import leaderboard as lb
    from leaderboard.__main__ import main as lb_main
    from views.board import validate_upload

    ok, big = padded(tiny, MAX_FILE_BYTES), padded(tiny, MAX_FILE_BYTES + 1)
    assert len(ok) == MAX_FILE_BYTES and len(big) == MAX_FILE_BYTES + 1
    message = size_message()
    # library
    assert len(read_predictions(ok, corpus=load_corpus(), name="p.jsonl")) == 20
    with pytest.raises(PredictionsError) as err:
        read_predictions(big, corpus=load_corpus(), name="p.jsonl")
    assert [p.message for p in err.value.problems] == [message]
    # CLI
    (tmp_path / "ok.jsonl").write_bytes(ok)
    (tmp_path / "big.jsonl").write_bytes(big)
    assert _cli(["validate", str(tmp_path / "ok.jsonl")], capsys)[0] == 0
    code, _, err_text = _cli(["validate", str(tmp_path / "big.jsonl")], capsys)
    assert code == 1 and message in err_text
    assert lb_main(["submit", str(tmp_path / "big.jsonl"), "--name", "Big", "--create"]) == 1
    assert message in capsys.readouterr().err
    # site: the app's own check, the same message
    assert validate_upload(ok, "ok.jsonl").ok
    check = validate_upload(big, "big.jsonl")
    assert [p.message for p in check.problems] == [message]
    with pytest.raises(lb.SubmissionError) as err:
        lb.submit(big, {"name": "Big"}, file_name="big.jsonl")
    assert [p.message for p in err.value.problems] == [message]
    assert lb.submit(ok, {"name": "Exactly the limit"}, file_name="ok.jsonl").id


def test_streamlit_says_the_same_limit():
    """Streamlit's upload box prints ``server.maxUploadSize`` MB ("10MB per file"), counted as
    10^6 bytes by the browser: the limit itself, so that the page says one figure. The server
    (2^20 bytes per MB) lets every file up to the limit through."""
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    mb = config["server"]["maxUploadSize"]
    assert isinstance(mb, int) and mb * 10**6 == MAX_FILE_BYTES
    assert mb * 2**20 >= MAX_FILE_BYTES


def test_docs_and_page_state_the_limit_as_one_figure():
    figure = f"{MAX_FILE_BYTES // 10**6} MB"
    assert MAX_FILE_BYTES % 10**6 == 0
    for doc in ("README.md", "docs/site.md", "docs/leaderboard.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        assert figure in text, doc
        assert "MiB" not in text and "11 MB" not in text and "11MB" not in text, doc
    page = (REPO / "site_pages" / "submit.py").read_text(encoding="utf-8")
    assert "MAX_FILE_BYTES // 10**6} MB" in page and "MiB" not in page
