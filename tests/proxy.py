"""A tiny reverse proxy for tests: what docs/deploy.md asks of the proxy in front of the site.

It listens on 127.0.0.1 and forwards each connection to the site (websockets included: after
the request head it only copies bytes), replacing any ``X-Forwarded-For`` a client sent with
the client address it was told (``client``: one listener per simulated visitor, since every
test client connects from 127.0.0.1; None: pass the client's header on as it is, as a tunnel
or a proxy not told to replace it does), and refusing ``/_stcore/metrics`` (404) as the deploy
recipe's rule does. A plain request gets ``Connection: close``, so the next request on that
connection cannot bypass the header rewrite.

>>> with ReverseProxy("127.0.0.1", 8501, client="203.0.113.7") as url:   # doctest: +SKIP
...     urllib.request.urlopen(url + "/_stcore/health")
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from typing import Any

#: Paths the proxy answers 404 for (docs/deploy.md, "The proxy in front of the site").
BLOCKED = re.compile(r"^/_stcore/metrics(?:[/?]|$)")
_HOP = re.compile(rb"^(connection|forwarded):", re.IGNORECASE)
_XFF = re.compile(rb"^x-forwarded-for:", re.IGNORECASE)


class ReverseProxy:
    """Forward 127.0.0.1:<port> to ``host``:``port`` as a proxy that saw ``client``."""

    def __init__(self, host: str, port: int, client: str | None) -> None:
        self.upstream = (host, port)
        self.client = client
        self.port = 0
        #: request lines forwarded, and those refused
        self.forwarded: list[str] = []
        self.refused: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: Any = None

    def __enter__(self) -> str:
        self._thread.start()
        self._ready.wait(10)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._server.close()
            self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        lines = head[:-4].split(b"\r\n")
        request = lines[0].decode("latin-1")
        path = request.split(" ")[1] if request.count(" ") >= 2 else "/"
        if BLOCKED.match(path):
            self.refused.append(request)
            writer.write(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()
            return
        upgrade = any(line.lower().startswith(b"upgrade:") for line in lines[1:])
        replace = self.client is not None
        kept = [ln for ln in lines[1:] if not (_HOP.match(ln) or (replace and _XFF.match(ln)))]
        if replace:
            kept.append(f"X-Forwarded-For: {self.client}".encode())
        kept.append(b"Connection: Upgrade" if upgrade else b"Connection: close")
        self.forwarded.append(request)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        up_writer.write(b"\r\n".join([lines[0], *kept]) + b"\r\n\r\n")
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()
