"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and would catch a breach.

The contracts are checked by import-linter's own command (``lint-imports``, as ``make lint``
runs it): once on this checkout, and once on a copy of the packages with a deliberately bad
module added for every contract, which must break each of them and name the module.
"""

from __future__ import annotations

from tests.fixtures.architecture import BREACHES, CONTRACTS, PACKAGES


def test_every_contract_has_a_breach_and_the_required_ones_exist():
    assert set(BREACHES) == set(CONTRACTS)
    assert {"layers", "etclib-alone", "leaderboard-headless"} <= set(CONTRACTS)
    assert {f"acyclic-{p}" for p in PACKAGES} <= set(CONTRACTS)
