"""Print corpus statistics: sizes, lengths, label prevalence, Fleiss' kappa, co-occurrence.

Also the cause layer (docs/causes.md): the lexical proxy's inter-personal share, and the
cause-type shares of stored LLM and human cause labels beside RECCON's published shares.

Example:
  etclib stats
  etclib stats --json > stats.json
"""

from __future__ import annotations

import argparse
import json

from etclib.cli import add_data_argument, add_json_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_argument(parser)
    parser.add_argument(
        "--db", metavar="FILE", help="corpus store (default: $ETC_STORE_DB or data/etc.duckdb)"
    )
    parser.add_argument(
        "--studies-db", metavar="FILE|URL", help="studies database (default: $ETC_STUDIES_DB)"
    )
    add_json_argument(parser)


def run(args: argparse.Namespace) -> int:
    from etclib.data import store
    from etclib.metrics import corpus_stats as stats
    from etclib.studies.causes import stats as cause_stats

    con = store.connect(args.db, args.data)
    result = stats.compute(con)
    result["causes"] = cause_stats.cause_stats(con, args.studies_db)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(stats.format_text(result))
        print()
        print(cause_stats.format_causes(result["causes"]))
    return 0
