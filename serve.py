"""Serve the site: Streamlit's ``streamlit run streamlit_app.py``, with the site's own modules
imported before the server takes its first visitor.

Streamlit imports a site's code only when a visitor's session first runs the script, so the
first visitor of a new server waits for pandas and the leaderboard to import: about 0.45 s of
Home's 2.1 s first render on a quiet two-core machine (benchmarks/site.py). This launcher
imports what ``streamlit_app.py`` imports (read from its import statements: every page run
starts there) and then hands over to Streamlit's own command line, as gunicorn's ``--preload``
does for a WSGI application. Every option of ``streamlit run`` works the same:

    python serve.py --server.port 8501 --server.headless true

``streamlit run streamlit_app.py`` serves the same site; its first visitor waits longer.
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


def main(argv: list[str] | None = None) -> None:
    """Import the app's modules, then run ``streamlit run streamlit_app.py *argv``."""
    sys.path.insert(0, str(APP.parent))  # as `streamlit run` does for the script's folder
    for name in app_imports():
        importlib.import_module(name)
    from streamlit.web import cli

    args = sys.argv[1:] if argv is None else argv
    cli.main(["run", str(APP), *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
