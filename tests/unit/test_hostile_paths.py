"""The third hostile round's findings (issue #23, item 4), each through the path a visitor or an
operator uses: an upload then the CSV export read back with the csv module, a forwarded address
through a proxy, limits that survive a new session, the refusal cache's bound, DuckDB's
extension loading, a damaged board, and the low findings (stray fields, encodings, file names,
JSONL line separators, a full disk, the metrics endpoint)."""

from __future__ import annotations

import pytest

import leaderboard as lb
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items

META = {"name": "Hostile", "team": "T", "contact": "h@example.org", "description": "d"}


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    """The tiny corpus (20 test items) as ETC_DATA_DIR, on the default (DuckDB) board."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    return split_items(load_corpus(tiny_corpus), "test")


# Streamlit listens on "::": a proxy on the same host that connects to 127.0.0.1 arrives as
# ::ffff:127.0.0.1, which uvicorn does not rewrite (not in its 127.0.0.1,::1), so the site sees
# the mapped peer and the proxy's header. (reported, X-Forwarded-For, ETC_TRUSTED_PROXIES) -> key
MAPPED_CASES = [
    ("::ffff:127.0.0.1", ["198.51.100.9"], "127.0.0.1, ::1", "198.51.100.9"),
    ("::ffff:127.0.0.1", ["198.51.100.10"], "127.0.0.1, ::1", "198.51.100.10"),
    ("::ffff:127.0.0.1", ["6.6.6.6, 198.51.100.9"], "127.0.0.1", "198.51.100.9"),
    ("::ffff:10.0.0.2", ["::ffff:198.51.100.9"], "10.0.0.0/8", "198.51.100.9"),
    # a mapped proxy the operator does not trust: the header counts for nothing
    ("::ffff:127.0.0.1", ["198.51.100.9"], "", "same-host"),
    ("::ffff:127.0.0.1", ["evil-token-1"], "", "same-host"),
    # a direct visitor over IPv4 and over the mapped form share one key
    ("::ffff:203.0.113.5", [], "", "203.0.113.5"),
    ("203.0.113.5", [], "", "203.0.113.5"),
]


@pytest.mark.parametrize(("reported", "forwarded", "trusted", "expected"), MAPPED_CASES)
def test_mapped_proxy_address_is_trusted_like_its_ipv4_form(
    monkeypatch, reported, forwarded, trusted, expected
):
    from leaderboard import settings
    from views.identity import network_address, server_trusted

    monkeypatch.setenv("ETC_TRUSTED_PROXIES", trusted)
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)  # uvicorn's default: 127.0.0.1,::1
    got = network_address(reported, forwarded, settings.trusted_proxies(), server_trusted())
    assert got == expected


def test_the_model_budget_setting_is_checked(monkeypatch):
    from etclib.errors import ConfigError
    from views import chat

    assert [b[:2] for b in chat.model_budget()] == [(60, 60.0), (1000, 86400.0)]
    monkeypatch.setenv("ETC_CHAT_MODEL_PER_DAY", "lots")
    with pytest.raises(ConfigError, match="ETC_CHAT_MODEL_PER_DAY"):
        chat.model_budget()


def unknown_items(n: int, start: int = 0) -> bytes:
    """A JSONL file of ``n`` well-formed records for items that do not exist: every line is a
    problem of the coverage check (the parser caps its own problems, this check did not)."""
    rows = (
        f'{{"dialogue_id": {900000 + start + i}, "turn": 1, "role": "speaker", "prediction": ""}}\n'
        for i in range(n)
    )
    return "".join(rows).encode("utf-8")


def test_the_coverage_check_lists_at_most_the_cap_and_counts_the_rest(tiny_corpus):
    from etclib.corpus import load_corpus
    from etclib.errors import PredictionsError
    from etclib.predictions import MAX_PROBLEMS, check_coverage

    corpus = load_corpus(tiny_corpus)
    rows = [(n + 1, (900000 + n, 1, "speaker"), "") for n in range(160_000)]
    with pytest.raises(PredictionsError) as info:
        check_coverage(rows, "test", corpus, "crafted.jsonl")
    exc = info.value
    assert len(exc.problems) <= MAX_PROBLEMS
    assert exc.total == 160_001  # 160,000 unknown items and the missing test items
    assert exc.problems[0].line == 1 and "unknown item" in exc.problems[0].message
    assert any("have no prediction" in p.message for p in exc.problems)  # the whole-file one
    listed = len(exc.problems) - 1
    assert exc.problems[-1].message.startswith(f"... and {160_001 - listed:,} more problems")
    assert "refused, 160001 problems" in str(exc)


def test_cached_checks_expire(tiny, monkeypatch):
    from views import upload_check

    upload_check.clear()
    clock = [1000.0]
    monkeypatch.setattr(upload_check.time, "monotonic", lambda: clock[0])
    upload_check.checked(unknown_items(10), "a.jsonl")
    assert upload_check.entries() == 1
    clock[0] += upload_check.TTL_S + 1
    upload_check.checked(unknown_items(10, 50), "b.jsonl")  # any check drops the expired ones
    assert upload_check.entries() == 1
    upload_check.clear()


SQLITE_HEADER = b"SQLite format 3\x00" + b"\x00" * 4080


def no_extension_dirs(home) -> bool:
    return not any(p.name == "extensions" for p in home.rglob("*"))


def test_a_foreign_file_as_the_board_is_named_and_nothing_is_installed(tmp_path, monkeypatch):
    """The board is SQLite; a SQLite file that is no database, or a Parquet file, is named as
    such, and nothing (no DuckDB extension) is installed on the way."""
    from leaderboard.db import open_db

    home = tmp_path / "home"  # HOME (tests/conftest.py): where DuckDB keeps its extensions
    parquet = tmp_path / "board.parquet"
    parquet.write_bytes(b"PAR1" + b"\x00" * 100)
    with pytest.raises(lb.DatabaseCorruptError) as info:
        open_db(parquet, create=False)
    assert "the file is a Parquet file" in str(info.value)
    assert parquet.read_bytes() == b"PAR1" + b"\x00" * 100
    board = tmp_path / "leaderboard.sqlite"
    board.write_bytes(SQLITE_HEADER)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # no network: a download would fail
    with pytest.raises(lb.DatabaseCorruptError) as info:
        open_db(board, create=False)
    message = str(info.value)
    assert "damaged or is not a leaderboard database" in message
    assert "extension" not in message.lower() and "download" not in message.lower()
    assert no_extension_dirs(home)
    assert board.read_bytes() == SQLITE_HEADER  # nothing was written to it


def test_a_file_that_is_no_studies_database_is_named(tmp_path, monkeypatch):
    from etclib.errors import StoreError
    from etclib.studies.db import connect

    path = tmp_path / "studies.sqlite"
    path.write_text("name,score\n", encoding="utf-8")
    with pytest.raises(StoreError, match="does not start with SQLite's header"):
        with connect(path):
            pass
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(SQLITE_HEADER)  # the header and nothing after it
    with pytest.raises(StoreError, match=f"Cannot open the studies database {damaged}"):
        with connect(damaged):
            pass
    assert path.read_text(encoding="utf-8") == "name,score\n"
    assert no_extension_dirs(tmp_path / "home")


def test_every_duckdb_connection_has_extension_loading_off(tmp_path):
    """Even a connection given a SQLite file directly fails locally, at once, not by download."""
    import duckdb

    from etclib import duckfile

    path = tmp_path / "x.db"
    path.write_bytes(SQLITE_HEADER)
    with pytest.raises(duckdb.Error) as info:
        duckfile.connect(path)
    assert "Failed to download" not in str(info.value)
    con = duckfile.connect(":memory:")
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall()
    )
    assert settings == {
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }


def test_no_module_opens_duckdb_but_through_duckfile():
    from tests.conftest import REPO

    offenders = [
        str(p.relative_to(REPO))
        for folder in ("etclib", "leaderboard", "views", "site_pages")
        for p in (REPO / folder).rglob("*.py")
        if "duckdb.connect(" in p.read_text(encoding="utf-8") and p.name != "duckfile.py"
    ]
    assert offenders == []


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
    from etclib.predictions import CR_ONLY
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


def test_streamlit_still_offers_no_switch_for_the_metrics_endpoint():
    """docs/deploy.md says the proxy must keep /_stcore/metrics private because Streamlit has no
    option to turn it off; when a Streamlit upgrade adds one, set it and update the docs."""
    from streamlit import config

    from tests.conftest import REPO
    from tests.proxy import BLOCKED

    options = [
        k
        for k in config._config_options_template
        if k.lower().startswith("server.") and "metric" in k.lower()
    ]
    assert options == ["server.unsafeMetricsUserAttributes"], options
    assert config.get_option("server.unsafeMetricsUserAttributes") == []
    assert config.get_option("server.enableExpensiveMemoryStats") is False
    deploy = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert "location = /_stcore/metrics { return 404; }" in deploy
    assert BLOCKED.match("/_stcore/metrics") and BLOCKED.match("/_stcore/metrics?families=x")
    assert not BLOCKED.match("/_stcore/metricsx") and not BLOCKED.match("/_stcore/health")
