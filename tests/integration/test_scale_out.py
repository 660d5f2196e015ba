"""A judge backlog scored by one worker against three on one PostgreSQL board: every stage once,
the same scores. The run is benchmarks/scale_out.py's own, smaller (the benchmark prints the
figures and the speed-up for a larger backlog); the uploads through two sites in Chromium:
tests/browser/test_shared_board.py.
"""

from __future__ import annotations

from benchmarks.scale_out import (
    JUDGE_CONCURRENCY,
    judge_backlog,
    print_judge,
)

#: The judge backlog of the test: 3 submissions with the fake judge at 50 ms (the benchmark runs
#: 6 at 200 ms and prints the speed-up; a timing is not asserted here).
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
