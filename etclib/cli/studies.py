"""Copy the judge-vs-human studies database into another: a PostgreSQL server, or a SQLite file.

`etclib studies migrate --to TARGET` copies every study table (Study 2's judge decisions,
annotators, sample and answers; the judge-labels runs; the causes runs, labels and sample) of
the studies database (--from, default $ETC_STUDIES_DB or data/studies.sqlite; a studies file of
an earlier, DuckDB version is read as it is) into TARGET, in one transaction, then compares each
table's row count and SHA-256 on both sides. A target whose study tables hold rows is refused
unless --replace. Stop the site and the workers first, then point ETC_STUDIES_DB at the target.
See docs/deploy.md.

Example:
  etclib studies migrate --to postgresql://etc:PASSWORD@db.example.org/etc
  etclib studies migrate --from data/studies.sqlite --to postgresql://... --replace
  etclib studies migrate --from data/studies.duckdb --to data/studies.sqlite
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser(
        "migrate",
        help="copy the studies into another database, with counts and checksums compared",
    )
    p.add_argument(
        "--to",
        required=True,
        metavar="TARGET",
        help="postgresql://USER:PASSWORD@HOST/DB, or a file",
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="SOURCE",
        help=(
            "the studies database, or an older DuckDB file (default: $ETC_STUDIES_DB, "
            "else data/studies.sqlite)"
        ),
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="delete the study rows the target already holds and copy in their place",
    )


def run(args: argparse.Namespace) -> int:
    from etclib.core.errors import StoreError
    from etclib.studies import db as studiesdb

    report = studiesdb.migrate(args.source, args.to, replace=args.replace)
    print(report.text())
    if not report.ok:
        raise StoreError(
            f"The copy differs from the source in: {', '.join(report.differing)}. Do not switch "
            "ETC_STUDIES_DB to it; run the migration again with --replace, and report the "
            "difference if it stays."
        )
    return 0
