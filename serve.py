"""Serve the site: ``streamlit run streamlit_app.py`` with the modules of the app and its pages
imported first (like gunicorn's ``--preload``), then every page visited once by the server
itself, so that its first visitors do not wait for imports or for the pages' caches to fill.
Every option of ``streamlit run`` works the same. See docs/site.md."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
import threading
import time
import urllib.request
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


def local_url(timeout: float = 120.0) -> str | None:
    """The running server's own URL on this machine, once it answers its health check; None
    when it does not within ``timeout`` or listens on a Unix socket."""
    from streamlit import config
    from streamlit.runtime import Runtime

    deadline = time.monotonic() + timeout
    while not Runtime.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    address = config.get_option("server.address") or ""
    if address.startswith("unix://"):
        return None
    host = "127.0.0.1" if address in ("", "0.0.0.0", "::") else address
    host = f"[{host}]" if ":" in host else host
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    url = f"http://{host}:{config.get_option('server.port')}" + (f"/{base}" if base else "")
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as answer:
                if answer.status == 200:
                    return url
        except OSError:
            pass
        time.sleep(0.2)
    return None


def warm_up(url: str, timeout: float = 300.0) -> list[str]:
    """Visit every page of the site at ``url`` once, as a browser's first visit does (one
    session over Streamlit's websocket, each page's script run to its end), so that the caches
    they fill are filled; the pages' paths visited, Home's first ("")."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    stream = url.replace("http", "ws", 1) + "/_stcore/stream"
    visited: list[str] = []
    with connect(stream, subprotocols=["streamlit"], max_size=None, open_timeout=30) as ws:
        pending = [""]  # Home; the others as its navigation lists them
        while pending:
            page = pending.pop(0)
            msg = BackMsg()
            msg.rerun_script.page_name = page
            ws.send(msg.SerializeToString())
            while True:
                fwd = ForwardMsg.FromString(ws.recv(timeout=timeout))
                kind = fwd.WhichOneof("type")
                if kind == "navigation" and not visited:
                    pending += [p.url_pathname for p in fwd.navigation.app_pages if p.url_pathname]
                if kind == "script_finished" and (
                    fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                ):
                    break
            visited.append(page)
    return visited


def _warm_up_when_served() -> None:
    url = local_url()
    if url is None:
        print(
            "  Warm-up skipped: no answer on http from this server's health check",
            file=sys.stderr,
            flush=True,
        )
        return
    started = time.monotonic()
    try:
        pages = warm_up(url)
    except Exception as e:  # the site serves anyway; its first visitors wait instead
        print(f"  Warm-up stopped: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return
    took = time.monotonic() - started
    print(f"  Warmed up: {len(pages)} pages visited in {took:.1f} s", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    """Import the app's modules, then run ``streamlit run streamlit_app.py *argv``, visiting
    every page once as soon as the server answers (``ETC_WARM_UP=0``: not)."""
    return_large_buffers()
    sys.path.insert(0, str(APP.parent))  # as `streamlit run` does for the script's folder
    for name in app_imports():
        importlib.import_module(name)
    from views import session_guard

    session_guard.install()  # before the first session's first message, not at its first run
    if os.environ.get("ETC_WARM_UP", "1") != "0":
        threading.Thread(target=_warm_up_when_served, name="warm-up", daemon=True).start()
    from streamlit.web import cli

    args = sys.argv[1:] if argv is None else argv
    cli.main(["run", str(APP), *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
