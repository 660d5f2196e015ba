"""Serve the site: Streamlit's ``streamlit run streamlit_app.py``, with the site's own modules
imported before the server takes its first visitor.

Streamlit imports a site's code only when a visitor's session first runs the script, so the
first visitor of a new server would wait for pandas and the leaderboard to import. This launcher
imports what ``streamlit_app.py`` imports, as gunicorn's ``--preload`` does, then hands over to
Streamlit's command line; every option of ``streamlit run`` works the same
(``python serve.py --server.port 8501 --server.headless true``). It also has glibc's malloc
return every freed buffer of 1 MiB or more to the system at once (:func:`return_large_buffers`),
so an upload's memory is not kept in the heap after it is freed (benchmarks/visitor_memory.py).
See docs/site.md.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

APP = Path(__file__).with_name("streamlit_app.py")


def app_imports(script: Path = APP) -> list[str]:
    """The modules ``script`` imports at its top level, in its order."""
    names: list[str] = []
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def return_large_buffers(threshold: int = 1 << 20) -> bool:
    """Have glibc's malloc map every buffer of ``threshold`` bytes or more on its own and unmap
    it when freed (a fixed ``M_MMAP_THRESHOLD`` also stops glibc from raising it as buffers are
    freed); False where the C library is not glibc."""
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
