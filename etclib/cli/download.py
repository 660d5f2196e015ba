"""Download the public ETC corpus (pinned commit) into DIR/ETCDataset.

Prints the folder to use as ETC_DATA_DIR. The dataset is CC BY-NC 4.0: see its README.
Set ETC_DATASET_URL to fetch the archive from a mirror.

Example:
  etclib download                    # into data/ETCDataset
  etclib download --dest ~/corpora
  export ETC_DATA_DIR=$(etclib download --quiet)
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dest", default="data", help="parent folder (default: data)")
    parser.add_argument("--force", action="store_true", help="download again even if present")
    parser.add_argument("--quiet", action="store_true", help="print only the corpus folder")


def run(args: argparse.Namespace) -> int:
    from etclib.data.download import download

    path = download(args.dest, force=args.force, quiet=args.quiet)
    print(path)
    return 0
