"""Fine-tune a chat model with QLoRA on the train split; save the adapter, config and loss curve.

Supervised fine-tuning with TRL's SFTTrainer on prompt -> transcription pairs, loss on the
transcription only; the adapter kept is the checkpoint with the lowest valid-split loss. The
defaults are the reference setup (4-bit NF4 base, which needs a CUDA GPU and bitsandbytes;
--no-4bit trains a full-precision base). OUT receives the adapter, the tokenizer,
training_config.json, loss.json, loss.csv and checkpoints/; the same command again resumes an
interrupted run. See docs/models.md, "Fine-tuning (QLoRA)".

Examples:
  etclib train --base tokyotech-llm/Llama-3.1-Swallow-8B-Instruct-v0.3 --out runs/swallow-qlora
  etclib train --base ./tiny-llama --out /tmp/smoke --no-4bit --limit 16 --max-steps 4
  etclib train --base tokyotech-llm/Llama-3.1-Swallow-8B-Instruct-v0.3 --out runs/swallow-qlora \\
      --push-to-hub me/etc-swallow-qlora
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from etclib.cli import add_data_argument, add_json_argument
from etclib.models.finetune import LLAMA_TARGETS, TrainConfig, train

_D = TrainConfig(base="", out="")


def _option(parser: argparse.ArgumentParser, flag: str, help: str, field: str = "") -> None:
    """An option setting ``TrainConfig.<field>`` (default: named as the flag), typed as its
    default, which ``{}`` in ``help`` shows."""
    default = getattr(_D, field or flag[2:].replace("-", "_"))
    parser.add_argument(
        flag,
        dest=field or None,
        metavar=flag[2:].replace("-", "_").upper(),
        type=type(default),
        default=default,
        help=help.format(default),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--base", required=True, metavar="MODEL", help="base chat model: hub id or folder")
    add("--out", required=True, metavar="DIR", help="folder for the adapter and logs")
    _option(parser, "--epochs", "default: {:g}")
    _option(parser, "--lr", "learning rate (default: {:g})", "learning_rate")
    _option(parser, "--warmup-steps", "default: {}")
    _option(parser, "--batch-size", "effective batch size (default: {})")
    _option(
        parser,
        "--micro-batch-size",
        "examples per forward pass; the rest is gradient accumulation (default: {})",
    )
    _option(parser, "--eval-steps", "validate every N steps (default: {})")
    add(
        "--save-steps",
        type=int,
        default=None,
        help="checkpoint every N steps, a multiple of --eval-steps (default: --eval-steps)",
    )
    _option(parser, "--logging-steps", "default: {}")
    _option(parser, "--max-steps", "stop after N optimiser steps (default: the epochs decide)")
    _option(
        parser,
        "--max-length",
        "longest example in tokens; longer ones are left out (default: {})",
    )
    add(
        "--4bit",
        dest="load_in_4bit",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="4-bit NF4 base (default: on; --no-4bit to turn off)",
    )
    add(
        "--optim",
        help="optimizer name for transformers (default: paged_adamw_8bit with 4-bit, else adamw_torch)",
    )
    add(
        "--gradient-checkpointing",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="default: on with a GPU",
    )
    _option(parser, "--lora-r", "LoRA rank (default: {})")
    _option(parser, "--lora-alpha", "LoRA alpha (default: {})")
    _option(parser, "--lora-dropout", "default: {}")
    add(
        "--lora-targets",
        default=",".join(LLAMA_TARGETS),
        help="comma-separated module names to adapt (default: %(default)s)",
    )
    _option(parser, "--seed", "default: {}")
    add("--limit", type=int, help="train on the first N train items only (smoke runs)")
    add("--eval-limit", type=int, help="validate on the first N valid items only")
    add(
        "--push-to-hub", metavar="REPO", help="upload the adapter to this Hub repo (needs HF_TOKEN)"
    )
    add(
        "--overwrite",
        action="store_true",
        help="start again, deleting OUT's checkpoints and logs (default: resume a run there "
        "that has the same settings, refuse one with other settings)",
    )
    add_data_argument(parser)
    add_json_argument(parser)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The run's ``TrainConfig`` from parsed arguments (each option is named as its field)."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)}
    targets = tuple(t.strip() for t in args.lora_targets.split(",") if t.strip())
    return TrainConfig(**{**given, "lora_targets": targets})


def run(args: argparse.Namespace) -> int:
    result = train(config_from_args(args), overwrite=args.overwrite)
    summary = {k: (str(v) if k == "out" else v) for k, v in dataclasses.asdict(result).items()}
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        if result.resumed_from:
            print(f"resumed from {result.resumed_from}")
        kept = (
            "the last step's adapter"
            if result.best_step is None
            else f"the adapter of step {result.best_step} (lowest valid loss, "
            f"{result.eval_loss:.4f})"
        )
        print(
            f"{result.out}: {result.steps} steps on {result.train_examples} examples "
            f"({result.dropped} too long, left out); saved {kept}."
        )
        if result.pushed_to:
            print(f"pushed to {result.pushed_to}")
    return 0
