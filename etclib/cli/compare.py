"""Compare two predictions files: B − A on every metric, its interval, a paired test, a verdict.

Both files must be of the same split and track; by default the metrics every leaderboard entry
has are compared. Per metric key: B − A, its paired bootstrap 95% interval over items (the
leaderboard's resamples), the paired approximate-randomization p-value and the verdict "A
better" / "no significant difference" / "B better" at alpha 0.05. --json prints the shape
`python -m leaderboard compare --json` prints; --per-item writes one JSON line per item. See
docs/compare.md.

Example:
  etclib compare baseline.jsonl mine.jsonl
  etclib compare baseline.jsonl mine.jsonl --metrics bleu,rouge --json
  etclib compare a.jsonl b.jsonl --per-item items.jsonl --trials 10000 --resamples 1000
  etclib compare a_labels.jsonl b_labels.jsonl --track erc
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from etclib.cli import add_data_argument, add_json_argument, add_track_argument
from etclib.cli.score import add_metric_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from etclib.cli.score import _positive, _seed
    from etclib.metrics import METRICS
    from etclib.metrics.significance import DEFAULT_RESAMPLES, DEFAULT_SEED
    from etclib.tracks import TRACKS
    from etclib.tracks.comparison import ALPHA, DEFAULT_TRIALS

    parser.add_argument("a", help="predictions file of system A (.jsonl or .csv)")
    parser.add_argument("b", help="predictions file of system B, compared with A (B − A)")
    parser.add_argument("--split", default="test", choices=("train", "valid", "test"))
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated metric groups (default: those of every leaderboard entry, "
        + "; ".join(f"{t.title}: {','.join(t.board_metrics())}" for t in TRACKS.values())
        + f"; available: {', '.join(METRICS)})",
    )
    add_track_argument(parser, detect=True)
    parser.add_argument(
        "--resamples",
        type=_positive,
        default=DEFAULT_RESAMPLES,
        help=f"bootstrap resamples of the interval (default {DEFAULT_RESAMPLES})",
    )
    parser.add_argument(
        "--trials",
        type=_positive,
        default=DEFAULT_TRIALS,
        help=f"approximate-randomization trials of the test (default {DEFAULT_TRIALS})",
    )
    parser.add_argument(
        "--seed", type=_seed, default=DEFAULT_SEED, help=f"seed of both (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--alpha", type=float, default=ALPHA, help=f"significance level (default {ALPHA})"
    )
    parser.add_argument(
        "--per-item", metavar="OUT", help="write one JSON line per item with both systems' scores"
    )
    add_metric_options(parser)
    add_data_argument(parser)
    add_json_argument(parser)


def run(args: argparse.Namespace) -> int:
    from etclib import tracks
    from etclib.cli.score import options
    from etclib.data.corpus import load_corpus
    from etclib.tracks.comparison import compare, format_text, write_per_item
    from etclib.tracks.predictions import read_predictions

    track = args.track  # else A's, detected from its fields: B is read as a file of it
    corpus = load_corpus(args.data)
    systems = []
    for path in (args.a, args.b):
        preds = read_predictions(path, split=args.split, corpus=corpus, track=track)
        for w in preds.warnings:
            print(f"warning: {path}: {w}", file=sys.stderr)
        track = preds.track
        systems.append(preds)
    result = compare(
        systems[0],
        systems[1],
        args.metrics or tracks.get(track).board_metrics(),  # the board's metrics by default
        split=args.split,
        corpus=corpus,
        options=options(args),
        track=track,
        resamples=args.resamples,
        seed=args.seed,
        trials=args.trials,
        alpha=args.alpha,
        names=(Path(args.a).name, Path(args.b).name),
    )
    result.a["source"], result.b["source"] = args.a, args.b
    if args.per_item:
        write_per_item(result, args.per_item)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        print(format_text(result))
    return 0
