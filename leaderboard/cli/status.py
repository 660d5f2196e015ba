"""Show a submission's status, pending metrics and history.

Example:
  python -m leaderboard status 3f9c0a1b2d4e --json
"""

from __future__ import annotations

import argparse
import json

from .text import clip


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb

    st = lb.status(args.id)
    if args.json:
        print(json.dumps(st, ensure_ascii=False, indent=2, default=str))
        return 0
    print(f"{st['id']}  {clip(st['name'], 60)}  [{st['kind']}, {st['visibility']}]")
    print(f"status: {st['status']}" + (f"  ({st['message']})" if st["message"] else ""))
    if st["queue_position"]:
        print(f"queue position: {st['queue_position']}")
    for w in st["warnings"]:
        print(f"warning: {w}")
    for h in st["history"]:
        print(f"  {h['at']:%Y-%m-%d %H:%M:%S}  {h['status']:<16} {clip(h['message'], 100)}")
    return 0
