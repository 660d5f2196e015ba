"""How tests/data/legacy_board.duckdb.gz was made: a board written by the DuckDB engine.

Run with the code of a commit whose board is still the DuckDB one on the import path, e.g.::

    git archive <a commit with the DuckDB board> | tar -x -C /tmp/legacy && cd /tmp/legacy
    PYTHONPATH=/tmp/legacy python tests/data/make_legacy_board.py /tmp/legacy_board.duckdb
    gzip -9 /tmp/legacy_board.duckdb

Five submissions (one hidden, one re-scored, one left queued), their scores, a failed job with
an admin detail, a moderation entry, a Hub push and a rate-limit event; schema version 8.
The current code cannot run this script (it writes SQLite): tests/unit/test_upgrade.py reads the file.
"""
# ruff: noqa: E402 - the environment is set before the project is imported
import os
import sys
from pathlib import Path

out = Path(sys.argv[1])
from tests.data.make_tiny_corpus import write_tiny_corpus

corpus = write_tiny_corpus(Path("/tmp/legacy_corpus"))
os.environ["ETC_DATA_DIR"] = str(corpus)
os.environ["ETC_LEADERBOARD_DB"] = str(out)
os.environ["ETC_ADMIN_TOKEN"] = "t" * 30
os.environ["ETC_LB_RETRY_BACKOFF"] = "0"
os.environ["ETC_CACHE_DIR"] = "/tmp/legacy_cache"
import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.tracks.predictions import dumps_jsonl
from etclib.data.task import items
from leaderboard import queue
from leaderboard.db import open_db

its = items(load_corpus(corpus), "test")
def variant(n):
    return dumps_jsonl((it.key, it.utterance if i < n else it.reference) for i, it in enumerate(its)).encode()
meta = {"name": "M", "team": "Lab", "setting": "few-shot"}
ids = [lb.submit(variant(n), {**meta, "name": f"model {n}", "contact": f"{n}@x.org"}).id for n in (0, 3, 7, 11)]
lb.process_jobs()
lb.hide(ids[1], "t" * 30, "spam")
lb.rescore(ids[2], "t" * 30)
lb.process_jobs()
db = open_db()
with db.write() as cur:
    job = queue.enqueue(cur, ids[0], "lexical", {"follow": False})
    cur.execute("UPDATE jobs SET status = 'failed', error = 'boom', error_detail = 'provider said no' WHERE id = ?", [job])
    cur.execute("INSERT INTO hub_pushes VALUES (now(), 'org/etc', true, 'ok')")
    cur.execute("INSERT INTO limit_events VALUES ('chat', 'abc', now())")
lb.submit(variant(13), {**meta, "name": "queued one", "contact": "q@x.org"})  # left queued
print(db.query("SELECT count(*) FROM submissions"), db.schema_version())
lb.close_all()
