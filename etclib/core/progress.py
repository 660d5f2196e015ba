"""Progress bars on a terminal, silence elsewhere (pipes, CI, the site)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def enabled() -> bool:
    if os.environ.get("ETC_PROGRESS") in ("0", "1"):
        return os.environ["ETC_PROGRESS"] == "1"
    return sys.stderr.isatty()


def bar(iterable: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm bar on stderr when it is a terminal."""
    if not enabled():
        yield from iterable
        return
    from tqdm import tqdm

    yield from tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False)


def counter(total: int, desc: str = ""):
    """A manual bar (``.update(n)``, ``.close()``) or a no-op object."""
    if enabled():
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, file=sys.stderr, leave=False)
    return _Silent()


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass
