"""Moderate: list, hide, unhide, delete (soft) and re-score submissions, re-run failed or incomplete jobs.

`rerun` takes one submission's failed or incomplete jobs, or every one without an id.
`rescore ID --stage judge` completes an incomplete judge stage, asking only the failed items;
`rescore --all --stage judge --batch` re-scores every submission through the provider's batch
interface (half price). See docs/leaderboard.md, "Admin operations".

Example:
  python -m leaderboard admin list
  python -m leaderboard admin delete 3f9c0a1b2d4e --note "duplicate of ..."
  python -m leaderboard admin rescore 3f9c0a1b2d4e --stages lexical,judge
  python -m leaderboard admin rescore 3f9c0a1b2d4e --stage judge --score
  python -m leaderboard admin rescore --all --stage judge --batch --score
  python -m leaderboard admin rerun --score
"""

from __future__ import annotations

import argparse
import os

from .text import clip, table


def add_arguments(p: argparse.ArgumentParser) -> None:
    from leaderboard.stages import all_stages

    p.add_argument("action", choices=("list", "hide", "unhide", "delete", "rescore", "rerun"))
    p.add_argument("id", nargs="?", help="the submission (rerun: optional, default all)")
    p.add_argument("--token", help="admin token (default $ETC_ADMIN_TOKEN)")
    p.add_argument("--note", help="reason, kept in the moderation log")
    p.add_argument(
        "--stages",
        "--stage",
        dest="stages",
        help=f"rescore: comma-separated stages ({','.join(all_stages())})",
    )
    p.add_argument(
        "--score", action="store_true", help="rescore, rerun: score now, in this process"
    )
    p.add_argument("--all", action="store_true", help="rescore: every submission (no id)")
    p.add_argument(
        "--batch",
        action="store_true",
        help="rescore --stage judge: the judge's uncached questions through the provider's "
        "batch interface (half price, within 24 h; docs/judge.md)",
    )


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb

    token = args.token or os.environ.get("ETC_ADMIN_TOKEN")
    stages = args.stages.split(",") if args.stages else None
    if args.action == "list":
        records = lb.admin_submissions(token).to_dict("records")
        rows = [
            [str(r[k]) for k in ("id", "kind", "visibility", "status")]
            + [clip(r["name"], 30), clip(r["contact"], 30), f"{r['created_at']:%Y-%m-%d %H:%M}"]
            for r in records
        ]
        print(table(["id", "kind", "visibility", "status", "name", "contact", "created"], rows))
        failed = [r for r in records if r["failure_detail"]]
        if failed:
            print("\nfailures, failed items and waits (provider text, redacted; admin only):")
        for r in failed:
            print(f"  {r['id']}  {r['failure_detail']}")
        return 0
    if args.action == "rerun":
        ids = lb.rerun_failed(token, args.id, note=args.note or "")
        print(f"re-queued {len(ids)} failed job(s)" + (f" of {args.id}" if args.id else ""))
        if args.score and ids:
            lb.process_jobs()
            if args.id:
                print(f"status: {lb.status(args.id)['status']}")
        return 0
    if args.action == "rescore" and args.all:
        queued = lb.rescore_all(token, stages, note=args.note or "", batch=args.batch)
        n = sum(len(ids) for ids in queued.values())
        print(f"queued {n} job(s) for {len(queued)} submission(s)")
        if args.score:
            lb.process_jobs()
            for sid in queued:
                print(f"{sid}: {lb.status(sid)['status']}")
        return 0
    if not args.id:
        raise SystemExit(f"admin {args.action}: give the submission id")
    if args.action == "rescore":
        ids = lb.rescore(args.id, token, stages, note=args.note or "", batch=args.batch)
        print(f"queued {len(ids)} job(s) for {args.id}")
        if args.score:
            lb.process_jobs()
            print(f"status: {lb.status(args.id)['status']}")
        return 0
    getattr(lb, args.action)(args.id, token, args.note or "")
    print(f"{args.action}: {args.id} done")
    return 0
