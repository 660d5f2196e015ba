"""Export the public board, the published rows, or per-item scores as CSV or JSON.

Example:
  python -m leaderboard export --format csv --out board.csv
  python -m leaderboard export --track erc --format json --out categories.json
  python -m leaderboard export --what items --id 3f9c0a1b2d4e --format csv --out items.csv
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    from etclib.tracks import TRACKS

    track_help = "the board of this track: " + "; ".join(
        f"{t.name} ({t.title})" for t in TRACKS.values()
    )
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("--what", choices=("board", "reported", "items"), default="board")
    p.add_argument("--id", help="with --what items: one submission (default: every public one)")
    p.add_argument("--out", help="output file (default: standard output)")
    p.add_argument("--track", choices=list(TRACKS), help=track_help + " (default: the first)")


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb

    fn = lb.export_csv if args.format == "csv" else lb.export_json
    text = fn(args.what, submission_id=args.id, path=args.out, track=args.track)
    if args.out is None:
        sys.stdout.write(text)
    else:
        print(f"wrote {args.out} ({len(text.encode('utf-8')):,} bytes)")
    return 0
