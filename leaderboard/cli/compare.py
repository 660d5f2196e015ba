"""Compare two stored entries (B − A) from the scores stored for each item, no re-scoring.

Per metric: both scores, B − A, its paired bootstrap 95% interval over items (the board's
resamples and seed), the paired approximate-randomization p-value and the verdict "A better" /
"no significant difference" / "B better" at alpha 0.05: what the site's comparison page shows
and `etclib compare A.jsonl B.jsonl` prints for the two files. --json: the shape of `etclib
compare --json`.

Example:
  python -m leaderboard compare 3f9c0a1b2d4e 9a8b7c6d5e4f
  python -m leaderboard compare 3f9c0a1b2d4e 9a8b7c6d5e4f --json --per-item items.jsonl
"""

from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", help="entry A's id")
    p.add_argument("b", help="entry B's id (the difference is B − A)")
    p.add_argument("--metrics", help="comma-separated metric groups (default: all both have)")
    p.add_argument("--trials", type=int, help="randomization trials (default 10000)")
    p.add_argument("--per-item", metavar="OUT", help="write one JSON line per item")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    from etclib.tracks.comparison import format_text, write_per_item
    from leaderboard.compare import compare

    result = compare(args.a, args.b, metrics=args.metrics, trials=args.trials)
    if args.per_item:
        write_per_item(result, args.per_item)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        print(format_text(result))
    return 0
