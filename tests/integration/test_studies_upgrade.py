"""``etclib studies migrate`` copies a studies file of an earlier, DuckDB version into
PostgreSQL (the file written as in tests/unit/test_studies_upgrade.py)."""

from __future__ import annotations

from etclib.studies import db as studiesdb
from tests.fixtures.studies import ANNOTATORS, _legacy_file


def test_migrate_copies_a_duckdb_studies_file_into_postgresql(tmp_path, postgres_url):
    path = tmp_path / "studies.duckdb"
    original = _legacy_file(path)
    report = studiesdb.migrate(path, postgres_url)
    assert report.ok
    counts = {t: c.rows_target for t, c in report.tables.items()}
    assert counts["annotators"] == 2 and counts["judge_decisions"] == 5
    assert counts["annotation_answers"] == 0
    assert path.read_bytes() == original  # only read
    with studiesdb.connect(postgres_url, read_only=True) as con:
        rows = con.execute("SELECT * FROM annotators ORDER BY annotator_id").fetchall()
    assert [tuple(r) for r in rows] == ANNOTATORS
