"""Progress bars on a terminal, silence elsewhere (pipes, CI, the site)."""

from __future__ import annotations

import os
import sys


def enabled() -> bool:
    if os.environ.get("ETC_PROGRESS") in ("0", "1"):
        return os.environ["ETC_PROGRESS"] == "1"
    return sys.stderr.isatty()


def counter(total: int, desc: str = ""):
    """A manual tqdm bar (``.update(n)``, ``.close()``) on stderr, disabled off a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False, disable=not enabled())
