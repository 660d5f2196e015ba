"""The provider SDK floors: one table (etclib.llm.sdk), the same in requirements.txt
and pyproject.toml, met by the installed SDKs; an SDK too old for a request says to upgrade."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from etclib.llm import sdk

REPO = Path(__file__).resolve().parents[2]


def _floors(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)", line)
        if m and m.group(1).lower() in sdk.FLOORS:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_requirements_and_pyproject_carry_the_floors_of_the_table():
    expected = {name: floor for name, (floor, _) in sdk.FLOORS.items()}
    requirements = (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert _floors(requirements) == expected
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert _floors(project["optional-dependencies"]["api"]) == expected


@pytest.mark.parametrize("package", sorted(sdk.FLOORS))
def test_the_installed_sdk_meets_its_floor(package):
    version = metadata.version(package)  # read independently of etclib.llm.sdk.installed
    floor = sdk.FLOORS[package][0]
    have = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    need = tuple(int(p) for p in floor.split("."))
    assert have >= need, f"{package} {version} < {floor}"
    assert not sdk.below_floor(package)


def test_the_installed_google_genai_takes_thinking_level():
    """The reason for the google-genai floor."""
    from google.genai import types

    assert "thinking_level" in types.ThinkingConfig.model_fields


@pytest.mark.parametrize(
    ("version", "below"),
    [("1.39.0", True), ("1.50.1", True), ("1.51.0", False), ("1.51", False), ("2.0.0rc1", False),
     ("3.6.1", False), ("1.9.0", True)],
)  # fmt: skip
def test_below_floor_compares_versions_as_numbers(version, below):
    assert sdk.below_floor("google-genai", version) is below


def _refused_field():
    return {"thinking_config": {"thinking_level": "low", "field_of_a_newer_sdk": 1}}


def test_an_old_sdk_refusing_a_field_says_to_upgrade(monkeypatch):
    from etclib.core.errors import DependencyError
    from etclib.llm.providers import gemini

    monkeypatch.setattr(sdk, "installed", lambda package: "1.39.0")
    with pytest.raises(DependencyError) as caught:
        gemini.sdk_config(_refused_field())
    message = str(caught.value)
    assert "google-genai 1.39.0" in message
    assert "upgrade google-genai to >= 1.51" in message
    assert "field_of_a_newer_sdk" in message  # the full cause, not cut
    assert "ValidationError" in message


def test_a_current_sdk_refusing_a_field_is_not_blamed_on_its_version():
    import pydantic

    from etclib.llm.providers import gemini

    with pytest.raises(pydantic.ValidationError):
        gemini.sdk_config(_refused_field())


def test_the_upgrade_hint_is_the_public_message_and_stops_the_judge(monkeypatch):
    from etclib import llm
    from etclib.judge.runner import classify as judge_action
    from etclib.llm.providers import gemini

    monkeypatch.setattr(sdk, "installed", lambda package: "1.39.0")
    try:
        gemini.sdk_config(_refused_field())
    except Exception as exc:  # noqa: BLE001 - the error under test
        err = exc
    fault = llm.classify(err)
    assert fault.kind == "sdk" and not fault.transient
    public = str(llm.failure(fault, provider="gemini", who="The gemini backend"))
    assert "upgrade google-genai to >= 1.51" in public
    assert judge_action(err)[0] == "fatal"
