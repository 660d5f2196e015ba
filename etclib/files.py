"""Writing files so that a crash leaves the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write`` on a temporary file beside ``path``, then rename it to ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
