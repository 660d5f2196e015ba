"""The scaled leaderboard end to end (issue 15): two site processes and three worker processes on
one PostgreSQL, uploads through both sites' Submit pages in Chromium at once, a worker killed
with SIGKILL twice mid-job; and a judge backlog scored by one worker against three.

The runs are benchmarks/scale_out.py's own, smaller (the benchmark prints the same figures for
N=60 and for the issue's judge backlog, with the speed-up).
"""

from __future__ import annotations

import pytest

from benchmarks.scale_out import (
    JUDGE_CONCURRENCY,
    judge_backlog,
    print_judge,
    print_scale_out,
    scale_out,
)

pytestmark = pytest.mark.slow

#: Files uploaded in the test: 12, not the issue's 60 (the benchmark runs 60), to keep CI time
#: reasonable: each upload is a fresh visit to the Submit page in Chromium, about 7 s per file
#: over both sites on two shared cores.
N_FILES = 12


@pytest.mark.browser
def test_two_sites_three_workers_two_kills_score_every_file_once(tiny_corpus, postgres_url,
                                                                  tmp_path):  # fmt: skip
    """12 files (the Done-when says 60: the benchmark's N) uploaded through two sites at once,
    three workers, two SIGKILLs with a job in flight: all stored, all scored, each stage once,
    scores identical to one embedded process, no status stuck in "scoring"."""
    from tests.serve import CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    work = tmp_path / "scale"
    work.mkdir()
    r = scale_out(N_FILES, postgres_url, tiny_corpus, work, kills=2)
    print_scale_out(r)
    assert r["upload_errors"] == []
    assert r["uploaded"] == r["stored"] == r["scored"] == N_FILES
    assert r["statuses"] == {"scored": N_FILES}  # nothing left in "scoring" (or anything else)
    assert r["stage_pairs"] == N_FILES and r["stage_jobs"] == [1]  # one finished job each
    assert r["score_rows_per_signature"] == [1]
    assert r["kills_in_flight"] == 2 and r["jobs_crashed"] >= 2
    assert r["single_files"] == N_FILES and r["identical"]


#: The judge backlog of the test: 3 submissions with the fake judge at 50 ms (the benchmark runs
#: the issue's 6 at 200 ms and prints the speed-up; a timing is not asserted here).
JUDGE_SUBMISSIONS = 3
JUDGE_LATENCY = 0.05


def test_three_workers_share_a_judge_backlog_and_decompose_each_reference_once(
    tiny_corpus, postgres_server, tmp_path
):
    """Judge-scored submissions scored by one worker process, then by three, each run on its own
    fresh database (board, shared judge cache, studies): every submission is scored once per
    stage, the references are decomposed once in all, the three share the judge jobs, and the
    scores are identical to one worker's."""
    from tests.fakes.judge_responder import ScriptedJudge
    from tests.fakes.llm_server import FakeLLMServer

    runs = []
    with FakeLLMServer(ScriptedJudge(), hang_seconds=10.0) as fake:
        for processes in (1, 3):
            url = postgres_server.new_database()
            work = tmp_path / f"judge{processes}"
            work.mkdir()
            try:
                runs.append(
                    judge_backlog(processes, url, tiny_corpus, work, fake,
                                  submissions=JUDGE_SUBMISSIONS, latency=JUDGE_LATENCY)
                )  # fmt: skip
            finally:
                postgres_server.drop_database(url)
    print_judge(*runs)
    for r in runs:
        assert r["jobs_not_done"] == 0 and r["judge_score_rows"] == JUDGE_SUBMISSIONS
        assert r["stage_pairs"] == 2 * JUDGE_SUBMISSIONS and r["stage_jobs"] == [1]
        assert r["score_rows_per_signature"] == [1]
        assert r["ref_decompositions"] == r["distinct_refs"] == r["distinct_refs_decomposed"]
    logs = sorted(tmp_path.glob("judge*/judge*.log"))
    # each worker warmed both its stages before its first claim
    assert len(logs) == 4 and all("warmed: lexical, judge" in p.read_text() for p in logs)
    one, three = runs
    assert one["calls"] == three["calls"]  # the same work, shared the same way
    assert one["max_in_flight"] == JUDGE_CONCURRENCY  # one worker, one job at a time
    assert one["judge_processes"] == 1 and three["judge_processes"] >= 2  # shared out
    assert len(one["scores"]) == JUDGE_SUBMISSIONS and three["scores"] == one["scores"]
