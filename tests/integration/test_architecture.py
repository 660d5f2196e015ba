"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and would catch a breach.

The contracts are checked by import-linter's own command (``lint-imports``, as ``make lint``
runs it): once on this checkout, and once on a copy of the packages with a deliberately bad
module added for every contract, which must break each of them and name the module.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fixtures.architecture import BREACHES, CONTRACTS, PACKAGES


def lint_imports(root: Path) -> tuple[int, str]:
    """Run ``lint-imports`` on every contract with ``root`` as the working directory."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
            "--config",
            str(root / "pyproject.toml"),
            "--no-cache",
            "--no-logo",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, proc.stdout + proc.stderr


def verdicts(output: str) -> dict[str, str]:
    """Contract name -> KEPT or BROKEN, from lint-imports' summary lines."""
    found = {}
    for name in CONTRACTS.values():
        m = re.search(rf"^{re.escape(name)} (KEPT|BROKEN)\b", output, flags=re.M)
        found[name] = m.group(1) if m else "missing"
    return found


@pytest.fixture(scope="module")
def checkout() -> tuple[int, str]:
    return lint_imports(REPO)


@pytest.fixture(scope="module")
def breached(tmp_path_factory) -> tuple[int, str]:
    root = tmp_path_factory.mktemp("breached")
    for package in PACKAGES:
        shutil.copytree(
            REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    for modules in BREACHES.values():
        for rel, source in modules.items():
            (root / rel).write_text(source, encoding="utf-8")
    return lint_imports(root)


@pytest.mark.parametrize("contract", list(CONTRACTS))
def test_contract_is_kept(checkout, contract):
    rc, output = checkout
    assert "Analyzed" in output, output  # the graph was built from this checkout's packages
    assert verdicts(output)[CONTRACTS[contract]] == "KEPT", output


@pytest.mark.parametrize("contract", list(CONTRACTS))
def test_contract_catches_its_breach(breached, contract):
    rc, output = breached
    assert rc != 0
    assert verdicts(output)[CONTRACTS[contract]] == "BROKEN", output
    # The contract's own report names the bad module (for a cycle: either end of it).
    assert Path(next(iter(BREACHES[contract]))).stem.rstrip("ab") in report(output, contract)


def report(output: str, contract: str) -> str:
    """The part of lint-imports' output that explains why ``contract`` is broken."""
    headers = {c: f"\n{n}\n{'-' * len(n)}\n" for c, n in CONTRACTS.items()}
    start = output.index(headers[contract]) + len(headers[contract])
    ends = [output.find(h, start) for c, h in headers.items() if c != contract]
    return output[start : min([e for e in ends if e >= 0], default=len(output))]
