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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base", required=True, metavar="MODEL", help="base chat model: hub id or folder"
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="folder for the adapter and logs"
    )
    parser.add_argument("--epochs", type=float, default=_D.epochs, help=f"default: {_D.epochs:g}")
    parser.add_argument(
        "--lr",
        type=float,
        default=_D.learning_rate,
        help=f"learning rate (default: {_D.learning_rate:g})",
    )
    parser.add_argument(
        "--warmup-steps", type=int, default=_D.warmup_steps, help=f"default: {_D.warmup_steps}"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=_D.batch_size,
        help=f"effective batch size (default: {_D.batch_size})",
    )
    parser.add_argument(
        "--micro-batch-size",
        type=int,
        default=_D.micro_batch_size,
        help=f"examples per forward pass; the rest is gradient accumulation (default: {_D.micro_batch_size})",
    )
    parser.add_argument(
        "--eval-steps",
        type=int,
        default=_D.eval_steps,
        help=f"validate every N steps (default: {_D.eval_steps})",
    )
    parser.add_argument(
        "--save-steps",
        type=int,
        default=None,
        help="checkpoint every N steps, a multiple of --eval-steps (default: --eval-steps)",
    )
    parser.add_argument(
        "--logging-steps", type=int, default=_D.logging_steps, help=f"default: {_D.logging_steps}"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=_D.max_steps,
        help="stop after N optimiser steps (default: the epochs decide)",
    )
    parser.add_argument(
        "--max-length",
        type=int,
        default=_D.max_length,
        help=f"longest example in tokens; longer ones are left out (default: {_D.max_length})",
    )
    parser.add_argument(
        "--4bit",
        dest="load_in_4bit",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="4-bit NF4 base (default: on; --no-4bit to turn off)",
    )
    parser.add_argument(
        "--optim",
        help="optimizer name for transformers (default: paged_adamw_8bit with 4-bit, else adamw_torch)",
    )
    parser.add_argument(
        "--gradient-checkpointing",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="default: on with a GPU",
    )
    parser.add_argument(
        "--lora-r", type=int, default=_D.lora_r, help=f"LoRA rank (default: {_D.lora_r})"
    )
    parser.add_argument(
        "--lora-alpha",
        type=int,
        default=_D.lora_alpha,
        help=f"LoRA alpha (default: {_D.lora_alpha})",
    )
    parser.add_argument(
        "--lora-dropout", type=float, default=_D.lora_dropout, help=f"default: {_D.lora_dropout}"
    )
    parser.add_argument(
        "--lora-targets",
        default=",".join(LLAMA_TARGETS),
        help="comma-separated module names to adapt (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=_D.seed, help=f"default: {_D.seed}")
    parser.add_argument(
        "--limit", type=int, help="train on the first N train items only (smoke runs)"
    )
    parser.add_argument("--eval-limit", type=int, help="validate on the first N valid items only")
    parser.add_argument(
        "--push-to-hub", metavar="REPO", help="upload the adapter to this Hub repo (needs HF_TOKEN)"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="start again, deleting OUT's checkpoints and logs (default: resume a run there "
        "that has the same settings, refuse one with other settings)",
    )
    add_data_argument(parser)
    add_json_argument(parser)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The run's ``TrainConfig`` from parsed arguments."""
    return TrainConfig(
        base=args.base,
        out=args.out,
        data=args.data,
        epochs=args.epochs,
        learning_rate=args.lr,
        warmup_steps=args.warmup_steps,
        batch_size=args.batch_size,
        micro_batch_size=args.micro_batch_size,
        eval_steps=args.eval_steps,
        save_steps=args.save_steps,
        logging_steps=args.logging_steps,
        max_steps=args.max_steps,
        max_length=args.max_length,
        load_in_4bit=args.load_in_4bit,
        optim=args.optim,
        gradient_checkpointing=args.gradient_checkpointing,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        lora_dropout=args.lora_dropout,
        lora_targets=tuple(t.strip() for t in args.lora_targets.split(",") if t.strip()),
        seed=args.seed,
        limit=args.limit,
        eval_limit=args.eval_limit,
        push_to_hub=args.push_to_hub,
    )


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
