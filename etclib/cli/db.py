"""Build (or check) the DuckDB corpus store used by the site and `etclib stats`.

The store is rebuilt only when the corpus files change.

Example:
  etclib db                 # build data/etc.duckdb if missing or stale, print its path
  etclib db --db /tmp/etc.duckdb --data ../shared/ETCDataset/etc
"""

from __future__ import annotations

import argparse

from etclib.cli import add_data_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", metavar="FILE", help="store file (default: $ETC_STORE_DB or data/etc.duckdb)"
    )
    add_data_argument(parser)


def run(args: argparse.Namespace) -> int:
    from etclib.data import store

    print(store.ensure(args.db, args.data))
    return 0
