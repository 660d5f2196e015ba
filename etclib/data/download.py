"""Fetch the public ETC corpus at its pinned commit, for users who have none.

The archive (a GitHub tarball, or ``ETC_DATASET_URL``) is downloaded to a temporary file,
extracted member by member with path checks (no absolute paths, no ``..``, no links), checked by
loading it, and only then moved into place, so an interrupted download leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path, PurePosixPath

from etclib.core import config
from etclib.data.corpus import check_root, load_corpus
from etclib.core.errors import DataError, DownloadError

TIMEOUT_S = 60


def _fetch(url: str, dest: Path, quiet: bool) -> None:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp, open(dest, "wb") as out:
            total = int(resp.headers.get("Content-Length") or 0)
            done = 0
            while chunk := resp.read(1 << 16):
                out.write(chunk)
                done += len(chunk)
                if not quiet and sys.stderr.isatty():
                    shown = f"{done / 1e6:.1f} MB" + (f" of {total / 1e6:.1f} MB" if total else "")
                    print(f"\rdownloading {shown}", end="", file=sys.stderr)
        if not quiet and sys.stderr.isatty():
            print(file=sys.stderr)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(
            f"Cannot download the ETC corpus from {url}: {reason}. Check the network, or set "
            "ETC_DATASET_URL to a reachable copy of the archive, or point ETC_DATA_DIR at a "
            "local copy of the corpus."
        ) from None


def _extract(archive: Path, into: Path) -> Path:
    """Extract safely; return the folder that holds ``etc/``."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            for m in tar.getmembers():
                p = PurePosixPath(m.name)
                if p.is_absolute() or ".." in p.parts:
                    raise DownloadError(f"Refusing archive member with unsafe path: {m.name}")
                if not (m.isfile() or m.isdir()):
                    continue
                target = into / p
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(m)
                if src is None:
                    continue
                with src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
    except tarfile.TarError as exc:
        raise DownloadError(f"The downloaded file is not a valid tar archive: {exc}") from None
    candidates = [into] + [d for d in into.iterdir() if d.is_dir()]
    for c in candidates:
        if (c / "etc" / "dialogues").is_dir():
            return c
    raise DownloadError("The archive holds no etc/dialogues folder: is it the ETC dataset?")


def download(dest: str | os.PathLike = "data", force: bool = False, quiet: bool = False) -> Path:
    """Download and unpack the corpus into ``dest/ETCDataset``; return its ``etc`` folder."""
    dest = Path(dest)
    final = dest / "ETCDataset"
    if final.exists() and not force:
        try:
            check_root(final / "etc")
            if not quiet:
                print(f"already present: {final / 'etc'}", file=sys.stderr)
            return (final / "etc").resolve()
        except DataError:
            pass  # incomplete: download again
    url = config.setting("ETC_DATASET_URL") or config.DATASET_URL
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".download-") as tmp:
        archive = Path(tmp) / "etc.tar.gz"
        _fetch(url, archive, quiet)
        root = _extract(archive, Path(tmp) / "x")
        try:
            load_corpus(root / "etc")
        except DataError as exc:
            raise DownloadError(f"The downloaded corpus does not load: {exc}") from None
        if final.exists():
            shutil.rmtree(final)
        os.replace(root, final)
    return (final / "etc").resolve()
