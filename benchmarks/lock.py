"""Write ``requirements.lock``: every package of this environment (``pip freeze``), pinned, in two
halves of about equal installed size, which ``make install`` installs side by side.

A new venv's ``pip install -r requirements.txt`` is one process on one core: about 16 s of
resolving (reading the index pages of 140 packages) and 15 s of unpacking, 32 s on a two-core
machine. With every version pinned, nothing is left to resolve between the packages
(``--no-deps``), so two pips can each install one half at once: 17 s (benchmarks/results.md).
The Makefile then runs the usual ``pip install -r requirements.txt``, which finds everything
installed (or installs what a stale lock missed), so requirements.txt stays what decides.

Run after changing requirements.txt, from an environment installed from it:

    make lock            # = .venv/bin/python benchmarks/lock.py > requirements.lock

``tests/unit/test_lock.py`` checks that the lock pins a version of every requirement that satisfies it.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata

#: The line between the two halves (the Makefile splits the file at it).
SECOND_HALF = "# second half"


def installed_size(name: str) -> int:
    """Bytes the distribution ``name`` installed (its RECORD's sizes; 0 when unknown)."""
    try:
        files = metadata.distribution(name).files or []
    except metadata.PackageNotFoundError:
        return 0
    return sum(f.size or 0 for f in files)


def halves(pins: list[str]) -> tuple[list[str], list[str]]:
    """``pins`` (``name==version``) in two lists of about equal installed size: the largest
    first, each to the lighter half so far."""
    size = {pin: installed_size(pin.split("==")[0]) for pin in pins}
    parts: tuple[list[str], list[str]] = ([], [])
    weight = [0, 0]
    for pin in sorted(pins, key=lambda pin: (-size[pin], pin)):
        side = 0 if weight[0] <= weight[1] else 1
        parts[side].append(pin)
        weight[side] += size[pin]
    return sorted(parts[0], key=str.lower), sorted(parts[1], key=str.lower)


def main() -> None:
    frozen = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pins = [line for line in frozen.splitlines() if "==" in line and not line.startswith("#")]
    first, second = halves(pins)
    print(
        "# Every package `make install` installs, pinned (pip freeze of an environment installed\n"
        "# from requirements.txt), for the two side-by-side pips of `make install`; written by\n"
        f"# `make lock` (benchmarks/lock.py) on {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}.\n"
        "# requirements.txt decides: `make install` runs its `pip install -r requirements.txt`\n"
        "# after these, and a machine these pins do not fit (another platform, another torch\n"
        "# build) installs from requirements.txt alone."
    )
    print("\n".join(first))
    print(SECOND_HALF)
    print("\n".join(second))


if __name__ == "__main__":
    main()
