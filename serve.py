"""Serve the site: ``streamlit run streamlit_app.py`` with the modules of the app and its pages
imported first, so the server's first visitor does not wait for them (like gunicorn's
``--preload``). Every option of ``streamlit run`` works the same. See docs/site.md."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path

APP = Path(__file__).with_name("streamlit_app.py")


def app_imports(*scripts: Path) -> list[str]:
    """The modules ``scripts`` (by default the app and its pages) import at their top level, in
    order, once each: those of ``from package import module`` too."""
    names: list[str] = []
    for script in scripts or (APP, *sorted(APP.parent.glob("site_pages/*.py"))):
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                names += [
                    f"{node.module}.{alias.name}"
                    for alias in node.names
                    if _is_module(f"{node.module}.{alias.name}")
                ]
    return list(dict.fromkeys(names))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # the parent is a module, not a package
        return False


def return_large_buffers(threshold: int = 1 << 20) -> bool:
    """Have glibc's malloc unmap freed buffers of ``threshold`` bytes or more at once."""
    import ctypes
    import ctypes.util

    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold = -3  # glibc's malloc.h
    return bool(mallopt(m_mmap_threshold, threshold))


def main(argv: list[str] | None = None) -> None:
    """Import the app's modules, then run ``streamlit run streamlit_app.py *argv``."""
    return_large_buffers()
    sys.path.insert(0, str(APP.parent))  # as `streamlit run` does for the script's folder
    for name in app_imports():
        importlib.import_module(name)
    from views import session_guard

    session_guard.install()  # before the first session's first message, not at its first run
    from streamlit.web import cli

    args = sys.argv[1:] if argv is None else argv
    cli.main(["run", str(APP), *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
