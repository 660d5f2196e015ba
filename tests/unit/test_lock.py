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


def halves(repo) -> tuple[dict[str, Version], dict[str, Version]]:
    text = (repo / "requirements.lock").read_text(encoding="utf-8")
    first, _, second = text.partition(f"\n{SECOND_HALF}\n")
    parts = []
    for part in (first, second):
        pins = [ln for ln in part.splitlines() if ln and not ln.startswith("#")]
        parts.append({canonicalize_name(p.split("==")[0]): Version(p.split("==")[1]) for p in pins})
    return parts[0], parts[1]


def unfit(repo) -> list[str]:
    """The requirements of ``repo``'s requirements.txt (their markers true here) that its lock
    pins at no version they accept, as "requirement (locked: version)"."""
    pins = {k: v for half in halves(repo) for k, v in half.items()}
    found = []
    for line in lines(repo / "requirements.txt"):
        if not line:
            continue
        req = Requirement(line)
        if req.marker and not req.marker.evaluate():
            continue
        pin = pins.get(canonicalize_name(req.name))
        if pin is None or not req.specifier.contains(pin, prereleases=True):
            found.append(f"{line} (locked: {pin})")
    return found


def test_the_lock_pins_every_requirement_with_a_version_it_accepts():
    first, second = halves(REPO)
    assert first and second, "two halves, at the line the Makefile splits at"
    assert not first.keys() & second.keys(), "a package in both halves: two pips would race"
    assert not unfit(REPO), f"run `make lock` after changing requirements.txt: {unfit(REPO)}"


def test_a_lock_that_misses_a_requirement_is_caught(tmp_path):
    """The check above can fail: a requirement the lock pins at a version it refuses."""
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\nstreamlit>=1.50\n", encoding="utf-8")
    (tmp_path / "requirements.lock").write_text(
        f"# header\ntorch==2.12.0\n{SECOND_HALF}\nstreamlit==1.67.0\n", encoding="utf-8"
    )
    assert unfit(tmp_path) == ["torch==2.13.0 (locked: 2.12.0)"]
