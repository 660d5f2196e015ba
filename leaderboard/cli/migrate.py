"""Copy a board into another database and check the copy.

Copies the board at --from (default ETC_LEADERBOARD_DB; a board file of an earlier, DuckDB
version is read as it is) into --to (a postgresql:// URL, or a SQLite file): every submission,
prediction, score, per-item row, job, status and log row, in one transaction; then compares
each table's row count and SHA-256 on both sides and prints them. A target holding rows is
refused unless --replace. Afterwards point ETC_LEADERBOARD_DB at the target (docs/deploy.md).

Examples:
  python -m leaderboard migrate --to postgresql://etc:PASSWORD@db.example.org/etc
  python -m leaderboard migrate --from data/leaderboard.duckdb --to data/leaderboard.sqlite
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source", help="the board to copy (default $ETC_LEADERBOARD_DB)")
    p.add_argument(
        "--to", required=True, help="postgresql://USER:PASSWORD@HOST[:PORT]/DATABASE, or a file"
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="delete the target's leaderboard rows first (otherwise a non-empty target is refused)",
    )


def run(args: argparse.Namespace) -> int:
    from leaderboard import settings
    from leaderboard.errors import LeaderboardError
    from leaderboard.migrate import migrate

    report = migrate(settings.db_target(args.source), args.to, replace=args.replace)
    print(report.text())
    if not report.ok:
        raise LeaderboardError(
            f"The copy differs from this board in: {', '.join(report.differing)}. Do not switch "
            "ETC_LEADERBOARD_DB to it; run migrate again with --replace, and report the "
            "difference if it stays."
        )
    return 0
