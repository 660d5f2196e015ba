"""The storage layer's one Database and migration runner, the same suite on every engine: a SQLite
file under tmp_path, and a database of its own on the test session's real PostgreSQL server
(skipped, with the reason, where the machine has none). A small store of the test's own
declares its migrations; what is asserted is what each one stored."""

from __future__ import annotations

import pytest

from etclib.storage.copier import copy_store
from etclib.storage.database import Database, Schema, Store, close_all, open_store


class Refused(Exception):
    """The test store's error: the fault's kind and reason."""

    def __init__(self, fault) -> None:
        self.kind = fault.kind
        super().__init__(f"{fault.kind}: {fault.reason}")


calls: list[int] = []

V1 = (
    1,
    [
        "CREATE SEQUENCE item_ids START 10",
        "CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, data BLOB)",
    ],
)
V2 = (2, ["ALTER TABLE items ADD COLUMN made_at TIMESTAMP", lambda cur: calls.append(2)])


def store(*migrations) -> Store:
    return Store(
        name="probe",
        error=Refused,
        schema=Schema("probe", migrations, versions="probe_versions"),
        tables=("items",),
        sequences={"item_ids": ("items", "id")},
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    """A new, empty target of one engine (the file is not made yet)."""
    if request.param == "sqlite":
        yield tmp_path / "probe.sqlite"
    else:
        yield request.getfixturevalue("postgres_url")
    close_all()


def _add(db: Database, *names: str) -> None:
    with db.write() as cur:
        for name in names:
            cur.execute(
                "INSERT INTO items (id, name) VALUES (?, ?)",
                [db.dialect.next_id(cur, "item_ids"), name],
            )


def test_migrations_run_once_in_order_and_a_newer_store_is_refused(target):
    calls.clear()
    db = Database(target, store(V1))
    assert db.created and db.version() == 1
    _add(db, "嬉しい")
    db.close()
    db = Database(target, store(V1, V2))
    assert not db.created and db.version() == 2 and calls == [2]
    assert db.dialect.columns(db.cursor(), "items") == ["id", "name", "data", "made_at"]
    assert db.query("SELECT id, name FROM items") == [(10, "嬉しい")]
    db.close()
    Database(target, store(V1, V2)).close()
    assert calls == [2]  # applied once
    with pytest.raises(Refused, match="newer") as err:
        Database(target, store(V1))
    assert err.value.kind == "newer"


def test_a_missing_store_is_made_only_when_asked(target):
    with pytest.raises(Refused, match="missing: given here"):
        Database(target, store(V1), create=False, source="given here")
    with pytest.raises(Refused, match="missing"):  # nothing was made by the refusal
        Database(target, store(V1), create=False)
    db = Database(target, store(V1))
    assert db.created
    db.close()


def test_a_write_inside_a_write_is_part_of_it(target):
    db = Database(target, store(V1))
    with pytest.raises(RuntimeError), db.write():
        _add(db, "a")
        with db.write() as inner:
            inner.execute("INSERT INTO items (id, name) VALUES (1, 'b')")
        raise RuntimeError("the outer block fails")
    assert db.query("SELECT count(*) FROM items") == [(0,)]
    _add(db, "c")
    assert db.query("SELECT name FROM items") == [("c",)]
    db.close()


def test_a_schema_applied_in_a_block_that_failed_is_applied_again(target):
    db = Database(target, store(V1))
    extra = Schema.of("extra", "CREATE TABLE IF NOT EXISTS extra (x INTEGER)")
    with pytest.raises(RuntimeError), db.session():
        db.apply(extra)
        raise RuntimeError("the block fails after applying it")
    with db.session() as con:
        db.apply(extra)
        con.execute("INSERT INTO extra VALUES (1)")
    assert db.query("SELECT x FROM extra") == [(1,)]
    db.close()


def test_copy_store_copies_into_another_engine_and_refuses_a_filled_target(target, tmp_path):
    source = open_store(tmp_path / "source.sqlite", store(V1))
    _add(source, "一", "二", "")
    into = Database(target, store(V1))
    report = copy_store(source.target, into)
    assert report.ok and report.tables["items"].rows_target == 3
    _add(into, "four")  # the sequence goes on after the copied ids
    assert into.query("SELECT max(id) FROM items") == [(13,)]
    with pytest.raises(Refused, match="filled: items \\(4\\)"):
        copy_store(source.target, into)
    assert copy_store(source.target, into, replace=True).ok
    assert into.query("SELECT count(*) FROM items") == [(3,)]
    with pytest.raises(Refused, match="same"):
        copy_store(into.target, into)
    into.close()


_OPENER = """
import sys, threading
from tests.integration.test_storage_database import V1, _add, store
from etclib.storage.database import Database
print("ready", flush=True)
sys.stdin.readline()  # every process starts together
failed = []

def work(n):
    try:
        db = Database(sys.argv[1], store(V1))
        _add(db, f"{sys.argv[2]}-{n}")
        db.close()
    except BaseException as exc:
        failed.append(repr(exc))

threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
for t in threads: t.start()
for t in threads: t.join()
print(failed, flush=True)
"""


def test_processes_and_threads_making_one_new_file_at_once_lose_nothing(tmp_path):
    """Opening reads nothing of the file beside SQLite: a descriptor of it closed in a process
    drops that process's locks, and another process could then take the write-ahead log away."""
    import subprocess
    import sys

    from tests.conftest import REPO

    for round_ in range(3):
        path = tmp_path / f"new{round_}.sqlite"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _OPENER, str(path), str(p)],
                cwd=REPO,
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )  # fmt: skip
            for p in range(4)
        ]
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()[-2000:]
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and out.strip() == "[]", (out, err[-2000:])
        db = Database(path, store(V1))
        assert db.query("SELECT count(*) FROM items") == [(12,)]
        db.close()
