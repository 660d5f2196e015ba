"""The judge cache shared by several workers (ETC_JUDGE_CACHE): on PostgreSQL, processes asking
the same uncached questions at once make one call per question; on SQLite, threads of one
process do, and the calls several processes duplicate are counted. Calls are counted on the fake
server; the server is a real PostgreSQL (tests/pgserver.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from etclib.judge.cache import AnswerCache, location, request_key
from etclib.judge.runner import Judge, JudgeSettings, judge_items, run_sync
from etclib.metrics import Context
from etclib.metrics import judge as J
from etclib.storage.dialects.postgresql import Claims
from tests.fakes.judge_fixtures import FAKE_MODEL, point_provider_at
from tests.fakes.judge_responder import ScriptedJudge, request_kind, sentences
from tests.fakes.llm_server import FakeLLMServer

REPO = Path(__file__).resolve().parents[2]
PROVIDER = "openai"  # both SDKs are covered by integration/test_judge_cache.py; here the storage is the point


def texts(n: int) -> tuple[list[str], list[str]]:
    return [f"予測{i}。気持ち{i}。" for i in range(n)], [f"参照{i}。思い{i}。" for i in range(n)]


def distinct_requests(preds: list[str], refs: list[str]) -> int:
    """Decompositions of every distinct text, then one entailment per (unit, other text)."""
    decompose = set(preds) | set(refs)
    entail = {(u, r) for p, r in zip(preds, refs) for u in sentences(p)}
    entail |= {(u, p) for p, r in zip(preds, refs) for u in sentences(r)}
    return len(decompose) + len(entail)


@pytest.fixture
def fake(monkeypatch):
    responder = ScriptedJudge()
    with FakeLLMServer(responder, hang_seconds=10.0) as server:
        point_provider_at(monkeypatch, PROVIDER, server)
        monkeypatch.setenv("ETC_JUDGE_PROVIDER", PROVIDER)
        monkeypatch.setenv("ETC_JUDGE_MODEL", FAKE_MODEL)
        monkeypatch.setenv("ETC_JUDGE_BACKOFF", "0.01")
        yield server, responder


@pytest.fixture
def pg_cache(postgres_url, monkeypatch):
    monkeypatch.setenv("ETC_JUDGE_CACHE", postgres_url)
    yield postgres_url


def _stored(url: str) -> int:
    with psycopg.connect(url) as con:
        try:
            return con.execute("SELECT count(*) FROM judge_answers").fetchone()[0]
        except psycopg.errors.UndefinedTable:
            return 0


# --- the setting ------------------------------------------------------------------------------


def test_setting_names_a_file_or_a_server(tmp_path, monkeypatch, postgres_url):
    assert location() == Path(os.environ["ETC_CACHE_DIR"]) / "judge.sqlite3"
    monkeypatch.setenv("ETC_JUDGE_CACHE", str(tmp_path / "elsewhere" / "answers.db"))
    cache = AnswerCache()
    assert cache.path == tmp_path / "elsewhere" / "answers.db" and not cache.shared
    cache.put(request_key("p", "m", "t", {}), kind="entail", provider="p", model="m",
              prompt="t", request={}, raw="{}", answer=["Supported", ""])  # fmt: skip
    cache.close()
    assert (tmp_path / "elsewhere" / "answers.db").is_file()
    monkeypatch.setenv("ETC_JUDGE_CACHE", postgres_url)
    cache = AnswerCache()
    assert cache.shared and cache.path is None and "etc-test-password" not in cache.where
    assert len(cache) == 0
    cache.close()


def test_same_rows_and_semantics_on_postgres(pg_cache):
    cache = AnswerCache()
    key = request_key("openai", "m", "entail-v1", {"messages": ["x"]})
    assert cache.get(key) is None
    row = dict(kind="entail", provider="openai", model="m", prompt="entail-v1",
               request={"unit": "嬉しい。"}, raw='{"label": "Supported"}', model_version="m-1",
               input_tokens=12, output_tokens=3)  # fmt: skip
    cache.put(key, answer=["Supported", "同じ"], **row)
    assert cache.get(key) == {
        "answer": ["Supported", "同じ"],
        "raw": '{"label": "Supported"}',
        "model_version": "m-1",
        "input_tokens": 12,
        "output_tokens": 3,
    }
    assert cache.duplicates == 0
    cache.put(key, answer=["Neutral", "別"], **row)  # the same key again: replaced, counted
    assert cache.get(key)["answer"] == ["Neutral", "別"]
    assert cache.duplicates == 1
    cache.put(
        request_key("openai", "m", "decompose-v1", {}), answer=["a"], **{**row, "kind": "decompose"}
    )
    assert len(cache) == 2 and cache.count("entail") == 1 and cache.count("decompose") == 1
    with psycopg.connect(pg_cache) as con:  # the row as the SQLite file holds it
        request, created = con.execute(
            "SELECT request, created FROM judge_answers WHERE key = %s", [key]
        ).fetchone()
    assert json.loads(request) == {"unit": "嬉しい。"} and abs(created - time.time()) < 60
    cache.close()


def test_two_submissions_reuse_reference_decompositions_through_postgres(fake, pg_cache):
    server, responder = fake
    preds, refs = texts(3)
    J.METRIC.compute(preds, refs, Context({}))
    assert _stored(pg_cache) == server.count() == distinct_requests(preds, refs)
    other = [f"別{i}。" for i in range(3)]
    server.reset()
    J.METRIC.compute(other, refs, Context({}))
    asked = {request_kind(r)[1][0] for r in server.requests if request_kind(r)[0] == "decompose"}
    assert asked == set(other)  # the references' decompositions came from the server's table


# --- asked once -------------------------------------------------------------------------------

_WORKER = """
import json, sys, threading
from etclib.judge.cache import AnswerCache
from etclib.judge.runner import Judge, JudgeSettings, judge_items, run_sync
n, threads = int(sys.argv[1]), int(sys.argv[2])
preds = [f"予測{i}。気持ち{i}。" for i in range(n)]
refs = [f"参照{i}。思い{i}。" for i in range(n)]
counts = {"calls": 0, "hits": 0, "duplicates": 0, "waits": 0}
lock = threading.Lock()
print("ready", flush=True)
sys.stdin.readline()  # every worker starts together

def work():
    cache = AnswerCache()
    async def run():
        async with Judge(JudgeSettings.resolve(), cache=cache) as judge:
            results = await judge_items(judge, preds, refs)
            assert not any(r.error for r in results), results
            return judge.usage
    usage = run_sync(run)
    with lock:
        counts["calls"] += usage.calls
        counts["hits"] += usage.cache_hits
        counts["duplicates"] += cache.duplicates
        counts["waits"] += cache.waits
    cache.close()

ts = [threading.Thread(target=work) for _ in range(threads)]
for t in ts: t.start()
for t in ts: t.join()
print(json.dumps(counts), flush=True)
"""


def run_workers(processes: int, threads: int, n: int) -> list[dict]:
    """``processes`` worker processes of ``threads`` judges each, all asking the same questions
    of ``n`` items at once; each one's counts."""
    env = dict(os.environ, PYTHONPATH=str(REPO), ETC_JUDGE_CONCURRENCY="8")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(n), str(threads)],
            cwd=REPO,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for _ in range(processes)
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-2000:]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr[-2000:]
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def test_workers_on_postgres_ask_each_question_once(fake, pg_cache):
    server, responder = fake
    server.latency = 0.2  # every worker reaches every question while the first call is out
    n = 8
    preds, refs = texts(n)
    distinct = distinct_requests(preds, refs)  # 16 decompositions + 32 entailments
    counts = run_workers(processes=3, threads=2, n=n)
    assert server.count() == distinct == 48
    assert set(responder.decompose_calls.values()) == {1}
    assert set(responder.entail_calls.values()) == {1}
    assert sum(c["calls"] for c in counts) == distinct
    assert sum(c["duplicates"] for c in counts) == 0
    # 6 judges x 48 questions: one call each, every other ask answered by the cache
    assert sum(c["hits"] for c in counts) == 6 * distinct - distinct
    assert sum(c["waits"] for c in counts) > 0  # some really waited for another worker's call
    assert _stored(pg_cache) == distinct


def test_threads_on_sqlite_ask_once_and_processes_count_their_duplicates(fake):
    server, responder = fake
    server.latency = 0.2
    n = 4
    preds, refs = texts(n)
    distinct = distinct_requests(preds, refs)  # 8 + 16
    # one process, four judges (each with its own connection to the file): one call each
    (alone,) = run_workers(processes=1, threads=4, n=n)
    assert server.count() == alone["calls"] == distinct == 24
    assert alone["duplicates"] == 0 and alone["waits"] > 0
    # new questions, three processes: SQLite claims stay in their process, so processes may
    # call for the same question; every such call is an answer stored again, and counted
    cache = AnswerCache()
    cache.close()
    Path(cache.path).unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(cache.path) + suffix).unlink(missing_ok=True)
    server.reset()
    counts = run_workers(processes=3, threads=2, n=n)
    calls = server.count()
    duplicates = sum(c["duplicates"] for c in counts)
    assert calls == sum(c["calls"] for c in counts) == distinct + duplicates
    assert len(AnswerCache()) == distinct


_KILLED = """
import sys
from etclib.metrics import Context, judge
preds = [f"予測{i}。気持ち{i}。" for i in range(20)]
refs = [f"参照{i}。思い{i}。" for i in range(20)]
judge.METRIC.compute(preds, refs, Context({"concurrency": 4}))
print("finished")
"""


def test_a_killed_worker_leaves_its_answers_and_no_claim(fake, pg_cache, monkeypatch):
    """Another process resumes from the answers a killed one stored, and is not held up by the
    claims the dead one held (the server drops a dead session's advisory locks)."""
    server, _ = fake
    server.latency = 0.05
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED], cwd=REPO, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    stored, deadline = 0, time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            stored = _stored(pg_cache)
            if stored >= 15:
                break
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
    assert b"finished" not in out and stored >= 15, err.decode()[-2000:]
    kept = _stored(pg_cache)
    received = server.count(answered=True)
    assert received - 4 <= kept <= received  # at most the calls in flight are lost
    server.reset()
    server.latency = 0.0
    preds, refs = texts(20)
    total = distinct_requests(preds, refs)
    refused = []  # claims found held by another session (the dead worker's would be)
    try_lock = Claims.try_lock

    def recorded(self, key):
        got = try_lock(self, key)
        if not got:
            refused.append(key)
        return got

    monkeypatch.setattr(Claims, "try_lock", recorded)
    data = J.METRIC.compute(preds, refs, Context({"concurrency": 16}))
    assert refused == []  # no wait on the dead worker's claims: the server dropped them
    assert server.count() == data.extra["judge_usage"]["calls"] == total - kept
    assert data.extra["judge_usage"]["cache_hits"] == kept
    assert _stored(pg_cache) == total == 120  # 40 decompositions + 20 x (2 + 2) entailments


def test_a_failed_call_releases_the_claim_for_the_next_asker(fake, pg_cache):
    server, _ = fake
    server.inject(500, times=4)  # the first asker's four attempts all fail

    async def ask():
        settings = JudgeSettings.resolve(lambda name: {"judge_max_attempts": 4}.get(name))
        async with Judge(settings) as judge:  # its own cache, closed on exit
            return await judge_items(judge, ["嬉しい。"], ["嬉しい。"])

    first = run_sync(ask)
    assert first[0].error is not None
    second = run_sync(ask)
    assert second[0].error is None and second[0].unit_labels == ["Supported"]


def test_a_second_thread_waits_for_the_first_callers_answer(fake, pg_cache):
    """Two judges in two threads of one process, one question: one call, one wait."""
    server, _ = fake
    server.latency = 0.3
    results, caches = [], [AnswerCache(), AnswerCache()]
    both = threading.Barrier(2)

    def one(cache):
        async def run():
            async with Judge(JudgeSettings.resolve(), cache=cache) as judge:
                both.wait(timeout=30)  # both clients are up: the asks overlap
                return (await judge.decompose("一つの問い。"), judge.usage.calls)

        results.append(run_sync(run))

    threads = [threading.Thread(target=one, args=(c,)) for c in caches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert server.count() == 1
    assert sorted(calls for _, calls in results) == [0, 1]
    assert [units for units, _ in results] == [["一つの問い。"]] * 2
    assert sum(c.waits for c in caches) == 1
