"""requirements.lock (benchmarks/lock.py, ``make lock``) fits requirements.txt: a pin for every
requirement, satisfying it, in one of the two halves that ``make install`` installs side by side."""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from benchmarks.lock import SECOND_HALF
from tests.conftest import REPO


def lines(path) -> list[str]:
    return [ln.split("#")[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]


def halves() -> tuple[dict[str, Version], dict[str, Version]]:
    text = (REPO / "requirements.lock").read_text(encoding="utf-8")
    first, _, second = text.partition(f"\n{SECOND_HALF}\n")
    parts = []
    for part in (first, second):
        pins = [ln for ln in part.splitlines() if ln and not ln.startswith("#")]
        parts.append({canonicalize_name(p.split("==")[0]): Version(p.split("==")[1]) for p in pins})
    return parts[0], parts[1]


def test_the_lock_pins_every_requirement_with_a_version_it_accepts():
    first, second = halves()
    assert first and second, "two halves, at the line the Makefile splits at"
    assert not first.keys() & second.keys(), "a package in both halves: two pips would race"
    pins = {**first, **second}
    unfit = []
    for line in lines(REPO / "requirements.txt"):
        if not line:
            continue
        req = Requirement(line)
        if req.marker and not req.marker.evaluate():
            continue
        pin = pins.get(canonicalize_name(req.name))
        if pin is None or not req.specifier.contains(pin, prereleases=True):
            unfit.append(f"{line} (locked: {pin})")
    assert not unfit, f"run `make lock` after changing requirements.txt: {unfit}"


def test_a_lock_that_misses_a_requirement_is_caught(tmp_path, monkeypatch):
    """The check above can fail: a requirement the lock pins at a version it refuses."""
    import tests.test_lock as mod

    fake = tmp_path / "repo"
    fake.mkdir()
    (fake / "requirements.txt").write_text("torch==2.13.0\nstreamlit>=1.50\n", encoding="utf-8")
    (fake / "requirements.lock").write_text(
        f"# header\ntorch==2.12.0\n{SECOND_HALF}\nstreamlit==1.67.0\n", encoding="utf-8"
    )
    monkeypatch.setattr(mod, "REPO", fake)
    try:
        mod.test_the_lock_pins_every_requirement_with_a_version_it_accepts()
    except AssertionError as exc:
        assert "torch==2.13.0 (locked: 2.12.0)" in str(exc)
    else:
        raise AssertionError("a lock pinning torch 2.12.0 for torch==2.13.0 passed")
