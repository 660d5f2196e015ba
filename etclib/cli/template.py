"""Write a predictions template: every item of a split with an empty prediction.

Fill in the "prediction" fields and submit the file.

Example:
  etclib template --split test --out test_template.jsonl
  etclib template --split test --out test_template.csv
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from . import add_data_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--split", default="test", choices=("train", "valid", "test"))
    parser.add_argument(
        "--out", required=True, help="output file; .csv writes CSV, anything else JSONL"
    )
    add_data_argument(parser)


def run(args: argparse.Namespace) -> int:
    from ..corpus import load_corpus
    from ..predictions import FIELDS, template_rows, write_jsonl

    rows = template_rows(load_corpus(args.data), args.split)
    out = Path(args.out)
    if out.suffix.lower() == ".csv":
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            w.writerows([*k, p] for k, p in rows)
    else:
        write_jsonl(out, rows)
    print(f"wrote {len(rows)} items of the {args.split} split to {out}")
    return 0
