"""Score a predictions file: BLEU-1..4, ROUGE-1/2/L, BERTScore, LLM judge, and breakdowns.

Scores are x100, each with its signature: compare only numbers with equal signatures. The track
is detected from the file's fields unless --track names it. --ci adds each ranking metric's 95%
paired bootstrap interval over items (the leaderboard's). A judge run where some items failed
after every retry exits 10 unless --allow-partial; the same command again asks only the failed
items. Exit status: 0 ok, 1 refused input or another error, 2 configuration, 10 judge
incomplete, 11 a provider's quota used up. See README.md, "Scores and signatures".

Example:
  etclib score preds.jsonl --metrics bleu,rouge,category
  etclib score labels.jsonl --track erc --ci
  etclib score preds.jsonl --metrics bleu,rouge,bertscore --json --per-item items.jsonl
  etclib score preds.jsonl --metrics judge --batch     # half price via the batch interface
"""

from __future__ import annotations

import argparse
import json
import sys

from etclib import tracks
from etclib.cli import (
    add_data_argument,
    add_json_argument,
    add_judge_prompts_argument,
    add_provider_argument,
    add_track_argument,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from etclib.metrics import METRICS
    from etclib.metrics.significance import DEFAULT_RESAMPLES, DEFAULT_SEED
    from etclib.tracks import TRACKS

    parser.add_argument("file", help="predictions file (.jsonl or .csv)")
    parser.add_argument("--split", default="test", choices=("train", "valid", "test"))
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated metric groups (default: the track's; "
        + "; ".join(f"{','.join(t.default_metrics)} for {t.title}" for t in TRACKS.values())
        + f"; available: {', '.join(METRICS)})",
    )
    add_track_argument(parser, detect=True)
    parser.add_argument(
        "--ci", action="store_true", help="add 95%% paired bootstrap intervals over items"
    )
    parser.add_argument(
        "--resamples",
        type=_positive,
        default=DEFAULT_RESAMPLES,
        help=f"with --ci: bootstrap resamples (default {DEFAULT_RESAMPLES})",
    )
    parser.add_argument(
        "--seed", type=_seed, default=DEFAULT_SEED, help=f"with --ci: seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--per-item", metavar="OUT", help="write one JSON line per item with its scores"
    )
    judge = add_metric_options(parser)
    judge.add_argument(
        "--allow-partial",
        action="store_true",
        help="exit 0 even when some items' judge requests failed (scores over the judged items)",
    )
    add_data_argument(parser)
    add_json_argument(parser)


def add_metric_options(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The metric options a scoring command takes (BERTScore, the LLM judge; read back by
    :func:`options`); returns the judge's argument group for a command's own judge flags."""
    parser.add_argument(
        "--bertscore-model", help="BERTScore model: hub id or folder ($ETC_BERTSCORE_MODEL)"
    )
    parser.add_argument(
        "--bertscore-layer", type=int, help="BERTScore layer ($ETC_BERTSCORE_LAYER)"
    )
    judge = parser.add_argument_group("LLM judge (--metrics judge; see docs/judge.md)")
    add_provider_argument(judge, "--judge-provider", help="judge API ($ETC_JUDGE_PROVIDER)")
    judge.add_argument("--judge-model", help="judge model (default: gemini-2.5-flash for gemini)")
    judge.add_argument("--concurrency", type=int, help="parallel judge calls (default 16)")
    add_judge_prompts_argument(judge)
    judge.add_argument(
        "--batch",
        dest="judge_batch",
        action="store_true",
        default=None,
        help="send the uncached judge questions through the provider's batch interface first "
        "(a provider without one refuses; half price, answers within 24 h; a stopped run "
        "resumes the same batch) ($ETC_JUDGE_BATCH)",
    )
    judge.add_argument(
        "--service-tier",
        dest="judge_service_tier",
        metavar="TIER",
        help="service tier for online judge calls (a provider without tiers refuses): flex "
        "(cheaper, slower; o3, o4-mini, GPT-5 only) ($ETC_JUDGE_SERVICE_TIER)",
    )
    return judge


def options(args: argparse.Namespace) -> dict:
    """Metric options from the command line (shared with commands that score)."""
    keys = (
        "bertscore_model bertscore_layer judge_provider judge_model concurrency judge_prompts "
        "judge_batch judge_service_tier"
    )
    return {k: v for k in keys.split() if (v := getattr(args, k, None)) is not None}


def _at_least(minimum: int):
    """An argparse type: a whole number of at least ``minimum``."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"expected a whole number of at least {minimum}, got {text!r}"
            )
        return value

    return whole


_positive = _at_least(1)
#: numpy's random generators take seeds of 0 or more
_seed = _at_least(0)


def table(headers: list[str], rows: list[list[str]], indent: int = 0) -> str:
    """An aligned text table: the first column left-aligned, the others right-aligned (numbers)."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        out = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return " " * indent + "  ".join(out).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)])


def breakdown_text(result) -> str:
    """Every breakdown of ``result``, one aligned table each: subset, items, summary scores."""
    from etclib.metrics import facts

    keys = [f.key for f in facts(list(result.metrics)) if f.summary and f.key in result.scores]
    out = []
    for group, subsets in result.breakdown().items():
        out.append(f"breakdown by {group}:")
        rows = [
            [name, str(vals["n_items"])]
            + [_text(v) if isinstance(v := vals.get(k), float) else "-" for k in keys]
            for name, vals in subsets.items()
        ]
        out.append(table([group, "items", *keys], rows, indent=2))
    if any(cell == "n/a" for line in out for cell in line.split()):
        out.append(
            "  (n/a: undefined on the subset; a category with no gold and no predicted label"
        )
        out.append("   there is left out of its macro-F1)")
    return "\n".join(out)


def _num(x: float) -> float | None:
    return None if x != x else x


def _text(x: float) -> str:
    """Two decimals; ``n/a`` for an undefined score (NaN)."""
    return "n/a" if x != x else f"{x:.2f}"


def run(args: argparse.Namespace) -> int:
    from etclib.core.errors import JudgeIncompleteError
    from etclib.data.corpus import load_corpus
    from etclib.tracks.predictions import detect_file_track, read_predictions
    from etclib.tracks.scoring import score, signature_string, write_per_item

    track = tracks.get(args.track or detect_file_track(args.file))
    metrics = track.parse_metrics(args.metrics)
    corpus = load_corpus(args.data)
    preds = read_predictions(args.file, split=args.split, corpus=corpus, track=track)
    for w in preds.warnings:
        print(f"warning: {w}", file=sys.stderr)
    result = score(preds, split=args.split, metrics=metrics, corpus=corpus, options=options(args))
    if args.per_item:
        write_per_item(result, args.per_item)
    intervals = result.intervals(args.resamples, args.seed) if args.ci else {}
    incomplete = result.incomplete()

    def finish() -> int:
        if not incomplete:
            return 0
        words = "; ".join(incomplete.values())
        if getattr(args, "allow_partial", False):
            print(
                f"warning: {words} (--allow-partial: scores over the judged items)", file=sys.stderr
            )
            return 0
        raise JudgeIncompleteError(
            f"{words}. The scores are not complete: run the same command again to retry the "
            "failed items (answers received are cached, so only their questions are asked), or "
            "pass --allow-partial to accept scores over the judged items."
        )

    if args.json:
        out = result.to_json()
        if args.ci:
            out["intervals"] = {k: [_num(lo), _num(hi)] for k, (lo, hi) in intervals.items()}
            out["bootstrap"] = {"resamples": args.resamples, "seed": args.seed, "level": 0.95}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return finish()
    print(f"{args.file}: {result.n_items} items of the {result.split} split ({result.track} track)")
    rows = []
    for k, v in result.scores.items():
        cells = [k, _text(v) if isinstance(v, float) else str(v)]
        if intervals:
            lo, hi = intervals.get(k, (None, None))
            cells.append("" if lo is None else f"[{lo:.2f}, {hi:.2f}]")
        rows.append(cells)
    headers = ["metric", "score"] + (["95% interval"] if intervals else [])
    print(table(headers, rows, indent=2))
    if args.ci:
        print(f"  (95% paired bootstrap intervals: {args.resamples} resamples, seed {args.seed})")
    print(breakdown_text(result))
    print(f"signature: {signature_string(result.signature)}")
    return finish()
