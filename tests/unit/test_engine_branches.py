"""No engine branch outside the storage layer's dialect files.

Which engine a store setting names is decided by :func:`etclib.storage.dialect_for`, and what an
engine can do is asked of its dialect; a test of a URL or a name of an engine anywhere else is
the smell this test keeps out (the next engine would silently take the else branch).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The project's source (the tests may name engines: they parametrise over them).
SOURCES = ("etclib", "leaderboard", "views", "site_pages", "benchmarks", "streamlit_app.py")
#: Where engines are named: the storage layer (its dialect files and their connections).
ALLOWED = Path("etclib") / "storage"
BRANCH = re.compile(r"""\bis_server\b|\bis_url\b|["']postgres["']""")


def engine_branches(root: Path = ROOT) -> list[str]:
    """``path:line: text`` of every engine branch outside ``etclib/storage/``."""
    found = []
    for name in SOURCES:
        top = root / name
        files = [top] if top.is_file() else sorted(top.rglob("*.py"))
        for path in files:
            if path.is_relative_to(root / ALLOWED):
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if BRANCH.search(line):
                    found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    return found


def test_no_engine_branch_outside_the_dialect_files():
    assert engine_branches() == []


def test_the_check_finds_a_branch(tmp_path):
    """The grep itself sees each form of branch, and not one inside etclib/storage/."""
    (tmp_path / "etclib" / "storage").mkdir(parents=True)
    (tmp_path / "leaderboard").mkdir()
    (tmp_path / "leaderboard" / "a.py").write_text(
        "if serverdb.is_url(x):\n    pass\nok = 1\nengine = 'postgres'\n", encoding="utf-8"
    )
    (tmp_path / "streamlit_app.py").write_text("if db.is_server:\n    pass\n", encoding="utf-8")
    (tmp_path / "etclib" / "storage" / "b.py").write_text("is_url = 1\n", encoding="utf-8")
    assert engine_branches(tmp_path) == [
        "leaderboard/a.py:1: if serverdb.is_url(x):",
        "leaderboard/a.py:4: engine = 'postgres'",
        "streamlit_app.py:1: if db.is_server:",
    ]
