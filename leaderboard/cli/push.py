"""Upload the public board to the Hugging Face dataset ETC_LB_HUB_REPO (HF_TOKEN).

Example:
  ETC_LB_HUB_REPO=org/etc-leaderboard HF_TOKEN=hf_... python -m leaderboard push
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", help="dataset repo id (default $ETC_LB_HUB_REPO)")


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb

    done = lb.push_to_hub(repo=args.repo)
    print(f"uploaded {', '.join(done)}")
    return 0
