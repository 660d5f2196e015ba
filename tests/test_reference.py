"""The published figures ship inside etclib, with their provenance (no ../shared needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile

import pytest

from etclib import reference
from tests.conftest import REPO

METRICS = "bleu1 bleu2 bleu3 bleu4 rouge1 rouge2 rougeL bertscore precision recall f1".split()


def test_paper_baselines_are_shipped_with_provenance(monkeypatch):
    monkeypatch.delenv("ETC_REFERENCE_DIR", raising=False)
    assert reference.reference_dir() == reference.PACKAGED
    data = json.loads(reference.path(reference.PAPER_BASELINES).read_text("utf-8"))
    prov = data["provenance"]
    assert "LREC 2026" in prov["paper"] and len(prov["tables"]) == 2
    assert "five dialogues" in prov["corpus_version"] and "tokenisation" in data["provenance"]
    assert len(data["rows"]) == 5
    for row in data["rows"]:
        for key in METRICS:
            assert 0 <= row[key] <= 100, (row["model"], key)
            assert data["units"][key] == "x100"
    assert {r["setting"] for r in data["rows"]} >= {"zero-shot", "4-shot"}


def test_reference_dir_override(tmp_path, monkeypatch):
    monkeypatch.setenv("ETC_REFERENCE_DIR", str(tmp_path))
    assert reference.path(reference.EMPLIFAI) == tmp_path / reference.EMPLIFAI


@pytest.mark.slow
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
    assert "etclib/reference/paper_baselines.json" in names
    assert "etclib/reference/emplifai_judge_vs_human.json" in names
