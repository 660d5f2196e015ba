"""Show or change your own entry, given the private edit key its submission printed.

Without options: the entry, its standing on the board and its history. --name, the links and
the model facts change it; --private takes it off the board and its exports until --public;
--withdraw takes it off for good (its rows are kept). Every change is kept in its history.

Example:
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET --name "My model v2" --parameters 8 \\
      --open-weights yes --licence MIT
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET --private
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET --withdraw
"""

from __future__ import annotations

import argparse
import json

from leaderboard.metadata import EDITABLE

from .submit import add_model_facts
from .text import clip, standing_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("key", help="the entry's private edit key (ID.SECRET), printed by submit")
    p.add_argument("--name", help="a new display name")
    p.add_argument("--model-url", help="http(s) link to the model or its code ('' to clear)")
    p.add_argument("--paper-url", help="http(s) link to the paper ('' to clear)")
    add_model_facts(p)
    state = p.add_mutually_exclusive_group()
    state.add_argument("--private", action="store_true", help="off the board until --public")
    state.add_argument("--public", action="store_true", help="back on the board")
    state.add_argument("--withdraw", action="store_true", help="off the board for good")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb
    from leaderboard.owners import entry_of_key

    owner = lb.Owner(edit_keys=(args.key,))
    sid = entry_of_key(args.key)
    changes = {f: getattr(args, f) for f in EDITABLE if getattr(args, f) is not None}
    changed = lb.update_entry(sid, owner, changes) if changes else []
    states = (("private", args.private), ("public", args.public), ("withdrawn", args.withdraw))
    visibility = next((v for v, on in states if on), None)
    if visibility:
        lb.set_entry_visibility(sid, owner, visibility)
    mine = lb.owned_entries(owner)
    if mine.empty:  # a key that is no entry's
        raise lb.NotFoundError.entry(sid)
    rec = mine.iloc[0].to_dict()
    history = lb.entry_history(sid, owner)
    if args.json:
        out = {**rec, "history": history.to_dict("records")}
        print(json.dumps(out, ensure_ascii=False, indent=2, default=str))
        return 0
    if changed or visibility:
        print(f"changed: {', '.join([*changed, *(['visibility'] if visibility else [])])}")
    print(f"{rec['id']}  {clip(rec['name'], 60)}  [{rec['track']}, {rec['visibility']}]")
    print(f"status: {rec['status']}")
    if rec["visibility"] == "public" and rec["status"] != "queued":
        print(standing_text(lb.standing(sid)))
    for h in history.to_dict("records"):
        what = h["to"] if h["what"] == "status" else f"{h['what']}: {h['from']!r} -> {h['to']!r}"
        print(f"  {h['at']:%Y-%m-%d %H:%M:%S}  {clip(what, 100)}  ({h['by']})")
    return 0
