"""The studies database's SQLite file under threads (a site's pages and scoring threads open it
at once)."""

from __future__ import annotations

import threading

from etclib.studies import db as studiesdb


def test_threads_opening_and_closing_the_file_at_once_all_succeed(tmp_path):
    path = tmp_path / "studies.sqlite"
    with studiesdb.connect(path) as con:
        con.raw.execute("CREATE TABLE t (x INTEGER)")
    errors: list[str] = []

    def work() -> None:
        for _ in range(150):
            try:
                with studiesdb.connect(path) as con:
                    con.raw.execute("INSERT INTO t VALUES (1)")
            except Exception as exc:  # noqa: BLE001 - every failure is the finding
                errors.append(str(exc))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with studiesdb.connect(path, read_only=True) as con:
        assert con.raw.execute("SELECT count(*) FROM t").fetchone()[0] == 900
