"""The provider SDK versions etclib needs, and the error for an SDK that is too old.

An SDK's own validation error for a request etclib built is reported by :func:`too_old` as
:class:`~etclib.core.errors.DependencyError` ("upgrade google-genai to >= 1.51") when the
installed version is below its floor (``tests/unit/test_sdk_floors.py`` checks the floors match
requirements.txt and pyproject.toml).
"""

from __future__ import annotations

from importlib import metadata

from etclib.core.errors import DependencyError

#: package -> (lowest version etclib works with, what needs it), filled by the provider registry
#: (:mod:`etclib.llm.providers`) from each spec's ``package`` and ``sdk_floor``.
FLOORS: dict[str, tuple[str, str]] = {}


def install(package: str, floor: str, needs: str) -> None:
    """Add ``package``'s floor (the provider registry calls this for every spec)."""
    FLOORS[package] = (floor, needs)


def _key(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split("."):
        out.append(int("".join(ch for ch in part if ch.isdigit()) or 0))
        if not part.isdigit():  # a pre-release or local part ends the comparison
            break
    return tuple(out)


def installed(package: str) -> str | None:
    """The installed version of ``package``, or None."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def below_floor(package: str, version: str | None = None) -> bool:
    """Whether ``version`` (default: the installed one) is below ``package``'s floor."""
    version = version if version is not None else installed(package)
    if version is None:
        return False
    return _key(version) < _key(FLOORS[package][0])


def upgrade_hint(package: str) -> str:
    """``upgrade google-genai to >= 1.51 (pip install -U 'google-genai>=1.51')``."""
    floor = FLOORS[package][0]
    return f"upgrade {package} to >= {floor} (pip install -U '{package}>={floor}')"


def too_old(package: str, exc: BaseException, version: str | None = None) -> DependencyError | None:
    """The error to raise for the SDK's own validation error ``exc`` when the installed
    ``package`` is below its floor (the likely cause), else None. The full cause is kept."""
    version = version if version is not None else installed(package)
    if not below_floor(package, version):
        return None
    floor, needs = FLOORS[package]
    err = DependencyError(
        f"{package} {version} refused a request etclib built ({needs} needs {package} >= "
        f"{floor}): {upgrade_hint(package)}. Cause: {type(exc).__name__}: {exc}"
    )
    err.upgrade = upgrade_hint(package)  # type: ignore[attr-defined]
    return err
