"""The leaderboard package's import graph: no cycle, and the storage layer at the bottom."""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (requirements.txt)")

#: modules that use the database; ``leaderboard.db`` imports none of them
ABOVE_DB = (
    "queue",
    "scoring",
    "submit",
    "owners",
    "board",
    "entry",
    "worker",
    "admin",
    "baselines",
    "export",
    "migrate",
    "__main__",
)


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("leaderboard", include_external_packages=False)


def _inner(graph) -> list[str]:
    return sorted(m for m in graph.modules if m.startswith("leaderboard."))


def test_no_import_cycle_inside_leaderboard(graph):
    cycles = []
    modules = _inner(graph)
    for a in modules:
        for b in modules:
            if a < b and graph.chain_exists(a, b) and graph.chain_exists(b, a):
                cycles.append((a, b, graph.find_shortest_chain(a, b)))
    assert not cycles, cycles


@pytest.mark.parametrize("above", ABOVE_DB)
def test_db_depends_on_nothing_above_it(graph, above):
    assert not graph.chain_exists("leaderboard.db", f"leaderboard.{above}"), (
        graph.find_shortest_chain("leaderboard.db", f"leaderboard.{above}")
    )


def test_the_library_never_imports_the_leaderboard():
    lib = grimp.build_graph("etclib", "leaderboard", include_external_packages=False)
    assert not lib.chain_exists("etclib", "leaderboard", as_packages=True)


def test_migrations_are_applied_in_version_order():
    """A database at version N skips every migration <= N, so the list must be in strictly
    increasing order: a migration appended with a lower number would never run on an existing
    board (what two branches that each append one can produce)."""
    from leaderboard.migrations import MIGRATIONS, SCHEMA_VERSION

    versions = [v for v, _ in MIGRATIONS]
    assert versions == sorted(set(versions)), versions
    assert SCHEMA_VERSION == versions[-1]
