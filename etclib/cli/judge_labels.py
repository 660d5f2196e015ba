"""Ask an LLM to label transcriptions with the 7 emotion categories and compare it with people.

Labels every emotion transcription of a split (multi-label, prompt
etclib/data/prompts/label_judge.toml), caches each answer in the judge's answer cache
($ETC_JUDGE_CACHE, default $ETC_CACHE_DIR/judge.sqlite3), stores the run in the studies database
($ETC_STUDIES_DB: a SQLite file, default data/studies.sqlite, or a postgresql:// URL) and prints, per category, Cohen's kappa of the judge against the human
majority beside the human yardstick (each annotator against the other two). Keys:
OPENAI_API_KEY / GEMINI_API_KEY (environment or .streamlit/secrets.toml).

Example:
  etclib judge-labels --provider gemini --model gemini-2.5-flash
  etclib judge-labels --provider openai --model gpt-4.1 --split valid --json
  etclib judge-labels --provider openai --model gpt-4.1-mini --limit 20   # a trial run
"""

from __future__ import annotations

import argparse
import json
import math

from etclib.cli import add_data_argument, add_json_argument, labelling


def add_arguments(parser: argparse.ArgumentParser) -> None:
    labelling.add_arguments(parser, required=True)
    parser.add_argument(
        "--split",
        default="test",
        choices=("train", "valid", "test", "all"),
        help="which transcriptions to label (default: test, 1,010 items)",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=1000,
        help="bootstrap resamples for intervals (default 1000)",
    )
    add_data_argument(parser)
    add_json_argument(parser)


def _fmt(x: float) -> str:
    return "   n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:6.3f}"


def run(args: argparse.Namespace) -> int:
    from etclib.data.corpus import load_corpus
    from etclib.studies.labeljudge import judge_labels, label_study

    corpus = load_corpus(args.data)
    result = judge_labels(corpus, args.provider, args.model, **labelling.options(args))
    study = label_study(corpus, run_id=result.run_id, n_resamples=args.resamples, db=args.db)
    if args.json:
        categories = json.loads(study.table.to_json(orient="records", force_ascii=False))
        out = {**labelling.fields(result), "categories": categories}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    labelling.report(result, "transcriptions")
    print()
    print(
        "category   judge-vs-majority [95% CI]     judge-vs-pairs  human-vs-others  "
        "Fleiss(3)  Fleiss(3+judge)"
    )
    for row in study.table.to_dict("records"):
        ci = f"[{_fmt(row['judge_vs_majority_low'])},{_fmt(row['judge_vs_majority_high'])}]"
        print(
            f"{row['category']:<10} {_fmt(row['judge_vs_majority'])} {ci:<22} "
            f"{_fmt(row['judge_vs_pairs']):>14} {_fmt(row['human_vs_others']):>16} "
            f"{_fmt(row['fleiss_humans']):>10} {_fmt(row['fleiss_with_judge']):>16}"
        )
    return 0
