"""QLoRA supervised fine-tuning on the train split (SPEC "Fine-tuning reference setup").

Each train item becomes one prompt -> completion pair: the prompt is the SPEC prompt
(``etclib.task.build_messages``, zero-shot) rendered with the base model's chat template up to
the assistant's turn; the completion is the reference transcription followed by the template's
end-of-turn marker. The loss is computed on the completion tokens only: every prompt (and
padding) position has the label ``-100``. Validation loss on the valid split is computed every
``eval_steps`` steps.

The run uses a plain ``transformers.Trainer`` with this masking (no TRL), a PEFT LoRA adapter
and, by default, a 4-bit NF4 base (bitsandbytes, double quantisation, bf16 compute) with paged
AdamW 8-bit: the reference setup. ``--no-4bit`` trains a full-precision base with AdamW
(``adamw_torch``), which also runs on a CPU.

The output folder holds the adapter (``adapter_config.json``, ``adapter_model.safetensors``),
the tokenizer, ``training_config.json`` (every setting, resolved, with library versions, prompt
signature and corpus hash), ``loss.json`` and ``loss.csv`` (the loss curve, rewritten at every
log so an interrupted run keeps it) and ``checkpoints/``.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__, config
from .corpus import Corpus, load_corpus
from .errors import ConfigError, DependencyError, TrainError
from .task import Item, build_messages, prompt_template
from .task import items as split_items

#: Default LoRA target modules: every linear projection of a Llama block.
LLAMA_TARGETS: tuple[str, ...] = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
)
IGNORE_INDEX = -100


@dataclass
class TrainConfig:
    """Every setting of a fine-tuning run; defaults are SPEC's reference setup.

    ``batch_size`` is the effective batch: ``micro_batch_size`` examples per step times
    ``batch_size // micro_batch_size`` gradient-accumulation steps.
    """

    base: str
    out: str
    data: str | None = None
    epochs: float = 2.0
    learning_rate: float = 1e-5
    warmup_steps: int = 300
    batch_size: int = 8
    micro_batch_size: int = 2
    eval_steps: int = 200
    save_steps: int = 200
    logging_steps: int = 10
    max_steps: int = -1
    max_length: int = 2048
    load_in_4bit: bool = True
    optim: str | None = None
    gradient_checkpointing: bool | None = None
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_targets: tuple[str, ...] = LLAMA_TARGETS
    seed: int = 0
    limit: int | None = None
    eval_limit: int | None = None
    push_to_hub: str | None = None

    def check(self) -> None:
        """Refuse impossible settings with a message naming the option."""
        positive = (
            "batch_size",
            "micro_batch_size",
            "eval_steps",
            "save_steps",
            "logging_steps",
            "max_length",
            "lora_r",
            "lora_alpha",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(
                    f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}."
                )
        if self.batch_size % self.micro_batch_size:
            raise ConfigError(
                f"--batch-size {self.batch_size} must be a multiple of --micro-batch-size "
                f"{self.micro_batch_size} (effective batch = micro batch x accumulation steps)."
            )
        if self.learning_rate <= 0 or self.epochs <= 0:
            raise ConfigError("--lr and --epochs must be > 0.")
        if self.warmup_steps < 0:
            raise ConfigError(f"--warmup-steps must be >= 0, got {self.warmup_steps}.")
        if not 0 <= self.lora_dropout < 1:
            raise ConfigError(f"--lora-dropout must be in [0, 1), got {self.lora_dropout}.")
        if not self.lora_targets:
            raise ConfigError("--lora-targets must name at least one module.")
        for name in ("limit", "eval_limit"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 1, got {value}.")

    @property
    def accumulation_steps(self) -> int:
        return self.batch_size // self.micro_batch_size

    @property
    def resolved_optim(self) -> str:
        return self.optim or ("paged_adamw_8bit" if self.load_in_4bit else "adamw_torch")


# --- data ---------------------------------------------------------------------------------------


@dataclass
class Example:
    """One tokenised training pair: ``labels`` is ``-100`` on the prompt, the ids elsewhere."""

    key: tuple[int, int, str]
    input_ids: list[int]
    labels: list[int]

    @property
    def prompt_length(self) -> int:
        return next(
            (i for i, lab in enumerate(self.labels) if lab != IGNORE_INDEX), len(self.labels)
        )


def prompt_and_completion(tokenizer: Any, item: Item) -> tuple[str, str]:
    """The chat-templated prompt (up to the assistant's turn) and the completion text.

    The completion is what the template appends for the assistant's reference answer: the
    transcription and the end-of-turn marker. When a template does not render the prompt as a
    prefix of the full conversation, the completion is the transcription plus the EOS token.
    """
    messages = build_messages(item)
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    full = tokenizer.apply_chat_template(
        [*messages, {"role": "assistant", "content": item.reference}], tokenize=False
    )
    if full.startswith(prompt) and item.reference in full[len(prompt) :]:
        return prompt, full[len(prompt) :]
    return prompt, item.reference + (tokenizer.eos_token or "")


def build_examples(
    tokenizer: Any, items: Sequence[Item], max_length: int
) -> tuple[list[Example], list[tuple[int, int, str]]]:
    """Tokenise items into examples; those longer than ``max_length`` are left out (returned)."""
    examples, dropped = [], []
    for it in items:
        prompt, completion = prompt_and_completion(tokenizer, it)
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        c = tokenizer(completion, add_special_tokens=False)["input_ids"]
        if len(p) + len(c) > max_length:
            dropped.append(it.key)
            continue
        examples.append(Example(it.key, p + c, [IGNORE_INDEX] * len(p) + c))
    return examples, dropped


class Collator:
    """Right-pads a batch of examples: pad id in ``input_ids``, -100 in ``labels``, mask 0."""

    def __init__(self, pad_id: int) -> None:
        self.pad_id = pad_id

    def __call__(self, batch: list[dict[str, list[int]]]) -> dict[str, Any]:
        import torch

        width = max(len(b["input_ids"]) for b in batch)
        ids, labels, mask = [], [], []
        for b in batch:
            n = len(b["input_ids"])
            ids.append(b["input_ids"] + [self.pad_id] * (width - n))
            labels.append(b["labels"] + [IGNORE_INDEX] * (width - n))
            mask.append([1] * n + [0] * (width - n))
        return {
            "input_ids": torch.tensor(ids),
            "labels": torch.tensor(labels),
            "attention_mask": torch.tensor(mask),
        }


class ExampleDataset:
    """A list of examples as a map-style dataset of dicts, for ``Trainer``."""

    def __init__(self, examples: list[Example]) -> None:
        self.examples = examples

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> dict[str, list[int]]:
        ex = self.examples[i]
        return {"input_ids": ex.input_ids, "labels": ex.labels}


# --- loss curve ----------------------------------------------------------------------------------


def _loss_callback(out: Path) -> Any:
    from transformers import TrainerCallback

    class LossCurve(TrainerCallback):
        """Rewrites ``loss.json`` and ``loss.csv`` after every log (train or eval)."""

        def __init__(self) -> None:
            self.rows: list[dict[str, Any]] = []

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            logs = logs or {}
            row = {
                "step": state.global_step,
                "epoch": round(state.epoch or 0.0, 4),
                "loss": logs.get("loss"),
                "eval_loss": logs.get("eval_loss"),
                "learning_rate": logs.get("learning_rate"),
            }
            if row["loss"] is None and row["eval_loss"] is None:
                return
            self.rows.append(row)
            write_loss_curve(out, self.rows)

    return LossCurve()


def write_loss_curve(out: Path, rows: list[dict[str, Any]]) -> None:
    """Write the loss curve as ``loss.json`` (a list of rows) and ``loss.csv``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "loss.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    with (out / "loss.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(
            f, fieldnames=["step", "epoch", "loss", "eval_loss", "learning_rate"]
        )
        writer.writeheader()
        writer.writerows(rows)


# --- model -------------------------------------------------------------------------------------


def require_training_stack() -> None:
    """Import check for the training libraries, naming the fix."""
    try:
        import peft  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise DependencyError(
            f"Fine-tuning needs torch, transformers, peft and accelerate ({exc}): "
            "`pip install torch transformers peft accelerate bitsandbytes`."
        ) from None


def check_four_bit_training(cfg: TrainConfig) -> None:
    """4-bit (and the paged 8-bit optimiser) need bitsandbytes and CUDA; say what to do if not."""
    import torch

    needs_bnb = cfg.load_in_4bit or "8bit" in cfg.resolved_optim
    if not needs_bnb:
        return
    what = "4-bit QLoRA" if cfg.load_in_4bit else f"the optimiser {cfg.resolved_optim!r}"
    if not torch.cuda.is_available():
        raise TrainError(
            f"{what} needs a CUDA GPU with bitsandbytes, and no GPU is visible. Pass --no-4bit "
            "to train a full-precision base (slow; for smoke tests on a CPU), or run on a GPU."
        )
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        raise TrainError(
            f"{what} needs bitsandbytes: `pip install bitsandbytes`, or pass --no-4bit."
        ) from None


def load_for_training(cfg: TrainConfig) -> tuple[Any, Any]:
    """The base model (4-bit if asked, prepared for k-bit training) with a fresh LoRA adapter."""
    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cuda = torch.cuda.is_available()
    try:
        tokenizer = AutoTokenizer.from_pretrained(cfg.base)
        kwargs: dict[str, Any] = {}
        if cfg.load_in_4bit:
            from .backends.hf import four_bit_config

            kwargs.update(
                quantization_config=four_bit_config(), device_map={"": 0}, dtype=torch.bfloat16
            )
        elif cuda:
            kwargs.update(
                dtype=torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32,
                device_map={"": 0},
            )
        model = AutoModelForCausalLM.from_pretrained(cfg.base, **kwargs)
    except OSError as exc:
        raise TrainError(
            f"Cannot load base model {cfg.base!r}: {exc}. Give a local folder or a hub id this "
            "machine can download (gated models need HF_TOKEN)."
        ) from None
    if not getattr(tokenizer, "chat_template", None):
        raise TrainError(
            f"The tokenizer of {cfg.base!r} has no chat template; fine-tune an instruct model."
        )
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    gc = cfg.gradient_checkpointing if cfg.gradient_checkpointing is not None else cuda
    if cfg.load_in_4bit:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gc)
    elif gc:
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()
    lora = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=list(cfg.lora_targets),
        bias="none",
        task_type="CAUSAL_LM",
    )
    try:
        model = get_peft_model(model, lora)
    except ValueError as exc:
        raise TrainError(
            f"Cannot add LoRA to {cfg.base!r}: {exc}. Check --lora-targets "
            f"(now {','.join(cfg.lora_targets)}) against the model's module names."
        ) from None
    return model, tokenizer


# --- the run -----------------------------------------------------------------------------------


@dataclass
class TrainResult:
    """Where the adapter went and how training ended."""

    out: Path
    train_examples: int
    eval_examples: int
    dropped: int
    steps: int
    train_loss: float | None
    eval_loss: float | None
    pushed_to: str | None


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"etclib": __version__, "python": platform.python_version()}
    for pkg in ("torch", "transformers", "peft", "accelerate", "bitsandbytes"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def select_items(corpus: Corpus, split: str, limit: int | None) -> list[Item]:
    """The first ``limit`` items of ``split`` (all when ``limit`` is None), in corpus order."""
    chosen = split_items(corpus, split)
    return chosen[:limit] if limit else chosen


def train(cfg: TrainConfig, corpus: Corpus | None = None) -> TrainResult:
    """Fine-tune ``cfg.base`` with LoRA on the train split and save everything to ``cfg.out``."""
    cfg.check()
    require_training_stack()
    check_four_bit_training(cfg)
    import torch
    from transformers import Trainer, TrainingArguments, set_seed

    from . import progress

    corpus = corpus or load_corpus(cfg.data)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    set_seed(cfg.seed)
    model, tokenizer = load_for_training(cfg)
    train_examples, dropped = build_examples(
        tokenizer, select_items(corpus, "train", cfg.limit), cfg.max_length
    )
    eval_examples, eval_dropped = build_examples(
        tokenizer, select_items(corpus, "valid", cfg.eval_limit), cfg.max_length
    )
    if not train_examples:
        raise TrainError(
            f"No train example fits --max-length {cfg.max_length} tokens "
            f"({len(dropped)} left out); raise --max-length."
        )
    cuda = torch.cuda.is_available()
    bf16 = bool(cuda and torch.cuda.is_bf16_supported())
    args = TrainingArguments(
        output_dir=str(out / "checkpoints"),
        per_device_train_batch_size=cfg.micro_batch_size,
        per_device_eval_batch_size=cfg.micro_batch_size,
        gradient_accumulation_steps=cfg.accumulation_steps,
        num_train_epochs=cfg.epochs,
        max_steps=cfg.max_steps,
        learning_rate=cfg.learning_rate,
        warmup_steps=cfg.warmup_steps,
        lr_scheduler_type="linear",
        optim=cfg.resolved_optim,
        eval_strategy="steps" if eval_examples else "no",
        eval_steps=cfg.eval_steps,
        save_strategy="steps",
        save_steps=cfg.save_steps,
        save_total_limit=2,
        logging_steps=cfg.logging_steps,
        logging_first_step=True,
        bf16=bf16,
        seed=cfg.seed,
        data_seed=cfg.seed,
        report_to="none",
        remove_unused_columns=False,
        disable_tqdm=not progress.enabled(),
        use_cpu=not cuda,
    )
    trainer = Trainer(
        model=model,
        args=args,
        data_collator=Collator(tokenizer.pad_token_id),
        train_dataset=ExampleDataset(train_examples),
        eval_dataset=ExampleDataset(eval_examples) if eval_examples else None,
        processing_class=tokenizer,
        callbacks=[_loss_callback(out)],
    )
    record = {
        "config": {
            k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(cfg).items()
        },
        "resolved": {
            "optim": cfg.resolved_optim,
            "gradient_accumulation_steps": cfg.accumulation_steps,
            "bf16": bf16,
            "device": "cuda" if cuda else "cpu",
            "quantization": "nf4, double quant, bf16 compute" if cfg.load_in_4bit else None,
            "loss": "completion tokens only (prompt labels -100)",
        },
        "data": {
            "corpus": str(corpus.root),
            "corpus_sha256": corpus.content_hash,
            "prompt": prompt_template().signature,
            "train_examples": len(train_examples),
            "valid_examples": len(eval_examples),
            "train_dropped_too_long": [list(k) for k in dropped],
            "valid_dropped_too_long": [list(k) for k in eval_dropped],
        },
        "versions": _versions(),
    }
    (out / "training_config.json").write_text(
        json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    try:
        result = trainer.train()
    except torch.cuda.OutOfMemoryError:  # pragma: no cover - GPU only
        raise TrainError(
            "The GPU ran out of memory: lower --micro-batch-size (the effective --batch-size "
            "stays the same) or --max-length, or keep 4-bit on."
        ) from None
    eval_loss = None
    if eval_examples:
        # The last evaluation at the final step, else one more (it is logged to the loss curve).
        last = [
            h
            for h in trainer.state.log_history
            if "eval_loss" in h and h.get("step") == trainer.state.global_step
        ]
        eval_loss = float(last[-1]["eval_loss"] if last else trainer.evaluate()["eval_loss"])
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    record["result"] = {
        "steps": trainer.state.global_step,
        "train_loss": result.training_loss,
        "eval_loss": eval_loss,
    }
    (out / "training_config.json").write_text(
        json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    pushed = push_adapter(out, cfg.push_to_hub) if cfg.push_to_hub else None
    train_loss = result.training_loss
    return TrainResult(
        out=out,
        train_examples=len(train_examples),
        eval_examples=len(eval_examples),
        dropped=len(dropped),
        steps=trainer.state.global_step,
        train_loss=None if train_loss is None or math.isnan(train_loss) else float(train_loss),
        eval_loss=eval_loss,
        pushed_to=pushed,
    )


def push_adapter(folder: Path, repo: str, private: bool = True) -> str:
    """Upload the adapter folder (not its checkpoints) to the Hub repo ``repo``; return its URL."""
    try:
        from huggingface_hub import HfApi
    except ImportError:
        raise DependencyError(
            "Pushing to the Hub needs huggingface-hub: `pip install huggingface-hub`."
        ) from None
    token = config.setting("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id=repo, private=private, exist_ok=True)
        api.upload_folder(
            repo_id=repo,
            folder_path=str(folder),
            ignore_patterns=["checkpoints/*", "checkpoints/**"],
            commit_message="Upload ETC LoRA adapter (etclib train)",
        )
    except Exception as exc:  # network, auth and hub errors alike: say what to check
        raise TrainError(
            f"Pushing {folder} to the Hub repo {repo!r} failed: {exc}. The adapter is saved "
            "locally; check HF_TOKEN (write access) and the repo name, then retry with "
            "`huggingface-cli upload`."
        ) from None
    return f"https://huggingface.co/{repo}"
