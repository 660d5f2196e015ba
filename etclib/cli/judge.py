"""Ask the LLM judge one question: decompose a transcription, or label one unit against a text.

`decompose TEXT` prints TEXT's units of inner state, one per line; `entail UNIT TARGET` prints
Supported, Neutral or Not Supported with the judge's reasoning. `check` judges 3 test items for
real and estimates a whole run's calls and cost; `calibrate` compares this judge with the
paper's (units per reference, self and shuffled checks); both exit 1 when something is wrong.
Answers share the cache and settings of `etclib score --metrics judge`. See docs/judge.md.

Example:
  etclib judge decompose "相手の話を聞いて驚きました。もっと詳しく知りたいと思いました。"
  etclib judge entail "驚いた" "相手の話が意外でびっくりしました。" --provider openai --json
  etclib judge check --provider openai --model gpt-5-mini
  etclib judge calibrate --sample 200 --seed 1
  etclib judge calibrate --predictions ft.jsonl --paper-row fine-tuned --json
"""

from __future__ import annotations

import argparse
import json

from etclib.cli import (
    add_data_argument,
    add_json_argument,
    add_judge_prompts_argument,
    add_provider_argument,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="judge_command", metavar="QUESTION", required=True)
    dec = sub.add_parser("decompose", help="split a transcription into units of inner state")
    dec.add_argument("text", help="the transcription to decompose")
    ent = sub.add_parser(
        "entail", help="label UNIT against TARGET: Supported/Neutral/Not Supported"
    )
    ent.add_argument("unit", help="one unit of inner state")
    ent.add_argument("target", help="the transcription to check it against")
    chk = sub.add_parser("check", help="pre-flight: judge 3 test items for real, estimate a run")
    chk.add_argument("--items", type=int, default=3, metavar="N", help="items to judge (3)")
    add_data_argument(chk)
    cal = sub.add_parser(
        "calibrate", help="compare this judge with the paper's: units per reference, checks"
    )
    cal.add_argument("--sample", type=int, metavar="N", help="a seeded sample of N references")
    cal.add_argument("--seed", type=int, default=0, metavar="S", help="sample seed (0)")
    cal.add_argument(
        "--pairs", type=int, default=20, metavar="K", help="references in each check (20)"
    )
    cal.add_argument("--predictions", metavar="FILE", help="also count a file's units")
    cal.add_argument(
        "--paper-row", metavar="WORDS", help="the Table 3 row the file is, e.g. 'fine-tuned'"
    )
    cal.add_argument("--concurrency", type=int, help="parallel judge calls (default 16)")
    cal.add_argument("--no-check", action="store_true", help="skip the one-item pre-flight")
    cal.add_argument("--no-store", action="store_true", help="do not store the result")
    add_data_argument(cal)
    for p in (dec, ent, chk, cal):
        add_provider_argument(p, "--provider", help="judge provider")
        p.add_argument("--model", help="judge model (default: gemini-2.5-flash / gpt-4.1-mini)")
        p.add_argument("--timeout", type=float, help="seconds per call (default 60)")
        p.add_argument(
            "--thinking", help="thinking budget or level, or 'default' (etclib/llm/models.py)"
        )
        add_judge_prompts_argument(p)
        add_json_argument(p)


def run(args: argparse.Namespace) -> int:
    from etclib.core.errors import JudgeError
    from etclib.judge.runner import Judge, JudgeSettings, RequestFailed, run_sync

    options = {
        "judge_provider": args.provider,
        "judge_model": args.model,
        "judge_timeout": args.timeout,
        "judge_thinking": args.thinking,
        "judge_prompts": args.judge_prompts,
        "concurrency": getattr(args, "concurrency", None),
    }
    settings = JudgeSettings.resolve(options.get)
    if args.judge_command == "check":
        return _check(args, settings)
    if args.judge_command == "calibrate":
        return _calibrate(args, settings)

    async def ask():
        async with Judge(settings) as judge:
            if args.judge_command == "decompose":
                answer = await judge.decompose(args.text)
            else:
                answer = await judge.entail(args.unit, args.target)
            return answer, judge.usage

    try:
        answer, usage = run_sync(ask)
    except RequestFailed as exc:
        raise JudgeError(f"{exc}. Try again later, or with a longer --timeout.") from exc
    out: dict = {"signature": settings.signature(), "usage": usage.report(settings.model)}
    if args.judge_command == "decompose":
        out = {"text": args.text, "units": answer, **out}
        text = "\n".join(answer) if answer else "(no unit of inner state)"
    else:
        label, reasoning = answer
        out = {
            "unit": args.unit,
            "target": args.target,
            "label": label,
            "reasoning": reasoning,
            **out,
        }
        text = label + (f"\n{reasoning}" if reasoning else "")
    print(json.dumps(out, ensure_ascii=False, indent=2) if args.json else text)
    return 0


def _check(args: argparse.Namespace, settings) -> int:
    from etclib.data.corpus import load_corpus
    from etclib.judge.check import format_report, preflight

    report = preflight(settings, load_corpus(args.data), n=args.items)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1


def _calibrate(args: argparse.Namespace, settings) -> int:
    from etclib.data.corpus import load_corpus
    from etclib.studies.judge_calibration import calibrate, format_report, store

    corpus = load_corpus(args.data)
    predictions = None
    if args.predictions:
        from etclib.tracks.predictions import read_predictions

        predictions = read_predictions(
            args.predictions, split="test", corpus=corpus, track="transcription"
        )
    elif args.paper_row:
        from etclib.core.errors import ConfigError

        raise ConfigError("--paper-row names the row of a --predictions FILE; give the file.")
    report = calibrate(
        settings,
        corpus,
        sample=args.sample,
        seed=args.seed,
        pairs=args.pairs,
        predictions=predictions,
        paper_row_query=args.paper_row,
        check=not args.no_check,
    )
    if "run_id" in report and not args.no_store:
        store(report)
        report["stored"] = (
            f"studies database (ETC_STUDIES_DB), judge calibration {report['run_id']}"
        )
    if args.json:
        from etclib.studies.judge_calibration import json_safe

        print(json.dumps(json_safe(report), ensure_ascii=False, indent=1))
    else:
        print(format_report(report))
        if report.get("stored"):
            print(f"stored: {report['stored']}")
    return 0 if report["ok"] else 1
