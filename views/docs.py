"""Links from a page to the project's documentation, rendered where the repository is hosted.

A page speaks to a visitor; settings, commands and file paths live in ``docs/``. A page that
points there writes ``doc_link("causes.md", "how causes are annotated")``: a Markdown link to
``<repository>/blob/main/docs/causes.md``, never the bare path. The repository's address is the
``ETC_REPOSITORY_URL`` setting, else ``Repository`` under ``[project.urls]`` in pyproject.toml;
with neither, the link's words stay, as plain text, without a path the visitor cannot open.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BRANCH = "main"


@functools.cache
def _declared_repository() -> str | None:
    """``[project.urls] Repository`` of the checkout's pyproject.toml, if it declares one."""
    try:
        with open(ROOT / "pyproject.toml", "rb") as f:
            urls = tomllib.load(f).get("project", {}).get("urls", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return urls.get("Repository") or None


def repository_url() -> str | None:
    """Where the project's repository is hosted (no trailing slash), or None if not declared."""
    from etclib.config import setting

    url = setting("ETC_REPOSITORY_URL") or _declared_repository()
    return url.rstrip("/") if url else None


def doc_url(name: str) -> str | None:
    """The rendered ``docs/<name>`` (``name`` may carry a ``#section``) in the repository.

    Raises ``ValueError`` for a document that is not in ``docs/``: a page linking to a missing
    page is a bug to see in the tests, not a dead link for a visitor.
    """
    file = name.split("#", 1)[0]
    if not (DOCS / file).is_file():
        raise ValueError(f"docs/{file} does not exist: link to one of {sorted(_doc_names())}.")
    base = repository_url()
    return f"{base}/blob/{BRANCH}/docs/{name}" if base else None


def doc_link(name: str, label: str) -> str:
    """Markdown for a link labelled ``label`` to the rendered ``docs/<name>``; ``label`` alone
    when the repository's address is not declared."""
    url = doc_url(name)
    return f"[{label}]({url})" if url else label


def _doc_names() -> list[str]:
    return [p.name for p in DOCS.glob("*.md")]
