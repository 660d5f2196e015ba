"""Move the judge-vs-human studies database from its file (SQLite, or an older DuckDB one)
into PostgreSQL.

`etclib studies migrate --to URL` copies every study table (Study 2's judge decisions,
annotators, sample and answers; the judge-labels runs; the causes runs, labels and sample) of
the studies file (--from, default $ETC_STUDIES_DB or data/studies.sqlite) into the PostgreSQL
database at URL, in one transaction, then compares each table's row count and SHA-256 on both
sides. A target whose study tables hold rows is refused unless --replace. Stop the site and
the workers first (they hold the file open), then point ETC_STUDIES_DB at the URL.
See docs/deploy.md.

Example:
  etclib studies migrate --to postgresql://etc:PASSWORD@db.example.org/etc
  etclib studies migrate --from data/studies.sqlite --to postgresql://... --replace
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser(
        "migrate",
        help="copy the studies file into PostgreSQL, with counts and checksums compared",
    )
    p.add_argument("--to", required=True, metavar="URL", help="postgresql://USER:PASSWORD@HOST/DB")
    p.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help=(
            "the studies file, SQLite or an older DuckDB one (default: $ETC_STUDIES_DB, "
            "else data/studies.sqlite)"
        ),
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="delete the study rows the target already holds and copy in their place",
    )


def run(args: argparse.Namespace) -> int:
    from .. import config
    from ..errors import StoreError
    from ..studies import db as studiesdb

    source = args.source or config.studies_db()
    report = studiesdb.migrate(source, args.to, replace=args.replace)
    print(report.text())
    if not report.ok:
        raise StoreError(
            f"The copy differs from the file in: {', '.join(report.differing)}. Do not switch "
            "ETC_STUDIES_DB to it; run the migration again with --replace, and report the "
            "difference if it stays."
        )
    return 0
