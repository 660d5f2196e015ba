import json
import os

import pytest

from etclib.core.errors import StoreError
from etclib.data import store


@pytest.fixture(scope="module")
def built(tiny_corpus_shared):
    """One store of the tiny corpus for the tests that only query it."""
    db = tiny_corpus_shared.parent / "s.duckdb"
    store.ensure(db, tiny_corpus_shared)
    return db, tiny_corpus_shared


@pytest.fixture
def con(built):
    return store.connect(*built)


def test_build_once_and_rebuild_on_change(tiny_corpus, tmp_path):
    db = tmp_path / "s.duckdb"
    store.ensure(db, tiny_corpus)
    first = os.stat(db).st_mtime_ns
    store.ensure(db, tiny_corpus)
    assert os.stat(db).st_mtime_ns == first  # fresh: not rebuilt
    path = tiny_corpus / "dialogues" / "0007.json"
    d = json.loads(path.read_text(encoding="utf-8"))
    d["dialogue"][0]["utterance"] = "変更された発話です"
    path.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    store.ensure(db, tiny_corpus)
    assert os.stat(db).st_mtime_ns != first
    con = store.connect(db, tiny_corpus)
    assert store.search(con, store.Filters(text="変更された"))[1] == 1


def test_tables_and_columns(con):
    row = con.execute(
        "SELECT role, position, ann1, label, joy, votes_joy, agreement, split FROM utterances "
        "WHERE dialogue_id = 7 AND turn = 1 AND role = 'speaker'"
    ).fetchone()
    assert row[0] == "speaker" and row[1] == 1 and isinstance(row[2], list)
    assert row[7] == "test"
    assert con.execute("SELECT count(*) FROM participants").fetchone()[0] == 4
    assert con.execute("SELECT count(*) FROM dialogues WHERE split = 'train'").fetchone()[0] == 5


@pytest.mark.parametrize(
    "hostile", ["%", "_", "'; DROP TABLE utterances; --", "\\", '"', "<script>alert(1)</script>"]
)
def test_hostile_search_strings_match_literally(con, hostile):
    rows, total = store.search(con, store.Filters(text=hostile))
    assert total == 0 and rows.empty
    assert con.execute("SELECT count(*) FROM utterances").fetchone()[0] == 80


def test_percent_matches_only_a_literal_percent(tiny_corpus, tmp_path):
    path = tiny_corpus / "dialogues" / "0008.json"
    d = json.loads(path.read_text(encoding="utf-8"))
    d["dialogue"][2]["utterance"] = "100%_本当です"
    path.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    con = store.connect(tmp_path / "p.duckdb", tiny_corpus)
    assert store.search(con, store.Filters(text="%_"))[1] == 1
    assert store.search(con, store.Filters(text="0%"))[1] == 1


def test_filters_and_pagination(con):
    _, all_total = store.search(con, store.Filters())
    assert all_total == 80
    page, total = store.search(con, store.Filters(split="test", role="listener"), limit=3, offset=3)
    assert total == 10 and len(page) == 3 and set(page["role"]) == {"listener"}
    _, joy = store.search(con, store.Filters(categories=("joy",)))
    expected = con.execute(
        "SELECT count(*) FROM utterances WHERE list_contains(label, 'joy')"
    ).fetchone()[0]
    assert joy == expected
    _, b5 = store.search(con, store.Filters(big_five={"openness": (2, 2)}))
    assert (
        b5
        == con.execute("SELECT count(*) FROM utterances WHERE participant_id = 'AA'").fetchone()[0]
    )
    with pytest.raises(StoreError, match="Unknown category"):
        store.search(con, store.Filters(categories=("happy",)))
    with pytest.raises(StoreError, match="Unknown Big Five"):
        store.search(con, store.Filters(big_five={"openness); DROP": (1, 2)}))


def test_dialogue_view(con):
    d = store.dialogue(con, 7)
    assert d["split"] == "test" and len(d["utterances"]) == 10
    assert list(d["utterances"]["role"][:2]) == ["speaker", "listener"]
    assert len(d["participants"]) == 2
    assert store.dialogue(con, 12345) is None
    assert store.dialogue_ids(con, "test") == [7, 8]


def test_connect_opens_the_store_once_per_process_and_follows_a_rebuild(
    tiny_corpus, tmp_path, monkeypatch
):
    db = tmp_path / "s.duckdb"
    store.ensure(db, tiny_corpus)
    store._connections.pop(str(db.resolve()), None)  # as a new process
    opened = []
    real = store.duckfile.connect
    monkeypatch.setattr(
        store.duckfile, "connect", lambda path, **kw: opened.append(kw) or real(path, **kw)
    )
    for _ in range(3):
        cur = store.connect(db, tiny_corpus)
        assert cur.execute("SELECT count(*) FROM utterances").fetchone()[0] == 80
    assert opened == [{"read_only": True}]  # one open, its meta read through it
    path = tiny_corpus / "dialogues" / "0007.json"
    d = json.loads(path.read_text(encoding="utf-8"))
    d["dialogue"][0]["utterance"] = "変更された発話です"
    path.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    cur = store.connect(db, tiny_corpus)  # the corpus changed: rebuilt, and a fresh connection
    assert store.search(cur, store.Filters(text="変更された"))[1] == 1
    assert store.search(store.connect(db, tiny_corpus), store.Filters(text="変更された"))[1] == 1
