"""Add the published baselines and the computed ones, and score them.

The published rows are the paper's (reported); the computed ones are retrieval, constant and
copy, and on the categories track majority, prior, tfidf and retrieval-labels (scored here).
Idempotent.

Example:
  python -m leaderboard seed-baselines
  python -m leaderboard seed-baselines --no-reported --backends copy
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    from etclib.tracks import TRACKS

    p.add_argument("--no-reported", action="store_true", help="skip the published rows")
    for t in TRACKS.values():
        p.add_argument(
            f"--{t.tagged('backends')}",
            dest=f"backends_{t.name}",
            default=",".join(t.baselines),
            help=f"computed baselines of the {t.title} track (comma-separated; empty for none; "
            f"default: {','.join(t.baselines)})",
        )
    p.add_argument("--no-score", action="store_true", help="only queue them")


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb
    from etclib.tracks import TRACKS

    options = [getattr(args, f"backends_{t}") for t in TRACKS]  # one option per track
    backends = [b.strip() for option in options for b in option.split(",") if b.strip()]
    out = lb.seed_baselines(
        reported=not args.no_reported,
        computed=bool(backends),
        backends=backends,
        log=lambda m: print(m, flush=True),
    )
    if "reported" in out:
        c = out["reported"]
        print(
            f"reported rows: {c['added']} added, {c['updated']} updated, {c['unchanged']} unchanged"
        )
    for name, res in out.get("computed", {}).items():
        print(f"{name}: {'added' if res['added'] else 'already there'} as {res['id']}")
    if not args.no_score:
        n = lb.process_jobs()
        print(f"scored {n} job(s)")
    return 0
