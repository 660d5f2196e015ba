"""Label the emotion causes of ETC items with an LLM (after RECCON), or export collected labels.

`etclib causes` asks an LLM which utterances of the dialogue so far each item's transcription is
about, caches every answer (a rerun or a resumed run asks only what is missing), stores the run
in the studies database and prints the cause-type shares beside RECCON's. `etclib causes export`
writes every stored label as JSON Lines (licence header), or with --format reccon one source's
cause sets in RECCON's JSON layout. See docs/causes.md.

Example:
  etclib causes --provider gemini --model gemini-2.5-flash
  etclib causes --provider openai --model gpt-4.1-mini --limit 20     # a trial run
  etclib causes export --out causes.jsonl
  etclib causes export --format reccon --source llm --out etc_causes_llm_reccon.json
"""

from __future__ import annotations

import argparse
import json

from etclib.cli import add_data_argument, add_json_argument, labelling, provider_names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        default="label",
        choices=("label", "export"),
        help="label (default): ask the LLM; export: write the stored labels as JSONL",
    )
    labelling.add_arguments(parser, required=False)
    parser.add_argument(
        "--split",
        default="test",
        choices=("train", "valid", "test", "all", "sample"),
        help="items to label (default: test, 1,010 items; sample: the people's sample)",
    )
    parser.add_argument("--out", metavar="FILE", help="export: the file to write")
    parser.add_argument(
        "--format",
        default="jsonl",
        choices=("jsonl", "reccon"),
        help="export: jsonl (every label, default) or reccon (RECCON's JSON layout, one source)",
    )
    parser.add_argument(
        "--source",
        default="human",
        choices=("human", "llm"),
        help="export --format reccon: the human majority (default) or an LLM run",
    )
    parser.add_argument(
        "--run", metavar="ID", help="export --format reccon --source llm: the run (default newest)"
    )
    add_data_argument(parser)
    add_json_argument(parser)


def _export(args: argparse.Namespace) -> int:
    from etclib.core.errors import ConfigError
    from etclib.studies.causes import LICENCE, export_jsonl

    if not args.out:
        raise ConfigError("etclib causes export needs --out FILE (.jsonl, or .json for reccon).")
    if args.format == "reccon":
        from etclib.data.corpus import load_corpus
        from etclib.studies.causes import export_reccon

        got = export_reccon(
            args.out, load_corpus(args.data), source=args.source, run_id=args.run, db=args.db
        )
        if args.json:
            print(json.dumps({"out": args.out, **got, "licence": LICENCE}, ensure_ascii=False))
        else:
            print(
                f"{got['labelled']} labelled utterances of {got['dialogues']} dialogues written "
                f"to {args.out} in RECCON's layout (licence: {got['licence_file']})."
            )
        return 0
    n = export_jsonl(args.out, db=args.db)
    if args.json:
        print(json.dumps({"out": args.out, "labels": n, "licence": LICENCE}, ensure_ascii=False))
    else:
        print(f"{n} cause labels written to {args.out} (first line: licence header).")
        print(f"Licence: {LICENCE}")
    return 0


def run(args: argparse.Namespace) -> int:
    from etclib.core.errors import ConfigError

    if args.action == "export":
        return _export(args)
    if not args.provider or not args.model:
        raise ConfigError(
            f"etclib causes needs --provider {'|'.join(provider_names())} and --model NAME "
            "(e.g. --provider gemini --model gemini-2.5-flash)."
        )
    from etclib.data.corpus import load_corpus
    from etclib.studies.causes import CAUSE_TYPES, RECCON_SHARES, label_causes, type_distribution

    corpus = load_corpus(args.data)
    result = label_causes(corpus, args.provider, args.model, **labelling.options(args))
    dist = type_distribution("llm", run_id=result.run_id, db=args.db)
    if args.json:
        out = {**labelling.fields(result), "distribution": dist, "reccon": RECCON_SHARES}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    labelling.report(result, "items")
    if dist:
        print()
        print("cause type        this run (per item)  this run (labels)  RECCON-DD  RECCON-IE")
        for t in CAUSE_TYPES:
            print(
                f"{t:<17} {dist['types'][t]:>18.1f}% {dist['reccon'][t]:>17.1f}% "
                f"{RECCON_SHARES['RECCON-DD'][t]:>9.0f}% {RECCON_SHARES['RECCON-IE'][t]:>9.0f}%"
            )
    return 0
