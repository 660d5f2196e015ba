"""Judge answer cache: reuse across submissions and runs, dedupe, resume after a kill,
concurrent writers. Calls are counted on the fake server, through both SDKs."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from etclib.judge.cache import AnswerCache, request_key
from etclib.metrics import judge as J
from tests.fakes.judge_fixtures import judge_env  # noqa: F401 - fixture
from tests.fakes.judge_responder import request_kind

REPO = Path(__file__).resolve().parents[2]


REFS = ["相手の話に驚いた。もっと聞きたいと思った。", "嬉しかった。", "悲しかった。感謝した。"]


SUB_A = ["相手の話に驚いた。", "嬉しかった。楽しかった。", "悲しかった。"]


SUB_B = ["もっと聞きたいと思った。", "疲れた。", "感謝した。安心した。"]


def _decompositions_of(server, texts) -> int:
    def is_ref(req) -> bool:
        kind, args = request_kind(req)
        return kind == "decompose" and args[0] in texts

    return server.count(where=is_ref)


def test_second_submission_reuses_reference_decompositions(judge_env):  # noqa: F811
    server = judge_env.server
    first = J.METRIC.compute(SUB_A, REFS, judge_env.ctx())
    assert _decompositions_of(server, REFS) == 3
    before = server.count()
    second = J.METRIC.compute(SUB_B, REFS, judge_env.ctx())
    # no reference is decomposed again; every new call is about the new predictions
    assert _decompositions_of(server, REFS) == 3
    assert server.count() > before
    assert second.extra["judge_usage"]["cache_hits"] >= 3
    # (units: sentences; Supported when verbatim in the other text)
    # SUB_A: item 1 P 1/1 R 1/2; item 2 P 1/2 R 1/1; item 3 P 1/1 R 1/2 -> F1 2/3 each
    assert J.METRIC.aggregate(first)["f1"] == pytest.approx(200 / 3)
    # SUB_B: item 1 P 1 R 1/2 -> 2/3; item 2 P 0 R 0 -> 0; item 3 P 1/2 R 1/2 -> 1/2
    assert J.METRIC.aggregate(second)["f1"] == pytest.approx((2 / 3 + 0 + 0.5) / 3 * 100)


def test_same_file_twice_makes_no_call(judge_env):  # noqa: F811
    first = J.METRIC.compute(SUB_A, REFS, judge_env.ctx())
    calls = judge_env.server.count()
    assert first.extra["judge_usage"]["calls"] == calls > 0
    second = J.METRIC.compute(SUB_A, REFS, judge_env.ctx())
    assert judge_env.server.count() == calls
    usage = second.extra["judge_usage"]
    assert usage["calls"] == 0 and usage["input_tokens"] == 0
    assert usage["cache_hits"] == calls
    assert J.METRIC.aggregate(second) == J.METRIC.aggregate(first)
    assert second.details == first.details
    assert (Path(os.environ["ETC_CACHE_DIR"]) / "judge.sqlite3").is_file()


def test_identical_texts_in_a_run_are_asked_once_even_in_flight(judge_env):  # noqa: F811
    judge_env.server.latency = 0.2  # all 40 texts are in flight together
    preds = ["同じ気持ちだった。"] * 20
    refs = ["同じ気持ちだった。"] * 20
    data = J.METRIC.compute(preds, refs, judge_env.ctx())
    r = judge_env.responder
    assert r.decompose_calls == {"同じ気持ちだった。": 1}
    assert r.entail_calls == {("同じ気持ちだった。", "同じ気持ちだった。"): 1}
    assert judge_env.server.count() == 2
    assert data.extra["judge_usage"]["cache_hits"] == 40 + 40 - 2
    assert J.METRIC.aggregate(data)["f1"] == 100.0


def test_another_model_or_provider_does_not_reuse_answers(judge_env):  # noqa: F811
    J.METRIC.compute(SUB_A, REFS, judge_env.ctx())
    calls = judge_env.server.count()
    J.METRIC.compute(SUB_A, REFS, judge_env.ctx(judge_model="another-model"))
    assert judge_env.server.count() == 2 * calls
    assert {r.model for r in judge_env.server.requests} == {"fake-judge", "another-model"}


_CHILD = """
import sys
from etclib.metrics import Context, judge
preds = [f"予測{i}。気持ち{i}。" for i in range(40)]
refs = [f"参照{i}。思い{i}。" for i in range(40)]
judge.METRIC.compute(preds, refs, Context({"judge_provider": sys.argv[1], "judge_model": "fake-judge",
                                     "concurrency": 4}))
print("finished")
"""


def test_killed_run_resumes_without_repeating_finished_calls(judge_env, tmp_path):  # noqa: F811
    server = judge_env.server
    server.latency = 0.05
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, judge_env.provider],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    db = Path(os.environ["ETC_CACHE_DIR"]) / "judge.sqlite3"
    deadline = time.monotonic() + 30
    stored = 0
    try:
        while time.monotonic() < deadline:
            if db.exists():
                with sqlite3.connect(db, timeout=10) as conn:
                    try:
                        stored = conn.execute("SELECT COUNT(*) FROM judge_answers").fetchone()[0]
                    except sqlite3.OperationalError:
                        stored = 0
            if stored >= 30 or proc.poll() is not None:
                break
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
    assert b"finished" not in out, "the run ended before it was killed"
    assert stored >= 30, err.decode()[-2000:]
    # every answer the killed run received is in the cache, and the file is sound
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        kept = conn.execute("SELECT COUNT(*) FROM judge_answers").fetchone()[0]
    received = server.count(answered=True)
    assert received - 4 <= kept <= received  # at most the calls in flight at the kill are lost
    server.reset()
    server.latency = 0.0
    preds = [f"予測{i}。気持ち{i}。" for i in range(40)]
    refs = [f"参照{i}。思い{i}。" for i in range(40)]
    data = J.METRIC.compute(preds, refs, judge_env.ctx(concurrency=16))
    # 80 decompositions + 40 items x (2 + 2) entailments = 240 distinct requests
    total = 80 + 40 * 4
    assert server.count() == total - kept
    assert data.extra["judge_usage"]["calls"] == total - kept
    assert data.extra["judge_usage"]["cache_hits"] == kept
    # each unit ("予測i。") occurs in neither text of the other side -> all Not Supported
    assert J.METRIC.aggregate(data)["f1"] == 0.0 and data.extra["judge_errors"] == 0


_WRITER = """
import sys
from etclib.judge.cache import AnswerCache, request_key
path, worker, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cache = AnswerCache(path)
for i in range(n):
    key = request_key("p", "m", "t", {"i": i % 150, "w": worker % 2})
    cache.put(key, kind="entail", provider="p", model="m", prompt="t",
              request={"i": i}, raw="{}", answer=["Supported", f"{worker}-{i}"])
    assert cache.get(key) is not None
cache.close()
"""


def _write_rows(path: str, worker: int, n: int) -> None:
    """What each writer thread does; _WRITER is the same for the writer processes."""
    cache = AnswerCache(path)
    for i in range(n):
        key = request_key("p", "m", "t", {"i": i % 150, "w": worker % 2})
        cache.put(
            key,
            kind="entail",
            provider="p",
            model="m",
            prompt="t",
            request={"i": i},
            raw="{}",
            answer=["Supported", f"{worker}-{i}"],
        )
        assert cache.get(key) is not None
    cache.close()


def test_concurrent_writers_do_not_corrupt_the_cache(tmp_path):
    path = str(tmp_path / "shared" / "judge.sqlite3")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, path, str(w), "300"],
            cwd=REPO,
            env=env,
            stderr=subprocess.PIPE,
        )
        for w in range(4)
    ]
    threads = [threading.Thread(target=_write_rows, args=(path, w, 300)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err.decode()[-2000:]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # keys: i % 150 (150 values) x worker parity (2 values)
    cache = AnswerCache(path)
    assert len(cache) == 300 and cache.count("entail") == 300 and cache.count("decompose") == 0
    cache.close()
