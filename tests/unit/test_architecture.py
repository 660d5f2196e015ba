"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and would catch a breach.

The contracts are checked by import-linter's own command (``lint-imports``, as ``make lint``
runs it): once on this checkout, and once on a copy of the packages with a deliberately bad
module added for every contract, which must break each of them and name the module.
"""

from __future__ import annotations

import tomllib

from tests.conftest import REPO

PACKAGES = ("etclib", "leaderboard", "views")


CONTRACTS = {
    c["id"]: c["name"]
    for c in tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "importlinter"
    ]["contracts"]
}


#: For each contract, modules that break it: {path relative to the root: source}.
BREACHES: dict[str, dict[str, str]] = {
    "layers": {"etclib/_breach_layers.py": "from views import text\n"},
    "etclib-alone": {"etclib/_breach_streamlit.py": "import streamlit\n"},
    "leaderboard-headless": {
        "leaderboard/_breach_site.py": "from views.text import escape_markdown\n"
    },
    "studiesdb-alone": {"etclib/studies/db.py": "from . import causes\n"},
    "acyclic-etclib": {
        "etclib/_breach_ring_a.py": "from . import _breach_ring_b\n",
        "etclib/_breach_ring_b.py": "def f():\n    from . import _breach_ring_a\n",
    },
    "acyclic-leaderboard": {
        "leaderboard/_breach_ring_a.py": "from . import _breach_ring_b\n",
        "leaderboard/_breach_ring_b.py": "from . import _breach_ring_a\n",
    },
    "acyclic-views": {
        "views/_breach_ring_a.py": "from . import _breach_ring_b\n",
        "views/_breach_ring_b.py": "from . import _breach_ring_a\n",
    },
}


def test_every_contract_has_a_breach_and_the_required_ones_exist():
    assert set(BREACHES) == set(CONTRACTS)
    assert {"layers", "etclib-alone", "leaderboard-headless"} <= set(CONTRACTS)
    assert {f"acyclic-{p}" for p in PACKAGES} <= set(CONTRACTS)
