"""leaderboard.faultpoints: the named points where a crash test has a worker SIGKILL itself."""

from __future__ import annotations

import signal

import pytest

from leaderboard import faultpoints


@pytest.fixture
def kills(monkeypatch) -> list[tuple[int, int]]:
    """The os.kill calls a fault point makes (recorded, not sent)."""
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(faultpoints.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    faultpoints.reset()
    yield sent
    faultpoints.reset()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", {}),
        ("after_compute:3", {"after_compute": 3}),
        (" after_claim:1 , after_commit:2 ,", {"after_claim": 1, "after_commit": 2}),
    ],
)
def test_a_schedule_reads_as_point_and_pass(raw, expected):
    assert faultpoints._schedule(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("after_compte:1", "Unknown fault point 'after_compte'"),
        ("after_compute", "needs a pass number >= 1"),
        ("after_compute:0", "needs a pass number >= 1"),
        ("after_compute:x", "needs a pass number >= 1"),
    ],
)
def test_a_mistyped_schedule_is_refused(raw, message, monkeypatch, kills):
    monkeypatch.setenv(faultpoints.ENV, raw)
    with pytest.raises(ValueError, match=message):
        faultpoints.hit("after_compute")
    assert kills == []


def test_nothing_happens_without_the_setting(monkeypatch, kills):
    monkeypatch.delenv(faultpoints.ENV, raising=False)
    for point in faultpoints.POINTS:
        faultpoints.hit(point)
    assert kills == []


def test_the_process_is_killed_at_the_scheduled_pass_only(monkeypatch, kills, capsys):
    monkeypatch.setenv(faultpoints.ENV, "after_store:3")
    for _ in range(2):
        faultpoints.hit("after_store")
        faultpoints.hit("after_compute")  # another point: not counted, never fires
    assert kills == []
    faultpoints.hit("after_store")
    assert kills == [(faultpoints.os.getpid(), signal.SIGKILL)]
    assert "faultpoint after_store:3" in capsys.readouterr().err
    faultpoints.hit("after_store")  # a fourth pass (only when the kill was not sent)
    assert len(kills) == 1
