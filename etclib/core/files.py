"""Writing files so that a crash leaves the old file or the new one, never half of either."""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write`` on a temporary file beside ``path``, then rename it to ``path``
    (:class:`~etclib.core.errors.OutputError` when it cannot be written there). The file keeps
    the mode of the one it replaces, a new one the umask's, not a temporary file's ``0o600``."""
    from etclib.core.errors import OutputError

    shown = os.fspath(path) or '""'
    path = Path(path)
    if not os.fspath(path).strip() or path.is_dir():
        raise OutputError(f"{shown} is a folder, not a file: give the file to write.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = None
        fd, tmp = _new_beside(path)
    except OSError as exc:
        raise _cannot(shown, exc) from None
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _cannot(shown, exc) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    """:func:`write_atomic` of ``text`` in UTF-8."""
    data = text.encode("utf-8")
    return write_atomic(path, lambda f: f.write(data))


def _cannot(shown: str, exc: OSError) -> Exception:
    from etclib.core.errors import OutputError

    return OutputError(
        f"Cannot write {shown} ({exc.strerror or exc}): give a file in a folder you can write to."
    )


def _new_beside(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, opened for writing with mode 0o666 (the kernel
    takes the umask off, as for any new file)."""
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
