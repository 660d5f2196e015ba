"""``etclib studies migrate``: an embedded studies file (SQLite) copied into PostgreSQL, every
study table with its count and SHA-256 compared, a non-empty target refused without --replace,
a missing source and a copy onto itself refused.

Runs on the test session's real PostgreSQL server (tests/pgserver.py; skipped, with the reason,
where the machine has none).
"""

from __future__ import annotations

from datetime import datetime

import pytest

from etclib.cli import main
from etclib.storage.copier import table_digest
from etclib.studies import annotation
from etclib.studies import db as studiesdb

TOKEN = "s3cret-admin-token-0123456789"


def _decisions(submission: str, n: int) -> list[dict]:
    sides, labels = ("precision", "recall"), ("Supported", "Neutral", "Not Supported")
    return [
        {
            "submission_id": submission,
            "dialogue_id": 100 + i // 4,
            "turn": i % 4,
            "role": ("speaker", "listener")[i % 2],
            "side": sides[i % 2],
            "unit": f"嬉しいと感じている{i}",
            "target": f"今日は楽しかった。{i}",
            "label": labels[i % 3],
        }
        for i in range(n)
    ]


@pytest.fixture
def studies_file(tmp_path, monkeypatch):
    """A studies file with rows in every study: Study 2 through its own API (decisions, a
    sample, an annotator, an answer), the judge-labels and causes runs as their rows."""
    path = tmp_path / "studies.sqlite"
    monkeypatch.setenv("ETC_STUDIES_DB", str(path))
    monkeypatch.setenv("ETC_ADMIN_TOKEN", TOKEN)
    annotation.add_decisions(_decisions("sub-a", 24) + _decisions("sub-b", 9))
    annotation.draw_sample(TOKEN, "sub-a", per_label=3, seed=7)
    issued = annotation.issue_code(TOKEN, "Annotator Ａ")
    first = annotation.next_decision(issued.code)
    annotation.record_answer(issued.code, first.decision_id, "Neutral")
    run = ["run1", "sig", "openai", "m", "labels", 2, "abc", 0.0, "test", 3, 2, 1, "0.1",
           datetime(2026, 1, 2, 3, 4, 5, 678901)]  # fmt: skip
    with studiesdb.connect(path) as con:
        for name, ddl in studiesdb.schemas().items():
            con.schema(name, ddl)
        con.execute("INSERT INTO label_runs VALUES (" + ", ".join("?" * len(run)) + ")", run)
        con.execute(
            "INSERT INTO label_judgements VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)",
            ["run1", 1, 0, "speaker", "joy;surprise", '{"labels": ["joy"]}',
             "run1", 1, 1, "listener", None, "not json"],
        )  # fmt: skip
        con.execute(
            "INSERT INTO cause_runs VALUES (" + ", ".join("?" * len(run)) + ")",
            ["crun", *run[1:7], 0.7, *run[8:]],
        )
        con.execute(
            "INSERT INTO cause_labels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ["llm", "crun", 1, 0, "speaker", "仕事", "event", "{}", datetime(2026, 1, 2)],
        )
    return path


def test_migrate_copies_every_study_table_and_checks_it(studies_file, postgres_url, capsys):
    from etclib.core.errors import StoreError

    before = annotation.submissions()
    report = studiesdb.migrate(studies_file, postgres_url)
    assert report.ok
    assert set(report.tables) == set(studiesdb.tables())
    counts = {t: c.rows_target for t, c in report.tables.items()}
    assert counts["judge_decisions"] == 33 and counts["annotators"] == 1
    assert counts["annotation_answers"] == 1 and counts["label_judgements"] == 2
    assert counts["cause_labels"] == 1 and counts["cause_runs"] == 1
    assert counts["annotation_sample"] == 9  # 3 per label of sub-a
    # the studies read the same from the server as from the file
    after = annotation.submissions(db=postgres_url)
    assert after.to_dict("records") == before.to_dict("records")
    with studiesdb.connect(postgres_url) as con:
        row = con.execute("SELECT created_at, temperature FROM cause_runs").fetchone()
        assert row == (datetime(2026, 1, 2, 3, 4, 5, 678901), 0.7)
        # the checksum sees one changed value
        con.execute("UPDATE judge_decisions SET label = 'Neutral' WHERE label = 'Supported'")
    check = report.tables["judge_decisions"]
    with studiesdb.connect(postgres_url) as con:
        cols = con.dialect.columns(con, "judge_decisions")
        assert table_digest(con, "judge_decisions", cols) != (
            check.rows_source,
            check.sha_source,
        )
    # a second copy is refused (the target is not empty), with --replace it goes through
    with pytest.raises(StoreError, match="not empty.*--replace"):
        studiesdb.migrate(studies_file, postgres_url)
    assert main(["studies", "migrate", "--to", postgres_url]) == StoreError.exit_code
    assert "not empty" in capsys.readouterr().err
    assert main(["studies", "migrate", "--to", postgres_url, "--replace"]) == 0
    out = capsys.readouterr().out
    assert "every table has the same rows and checksum on both sides" in out
    assert "judge_decisions" in out and " 33 " in out


def test_migrate_refuses_what_it_cannot_copy(tmp_path, postgres_url):
    from etclib.core.errors import StoreError

    with pytest.raises(StoreError, match="There is no studies database at"):
        studiesdb.migrate(tmp_path / "missing.sqlite", postgres_url)
    with pytest.raises(StoreError, match="name the same one"):
        studiesdb.migrate(postgres_url, postgres_url)
