"""Print corpus statistics: sizes, lengths, label prevalence, Fleiss' kappa, co-occurrence.

Example:
  etclib stats
  etclib stats --json > stats.json
"""

from __future__ import annotations

import argparse
import json

from . import add_data_argument, add_json_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_argument(parser)
    parser.add_argument(
        "--db", metavar="FILE", help="corpus store (default: $ETC_STORE_DB or data/etc.duckdb)"
    )
    add_json_argument(parser)


def run(args: argparse.Namespace) -> int:
    from .. import stats, store

    result = stats.compute(store.connect(args.db, args.data))
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(stats.format_text(result))
    return 0
