"""Validate a predictions file, store it and queue its scoring; print the id.

Also prints the entry's private edit key, once: keep it to rename the entry, edit its links
and model facts, make it private or withdraw it (`entry KEY`, or the site's Submit page opened
with ?edit=KEY). With --score: the main scores with their intervals and the rank.

Example:
  python -m leaderboard submit preds.jsonl --name "My model" --setting zero-shot --score
  python -m leaderboard submit preds.jsonl --name "My model" --parameters 8 --open-weights yes \\
      --licence Apache-2.0
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from leaderboard.metadata import OPEN_WEIGHTS, SAW_TEST, SETTINGS, Metadata

from .text import standing_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="predictions file (.jsonl or .csv) for every test item")
    p.add_argument("--name", required=True, help="display name on the board")
    p.add_argument("--team")
    p.add_argument("--contact", help="e-mail or handle (never shown publicly)")
    p.add_argument("--model-url", help="http(s) link to the model")
    p.add_argument("--paper-url", help="http(s) link to the paper")
    p.add_argument("--description")
    p.add_argument("--setting", default="other", choices=SETTINGS)
    p.add_argument(
        "--saw-test", default="unknown", choices=SAW_TEST, help="did training see ETC test data?"
    )
    add_model_facts(p)
    p.add_argument(
        "--submitter",
        help="key the daily limit counts by (default: contact, else name); operator use only: "
        "the site counts by signed-in account or network address",
    )
    p.add_argument("--split", default="test", choices=("train", "valid", "test"))
    p.add_argument("--score", action="store_true", help="score the queue now, in this process")


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb

    meta = {f.name: getattr(args, f.name) or "" for f in fields(Metadata)}
    receipt = lb.submit(args.file, meta, submitter=args.submitter, split=args.split)
    for w in receipt.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if receipt.duplicate:
        print(f"{receipt.id}  {receipt.duplicate_text(args.name)} Status: {receipt.status}.")
    else:
        print(f"{receipt.id}  queued (position {receipt.queue_position})")
        print(
            f"edit key: {receipt.edit_key}\n  (shown once: keep it to rename, edit, withdraw or "
            "make this entry private: python -m leaderboard entry KEY, or the site's Submit page "
            "opened with ?edit=KEY)"
        )
    if args.score:
        from leaderboard.errors import WorkerStoppedError

        lb.process_jobs()
        st = lb.status(receipt.id)
        if st["status"] in ("queued", "scoring"):  # its job is another process's
            raise WorkerStoppedError(
                f"{receipt.id} is still {st['status']}: another process holds its job (the "
                "site's scoring worker, or a `python -m leaderboard worker`); follow it with "
                f"`python -m leaderboard status {receipt.id}`."
            )
        print(f"status: {st['status']}" + (f" ({st['message']})" if st["message"] else ""))
        print(standing_text(lb.standing(receipt.id)))
    elif not receipt.duplicate:
        print("Run `python -m leaderboard worker --once` to score it (the site does it itself).")
    return 0


def add_model_facts(p: argparse.ArgumentParser) -> None:
    """The optional model facts, asked by ``submit`` and changed by ``entry``."""
    p.add_argument("--parameters", help="model size in billions of parameters, e.g. 8 or 0.35")
    p.add_argument(
        "--open-weights", choices=[v for v in OPEN_WEIGHTS if v], help="are the weights public?"
    )
    p.add_argument("--licence", help="the model's licence, e.g. Apache-2.0")
