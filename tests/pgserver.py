"""A real PostgreSQL server for the tests: Debian's binaries, a throw-away cluster, loopback.

``make test`` installs Debian's ``postgresql`` package when it is missing and the machine permits
it (``make postgres``). The tests find its binaries (``ETC_PG_BINDIR``, else the newest
``/usr/lib/postgresql/*/bin``, else ``pg_ctl`` on the PATH) and start one server per test session
in a temporary directory, listening on 127.0.0.1 on a free port; each test gets a database of its
own (:func:`PgServer.new_database`), dropped afterwards. Without the binaries, the tests that need
the server skip and say why.

Why not pytest-postgresql: PostgreSQL refuses to run as root, and CI runs as root; the cluster
must then belong to an unprivileged user (Debian's ``postgres``) and its directory must be one
that user can reach, which is what :class:`PgServer` arranges (``runuser``) and that plugin
does not.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

SERVER_USER = "postgres"


def bindir() -> Path | None:
    """Where ``initdb``, ``pg_ctl`` and ``postgres`` are, or None when PostgreSQL is missing."""
    explicit = os.environ.get("ETC_PG_BINDIR")
    if explicit:
        return Path(explicit) if (Path(explicit) / "pg_ctl").exists() else None
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found else None


def why_unavailable() -> str | None:
    """None when a server can be started here, else the reason (for ``pytest.skip``)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -r requirements.txt)"
    if bindir() is None:
        return (
            "PostgreSQL's server binaries are missing: `make postgres` installs Debian's "
            "postgresql package (needs root or passwordless sudo), or set ETC_PG_BINDIR"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return f"running as root and there is no '{SERVER_USER}' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and `runuser` (util-linux) is missing"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """One PostgreSQL cluster in a temporary directory, on 127.0.0.1:``port``."""

    def __init__(self) -> None:
        self.bin = bindir()
        self.port = _free_port()
        # Not under pytest's tmp_path: as root that is 0700, out of the server user's reach.
        self.root = Path(tempfile.mkdtemp(prefix="etc-pg-"))
        self.data = self.root / "data"
        self.user = "etc"
        self.password = "etc-test-password"
        self._as_root = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", SERVER_USER, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> PgServer:
        if self._as_root:
            entry = pwd.getpwnam(SERVER_USER)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as_root:
            os.chown(pwfile, pwd.getpwnam(SERVER_USER).pw_uid, -1)
        self._run(
            "initdb", "-D", str(self.data), "-U", self.user, f"--pwfile={pwfile}",
            "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.root} -c fsync=off -c full_page_writes=off "
            "-c synchronous_commit=off -c max_connections=200"
        )
        proc = self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
            "-o", options, "-w", "-t", "60", "start", check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"PostgreSQL did not start: {proc.stderr}\n{log}")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database and return its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(self.url(), autocommit=True) as con,
        ):
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)
