"""The published figures ship inside etclib, with their provenance (no ../shared needed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

from tests.conftest import REPO


def test_a_built_wheel_carries_the_figures(tmp_path):
    """What a user installs (not only this checkout) has both files."""
    src = tmp_path / "src"  # a copy: an in-tree build would leave build/ in the checkout
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for pkg in ("etclib", "leaderboard"):
        shutil.copytree(REPO / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("etclib-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "etclib/data/reference/paper_baselines.json" in names
    assert "etclib/data/reference/emplifai_judge_vs_human.json" in names
