"""Links from a page to the project's documentation (the hosted repository, else the site's own
Documentation page, which renders the checkout's file), and that reader."""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BRANCH = "main"
#: The URL path of the site's Documentation page (``site_pages/docs.py``).
READER = "docs"


@functools.cache
def _declared_repository() -> str | None:
    try:
        with open(ROOT / "pyproject.toml", "rb") as f:
            urls = tomllib.load(f).get("project", {}).get("urls", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return urls.get("Repository") or None


def repository_url() -> str | None:
    """Where the project's repository is hosted (no trailing slash), or None if not declared."""
    from etclib.core.config import setting

    url = setting("ETC_REPOSITORY_URL") or _declared_repository()
    return url.rstrip("/") if url else None


def doc_url(name: str) -> str | None:
    """The rendered ``docs/<name>`` in the repository; ``ValueError`` for a missing one."""
    file = name.split("#", 1)[0]
    if not (DOCS / file).is_file():
        raise ValueError(f"docs/{file} does not exist: link to one of {doc_names()}.")
    base = repository_url()
    return f"{base}/blob/{BRANCH}/docs/{name}" if base else site_url(name)


def site_url(name: str) -> str:
    """The site's own Documentation page showing ``docs/<name>`` (a URL relative to the site)."""
    file, _, anchor = name.partition("#")
    return f"{READER}?doc={quote(file)}" + (f"#{anchor}" if anchor else "")


def doc_link(name: str, label: str) -> str:
    """Markdown for a link labelled ``label`` to the rendered ``docs/<name>``."""
    return f"[{label}]({doc_url(name)})"


def doc_names() -> list[str]:
    """The documents the Documentation page can show: the ``.md`` files of ``docs/``."""
    return sorted(p.name for p in DOCS.glob("*.md"))


def doc_title(name: str) -> str:
    """A document's first heading (its file name when it has none)."""
    for line in (DOCS / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return name


#: Relative links to another document, an image of ``docs/img/``, a file outside ``docs/``.
_DOC_LINK = re.compile(r"\]\((?!https?://|#|mailto:)([\w.-]+\.md)(#[^)\s]*)?\)")
_IMAGE_LINE = re.compile(r"^\s*!\[([^\]]*)\]\((?!https?://)([\w./-]+)\)\s*$")
_OUTSIDE = re.compile(r"\[([^\]]*)\]\((?!https?://|#|mailto:)(\.\./[^)\s]+)\)")


def rendered(name: str) -> list[tuple[str, str | Path]]:
    """``docs/<name>`` as ("markdown", text) and ("image", path) parts, in order."""
    if name not in doc_names():
        raise ValueError(f"no document {name!r} in docs/")
    base = repository_url()

    def outside(m: re.Match) -> str:
        label, target = m.group(1), m.group(2).removeprefix("../")
        return f"[{label}]({base}/blob/{BRANCH}/{target})" if base else label

    parts: list[tuple[str, str | Path]] = []
    text: list[str] = []
    for line in (DOCS / name).read_text(encoding="utf-8").splitlines():
        image = _IMAGE_LINE.match(line)
        path = (DOCS / image.group(2)).resolve() if image else None
        if path is not None and path.is_file() and DOCS.resolve() in path.parents:
            parts.append(("markdown", "\n".join(text)))
            parts.append(("image", path))
            text = []
            continue
        line = _DOC_LINK.sub(lambda m: f"]({site_url(m.group(1) + (m.group(2) or ''))})", line)
        text.append(_OUTSIDE.sub(outside, line))
    parts.append(("markdown", "\n".join(text)))
    return [(kind, part) for kind, part in parts if kind == "image" or str(part).strip()]
