"""Ask the LLM judge one question: decompose a transcription, or label one unit against a text.

`decompose TEXT` prints the units of inner state in TEXT (one per line; none when it has none).
`entail UNIT TARGET` prints Supported, Neutral or Not Supported, and the judge's reasoning.
`check` is the pre-flight: it judges 3 test items for real (no cache), checks that the answers
parse, prints the settings sent, the served model, latency and tokens per call, and an estimate
of calls and cost for the whole test split, and names any setting the model refuses. Exit 1
when something is wrong.
Answers come from the same cache as `etclib score --metrics judge` ($ETC_JUDGE_CACHE), so asking
twice costs one call. Provider and model: --provider/--model, else $ETC_JUDGE_PROVIDER /
$ETC_JUDGE_MODEL, else gemini / gemini-2.5-flash. Keys: GEMINI_API_KEY, or OPENAI_API_KEY (and
OPENAI_BASE_URL for a self-hosted server). See docs/judge.md.

Example:
  etclib judge decompose "相手の話を聞いて驚きました。もっと詳しく知りたいと思いました。"
  etclib judge entail "驚いた" "相手の話が意外でびっくりしました。" --provider openai --json
  etclib judge check --provider openai --model gpt-5-mini
"""

from __future__ import annotations

import argparse
import json

from . import add_data_argument, add_json_argument


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
    for p in (dec, ent, chk):
        p.add_argument("--provider", choices=("gemini", "openai"), help="judge provider")
        p.add_argument("--model", help="judge model (default: gemini-2.5-flash / gpt-4.1-mini)")
        p.add_argument("--timeout", type=float, help="seconds per call (default 60)")
        p.add_argument(
            "--thinking", help="thinking budget or level, or 'default' (etclib/llm/models.py)"
        )
        add_json_argument(p)


def run(args: argparse.Namespace) -> int:
    from ..errors import JudgeError
    from ..judge.runner import Judge, JudgeSettings, RequestFailed, run_sync

    options = {
        "judge_provider": args.provider,
        "judge_model": args.model,
        "judge_timeout": args.timeout,
        "judge_thinking": args.thinking,
    }
    settings = JudgeSettings.resolve(options.get)
    if args.judge_command == "check":
        return _check(args, settings)

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
        if args.json:
            print(json.dumps(out, ensure_ascii=False, indent=2))
        elif answer:
            print("\n".join(answer))
        else:
            print("(no unit of inner state)")
    else:
        label, reasoning = answer
        out = {
            "unit": args.unit,
            "target": args.target,
            "label": label,
            "reasoning": reasoning,
            **out,
        }
        if args.json:
            print(json.dumps(out, ensure_ascii=False, indent=2))
        else:
            print(label)
            if reasoning:
                print(reasoning)
    return 0


def _check(args: argparse.Namespace, settings) -> int:
    from ..corpus import load_corpus
    from ..judge.check import format_report, preflight

    report = preflight(settings, load_corpus(args.data), n=args.items)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1
