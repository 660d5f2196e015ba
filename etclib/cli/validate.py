"""Check a predictions file (JSONL or CSV) against a split, without scoring it.

Exits 0 when the file is valid; otherwise prints each problem with its line number and exits 1.

The track (transcription: a "prediction" per item; erc: a "labels" list; any registered one) is
detected from the file's first record unless --track names it.

Example:
  etclib validate my_predictions.jsonl --split test
  etclib validate my_labels.jsonl --track erc
"""

from __future__ import annotations

import argparse
import json
import sys

from etclib.cli import add_data_argument, add_json_argument, add_track_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="predictions file (.jsonl or .csv)")
    parser.add_argument("--split", default="test", choices=("train", "valid", "test"))
    add_track_argument(parser, detect=True)
    add_data_argument(parser)
    add_json_argument(parser)


def run(args: argparse.Namespace) -> int:
    from etclib.core.errors import PredictionsError
    from etclib.data.corpus import load_corpus
    from etclib.tracks.predictions import read_predictions

    try:
        preds = read_predictions(
            args.file, split=args.split, corpus=load_corpus(args.data), track=args.track
        )
    except PredictionsError as exc:
        if not args.json:
            raise
        problems = [
            {"line": p.line, "until": p.until or p.line, "message": p.message} for p in exc.problems
        ]
        print(json.dumps({"valid": False, "problems": problems}, ensure_ascii=False, indent=2))
        return 1
    if args.json:
        out = {"valid": True, "track": preds.track, "items": len(preds), "format": preds.format}
        out.update(sha256=preds.sha256, warnings=preds.warnings)
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(
            f"{args.file}: valid {preds.format} file, {len(preds)} items of the {preds.split} "
            f"split ({preds.track} track)."
        )
        for w in preds.warnings:
            print(f"warning: {w}", file=sys.stderr)
    return 0
