"""leaderboard.faultpoints: the named points where a crash test has a worker SIGKILL itself."""

from __future__ import annotations

from leaderboard import faultpoints


def test_the_worker_passes_every_point_of_a_job_in_order(tiny_corpus, monkeypatch):
    """One job run in this process passes each named point once, in the documented order."""
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    test_items = items(load_corpus(tiny_corpus), "test")
    data = dumps_jsonl((it.key, it.reference) for it in test_items).encode()
    lb.submit(data, {"name": "M", "team": "T", "setting": "few-shot", "contact": "a@x.org"})
    passed: list[str] = []
    monkeypatch.setattr("leaderboard.worker.fault_point", passed.append)
    assert lb.process_jobs() == 1
    assert passed == list(faultpoints.POINTS)
