"""Print the board (computed rows with intervals and rank bands) and the published rows.

Example:
  python -m leaderboard show --sort-by rougeL
  python -m leaderboard show --track erc
"""

from __future__ import annotations

import argparse
import math

from .text import clip, fmt, heading, table


def add_arguments(p: argparse.ArgumentParser) -> None:
    from etclib.tracks import TRACKS

    track_help = "the board of this track: " + "; ".join(
        f"{t.name} ({t.title})" for t in TRACKS.values()
    )
    p.add_argument(
        "--sort-by",
        help="metric to rank by (default: the track's rule; "
        + "; ".join(f"{t.title}: {', else '.join(t.rank_order)}" for t in TRACKS.values())
        + ")",
    )
    p.add_argument("--json", action="store_true", help="print the JSON export instead")
    p.add_argument(
        "--track", choices=list(TRACKS), help=track_help + " (default: all; --json: the first)"
    )


def run(args: argparse.Namespace) -> int:
    import leaderboard as lb

    if args.json:
        print(lb.export_json("board", track=args.track))
        return 0
    print(render_board(args.sort_by, args.track))
    return 0


def render_board(sort_by: str | None = None, track: str | None = None) -> str:
    """Every track's board (with ``track``, that one alone) as text tables: computed rows with
    intervals and rank bands, the track's reference and published rows."""
    import leaderboard as lb
    from etclib import tracks

    out: list[str] = []
    for t in [tracks.get(track)] if track else tracks.TRACKS.values():
        if out:
            out.append("")
        by = sort_by if sort_by in lb.metric_columns(t.name) else None
        out += _render_track(t, lb.ranking(sort_by=by, track=t.name))
    return "\n".join(out)


def _render_track(t, board) -> list[str]:
    import leaderboard as lb

    summary = [f.key for f in t.facts() if f.ranking and f.summary]
    keys = [m for m in summary if m in board.columns and board[m].notna().any()]
    rows = []
    for r in board.to_dict("records"):
        cells = [r["rank_band"] or "-", clip(r["name"], 34), r["kind"], clip(r["setting"], 10)]
        for m in keys:
            v, lo, hi = r[m], r[m + "_lo"], r[m + "_hi"]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("-")
            elif lo is None or (isinstance(lo, float) and math.isnan(lo)):
                cells.append(f"{v:.2f}")
            else:
                cells.append(f"{v:.2f} [{lo:.1f},{hi:.1f}]")
        cells += [fmt(r["pred_chars"], 1)] if t.free_text else []
        rows.append([*cells, clip(r["status"], 16)])
    chars = ["chars"] if t.free_text else []
    for r in lb.reference_rows(t.name).to_dict("records"):
        scores = [fmt(r.get(k), 2) for k in keys]
        rows.append(["ref", clip(r["name"], 34), "reference", "", *scores, *[""] * len(chars), ""])
    out = [
        f"{t.heading}, computed on this project's test split (sorted by "
        f"{heading(board.attrs.get('sort_by') or '')}; 95% paired bootstrap intervals, "
        f"{board.attrs.get('resamples')} resamples):",
        table(["rank", "name", "kind", "setting", *map(heading, keys), *chars, "status"], rows)
        if rows
        else "  (no entries yet: python -m leaderboard seed-baselines)",
    ]
    for group, sig in (board.attrs.get("signatures") or {}).items():
        out.append(
            f"  signature {group}: {sig.get(group, '')}  (etclib {sig.get('etclib')}, corpus "
            f"{sig.get('corpus')})"
        )
    rep = lb.reported() if t.reported else []
    if len(rep):
        cols = [c for c in summary if c in rep.columns]
        rrows = [
            ["reported", clip(r["name"], 80)] + [fmt(r.get(c), 1) for c in cols]
            for r in rep.to_dict("records")
        ]
        out += [
            "",
            "Reported in the paper (not re-scored; earlier corpus version and tokenisation; "
            "no intervals):",
            table(["kind", "name", *map(heading, cols)], rrows),
        ]
    other = lb.other_scores(track=t.name)
    if len(other):
        out += ["", f"{len(other)} score(s) under an older signature: see other_scores()."]
    return out
