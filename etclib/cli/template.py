"""Write a predictions template: every item of a split with an empty prediction.

Fill in the "prediction" fields (with --track erc: the "labels" lists, e.g. ["joy"]; in CSV,
names joined by ";") and submit the file.

Example:
  etclib template --split test --out test_template.jsonl
  etclib template --split test --out test_template.csv
  etclib template --track erc --out erc_template.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from etclib.cli import add_data_argument, add_track_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--split", default="test", choices=("train", "valid", "test"))
    parser.add_argument(
        "--out", required=True, help="output file; .csv writes CSV, anything else JSONL"
    )
    add_track_argument(parser)
    add_data_argument(parser)


def run(args: argparse.Namespace) -> int:
    from etclib.core.files import write_text
    from etclib.data.corpus import load_corpus
    from etclib.tracks.predictions import dumps_csv, dumps_jsonl, template_rows

    rows = template_rows(load_corpus(args.data), args.split, args.track)
    out = args.out  # as given: an empty name is refused as such, not read as "."
    dumps = dumps_csv if Path(out).suffix.lower() == ".csv" else dumps_jsonl
    write_text(out, dumps(rows, args.track))
    print(f"wrote {len(rows)} items of the {args.split} split ({args.track} track) to {out}")
    return 0
