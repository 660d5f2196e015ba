"""QLoRA supervised fine-tuning on the train split, on TRL: the reference setup by default.

Each train item is one prompt-completion example: the zero-shot task prompt and the reference
transcription, stripped. TRL's ``SFTTrainer`` computes the loss on the completion only; the
adapter kept is the checkpoint with the lowest valid-split loss. The base is 4-bit NF4 with
paged AdamW 8-bit, or with ``--no-4bit`` full precision with AdamW (also on a CPU). The output
folder, resuming and every default: docs/models.md, "Fine-tuning (QLoRA)".
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import platform
import shutil
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etclib import __version__
from etclib.core import config, progress
from etclib.core.errors import ConfigError, DependencyError, TrainError
from etclib.data.corpus import Corpus, load_corpus
from etclib.data.task import Item, build_messages, prompt_template
from etclib.data.task import items as split_items
from etclib.models.adapter import (
    adapter_fingerprint as adapter_fingerprint,  # re-exported: views/chat.py
)
from etclib.models.adapter import push_adapter

#: Default LoRA target modules: every linear projection of a Llama block.
LLAMA_TARGETS: tuple[str, ...] = tuple(
    "q_proj k_proj v_proj o_proj gate_proj up_proj down_proj".split()
)
IGNORE_INDEX = -100
#: Arguments of ``torch.utils.checkpoint.checkpoint``: the non-reentrant variant that PyTorch
#: recommends (the reentrant default warns at every step and needs input-gradient hooks).
CHECKPOINTING_KWARGS: dict[str, Any] = {"use_reentrant": False}
#: Settings that may differ when an interrupted run is resumed (they do not change the model).
RESUMABLE_CHANGES = ("push_to_hub", "logging_steps")


@dataclass
class TrainConfig:
    """Every setting of a fine-tuning run; defaults are the reference setup (docs/models.md).
    ``batch_size`` is the effective batch (micro batches times accumulation steps);
    ``save_steps`` is a multiple of ``eval_steps``, so every checkpoint has a validation loss."""

    base: str
    out: str
    data: str | None = None
    epochs: float = 2.0
    learning_rate: float = 1e-5
    warmup_steps: int = 300
    batch_size: int = 8
    micro_batch_size: int = 2
    eval_steps: int = 200
    save_steps: int | None = None
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
            "batch_size micro_batch_size eval_steps logging_steps max_length lora_r lora_alpha"
        )
        for name in positive.split():
            if getattr(self, name) < 1:
                raise ConfigError(
                    f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}."
                )
        if self.save_steps is not None and (
            self.save_steps < 1 or self.save_steps % self.eval_steps
        ):
            raise ConfigError(
                f"--save-steps {self.save_steps} must be a positive multiple of --eval-steps "
                f"{self.eval_steps}: the adapter kept is the checkpoint with the best validation "
                "loss, so every checkpoint needs one."
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

    @property
    def resolved_save_steps(self) -> int:
        return self.save_steps or self.eval_steps


# --- data ---------------------------------------------------------------------------------------


def conversation(item: Item) -> dict[str, list[dict[str, str]]]:
    """One item as a TRL prompt-completion example. The reference is stripped: the model is
    taught the transcription, not the stray newline some references start with."""
    return {
        "prompt": build_messages(item),
        "completion": [{"role": "assistant", "content": item.reference.strip()}],
    }


def token_count(tokenizer: Any, example: dict[str, list[dict[str, str]]]) -> int:
    """Tokens of the whole templated conversation (prompt and completion)."""
    ids = tokenizer.apply_chat_template(
        example["prompt"] + example["completion"], tokenize=True, return_dict=True
    )["input_ids"]
    return len(ids)


def build_dataset(
    tokenizer: Any, items: Sequence[Item], max_length: int
) -> tuple[Any, list[tuple[int, int, str]]]:
    """A ``datasets.Dataset`` of prompt-completion examples and the keys left out as longer
    than ``max_length`` (not truncated: a cut completion teaches answers that never end)."""
    from datasets import Dataset

    rows, dropped = [], []
    for it in items:
        example = conversation(it)
        if token_count(tokenizer, example) > max_length:
            dropped.append(it.key)
        else:
            rows.append(example)
    return Dataset.from_list(rows), dropped


# --- loss curve ----------------------------------------------------------------------------------


def _loss_callback(out: Path) -> Any:
    from transformers import TrainerCallback

    class LossCurve(TrainerCallback):
        """Rewrites the loss curve after every log, from the log history (which a resumed run
        restores, so the curve stays whole)."""

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            write_loss_curve(out, loss_rows(state.log_history))

    return LossCurve()


def loss_rows(log_history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The train and eval loss entries of a trainer's log history, as loss-curve rows."""
    return [
        {
            "step": h.get("step"),
            "epoch": round(h.get("epoch") or 0.0, 4),
            "loss": h.get("loss"),
            "eval_loss": h.get("eval_loss"),
            "learning_rate": h.get("learning_rate"),
        }
        for h in log_history
        if h.get("loss") is not None or h.get("eval_loss") is not None
    ]


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
        import datasets  # noqa: F401
        import peft  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
        import trl  # noqa: F401
    except ImportError as exc:
        raise DependencyError(
            f"Fine-tuning needs torch, transformers, trl, peft, datasets and accelerate ({exc}): "
            '`pip install "etclib[train]"`.'
        ) from None


def training_device(cfg: TrainConfig) -> str:
    """``cpu`` or ``cuda:N``: the GPU named by ``ETC_HF_DEVICE`` (else the current one)."""
    import torch

    wanted = config.setting("ETC_HF_DEVICE")
    if not torch.cuda.is_available() or (wanted or "").startswith("cpu"):
        return "cpu"
    from etclib.models.hf import four_bit_device_map

    return f"cuda:{four_bit_device_map(wanted)['']}"


def check_four_bit_training(cfg: TrainConfig, device: str) -> None:
    """4-bit (and the paged 8-bit optimiser) need bitsandbytes and CUDA; say what to do if not."""
    needs_bnb = cfg.load_in_4bit or "8bit" in cfg.resolved_optim
    if not needs_bnb:
        return
    what = "4-bit QLoRA" if cfg.load_in_4bit else f"the optimiser {cfg.resolved_optim!r}"
    if not device.startswith("cuda"):
        raise TrainError(
            f"{what} needs a CUDA GPU with bitsandbytes, and no GPU is visible (or ETC_HF_DEVICE "
            "says cpu). Pass --no-4bit to train a full-precision base (slow; for smoke tests on "
            "a CPU), or run on a GPU."
        )
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        raise TrainError(
            f"{what} needs bitsandbytes: `pip install bitsandbytes`, or pass --no-4bit."
        ) from None


def model_load_kwargs(cfg: TrainConfig, device: str) -> dict[str, Any]:
    """``from_pretrained`` arguments for the base: 4-bit NF4 or full precision, on ``device``."""
    import torch

    if device == "cpu":
        return {"dtype": torch.float32}
    device_map = {"": torch.device(device).index}
    if cfg.load_in_4bit:
        from etclib.models.hf import four_bit_config

        return {
            "quantization_config": four_bit_config(),
            "device_map": device_map,
            "dtype": torch.bfloat16,
        }
    bf16 = torch.cuda.is_bf16_supported()
    return {"dtype": torch.bfloat16 if bf16 else torch.float32, "device_map": device_map}


def load_tokenizer(cfg: TrainConfig) -> Any:
    """The base's tokenizer, checked for a chat template, with a pad token."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(cfg.base)
    except OSError as exc:
        raise TrainError(
            f"Cannot load the tokenizer of base model {cfg.base!r}: {exc}. Give a local folder "
            "or a hub id this machine can download (gated models need HF_TOKEN)."
        ) from None
    if not getattr(tokenizer, "chat_template", None):
        raise TrainError(
            f"The tokenizer of {cfg.base!r} has no chat template; fine-tune an instruct model."
        )
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _base_error(cfg: TrainConfig, exc: Exception) -> TrainError:
    return TrainError(
        f"Cannot load base model {cfg.base!r}: {exc}. Give a local folder or a hub id this "
        "machine can download (gated models need HF_TOKEN)."
    )


def load_base(cfg: TrainConfig, device: str) -> tuple[Any, Any]:
    """The base model (as :func:`model_load_kwargs` says) and its tokenizer, loaded here (for
    callers that need the model itself; :func:`train` lets TRL load it)."""
    from transformers import AutoModelForCausalLM

    tokenizer = load_tokenizer(cfg)
    try:
        model = AutoModelForCausalLM.from_pretrained(cfg.base, **model_load_kwargs(cfg, device))
    except OSError as exc:
        raise _base_error(cfg, exc) from None
    return model, tokenizer


def lora_config(cfg: TrainConfig) -> Any:
    """The peft LoRA adapter of the run."""
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=list(cfg.lora_targets),
        bias="none",
        task_type="CAUSAL_LM",
    )


def _checkpointing_fields(enabled: bool) -> dict[str, Any]:
    """Gradient checkpointing settings under the names this transformers version reads (5.x
    renamed ``gradient_checkpointing*`` to ``activation_checkpointing*``; the old names warn)."""
    from trl import SFTConfig

    names = {f.name for f in dataclasses.fields(SFTConfig)}
    prefix = (
        "activation_checkpointing"
        if "activation_checkpointing" in names
        else "gradient_checkpointing"
    )
    return {prefix: enabled, f"{prefix}_kwargs": dict(CHECKPOINTING_KWARGS) if enabled else None}


def sft_config(
    cfg: TrainConfig,
    out: Path,
    device: str,
    has_eval: bool,
    model_init_kwargs: dict[str, Any] | None = None,
) -> Any:
    """TRL's ``SFTConfig`` for the run; ``model_init_kwargs``: how TRL loads the base by name."""
    import torch
    from trl import SFTConfig

    cuda = device.startswith("cuda")
    bf16 = bool(cuda and torch.cuda.is_bf16_supported())
    checkpointing = cfg.gradient_checkpointing if cfg.gradient_checkpointing is not None else cuda
    return SFTConfig(
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
        eval_strategy="steps" if has_eval else "no",
        eval_steps=cfg.eval_steps,
        save_strategy="steps",
        save_steps=cfg.resolved_save_steps,
        save_total_limit=2,  # the best checkpoint is always kept, plus the latest (to resume)
        load_best_model_at_end=has_eval,
        metric_for_best_model="eval_loss" if has_eval else None,
        greater_is_better=False if has_eval else None,
        logging_steps=cfg.logging_steps,
        logging_first_step=True,
        bf16=bf16,
        fp16=False,
        seed=cfg.seed,
        data_seed=cfg.seed,
        report_to="none",
        disable_tqdm=not progress.enabled(),
        use_cpu=not cuda,
        # Data: the prompt-completion examples are already filtered to max_length tokens.
        completion_only_loss=True,
        assistant_only_loss=False,
        max_length=cfg.max_length,
        packing=False,
        model_init_kwargs=model_init_kwargs,
        **_checkpointing_fields(checkpointing),
    )


def build_trainer(
    cfg: TrainConfig,
    model: Any,
    tokenizer: Any,
    train_dataset: Any,
    eval_dataset: Any | None,
    out: Path,
    device: str,
) -> Any:
    """TRL's ``SFTTrainer`` with a fresh LoRA adapter on ``model`` (loaded, or a name that TRL
    loads as :func:`model_load_kwargs` says)."""
    import datasets
    from trl import SFTTrainer

    if not progress.enabled():
        datasets.disable_progress_bars()  # TRL tokenises with datasets.map, each with a bar
    try:
        with warnings.catch_warnings():
            # peft 0.21 reads transformers 5's deprecated alias once while wrapping the model.
            warnings.filterwarnings(
                "ignore",
                message="`is_gradient_checkpointing` is deprecated",
                category=FutureWarning,
            )
            init = model_load_kwargs(cfg, device) if isinstance(model, str) else None
            return SFTTrainer(
                model=model,
                args=sft_config(cfg, out, device, eval_dataset is not None, init),
                train_dataset=train_dataset,
                eval_dataset=eval_dataset,
                processing_class=tokenizer,
                peft_config=lora_config(cfg),
                callbacks=[_loss_callback(out)],
            )
    except OSError as exc:
        raise _base_error(cfg, exc) from None
    except ValueError as exc:
        if "target module" in str(exc).lower():
            raise TrainError(
                f"Cannot add LoRA to {cfg.base!r}: {exc} Check --lora-targets "
                f"(now {','.join(cfg.lora_targets)}) against the model's module names."
            ) from None
        raise TrainError(f"The trainer refused the settings of this run: {exc}") from None


# --- the run -----------------------------------------------------------------------------------


@dataclass
class TrainResult:
    """Where the adapter went and how training ended; the adapter is the best checkpoint's."""

    out: Path
    train_examples: int
    eval_examples: int
    dropped: int
    steps: int
    train_loss: float | None
    eval_loss: float | None
    best_step: int | None
    resumed_from: str | None
    pushed_to: str | None


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"etclib": __version__, "python": platform.python_version()}
    for pkg in ("torch", "transformers", "trl", "peft", "datasets", "accelerate", "bitsandbytes"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def select_items(corpus: Corpus, split: str, limit: int | None) -> list[Item]:
    """The first ``limit`` items of ``split`` (all when ``limit`` is None), in corpus order."""
    chosen = split_items(corpus, split)
    return chosen[:limit] if limit else chosen


def _settings(cfg: TrainConfig) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(cfg).items()}


def resume_point(out: Path, cfg: TrainConfig, corpus_hash: str, overwrite: bool) -> str | None:
    """The checkpoint to resume from, if ``out`` holds an interrupted run with the same settings;
    a run with other settings is refused unless ``overwrite``, which removes its checkpoints."""
    from transformers.trainer_utils import get_last_checkpoint

    checkpoints = out / "checkpoints"
    last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
    if overwrite:
        shutil.rmtree(checkpoints, ignore_errors=True)
        for name in ("loss.json", "loss.csv", "training_config.json"):
            (out / name).unlink(missing_ok=True)
        return None
    if last is None:
        return None
    try:
        before = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        before = {}
    now = _settings(cfg)
    old = before.get("config", {})
    changed = [
        f"{k}: {old.get(k)!r} -> {now[k]!r}"
        for k in now
        if k not in RESUMABLE_CHANGES and old.get(k) != now[k]
    ]
    if before.get("data", {}).get("corpus_sha256") != corpus_hash:
        changed.append("the corpus")
    if changed:
        raise ConfigError(
            f"{out} holds checkpoints of a run with other settings ({'; '.join(changed)}). Run "
            "the same command to resume it, pass --overwrite to start again, or choose another "
            "--out."
        )
    return last


def train(cfg: TrainConfig, corpus: Corpus | None = None, overwrite: bool = False) -> TrainResult:
    """Fine-tune ``cfg.base`` with LoRA on the train split and save everything to ``cfg.out``."""
    cfg.check()
    require_training_stack()
    device = training_device(cfg)
    check_four_bit_training(cfg, device)
    import torch
    from transformers import set_seed

    corpus = corpus or load_corpus(cfg.data)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    resume = resume_point(out, cfg, corpus.content_hash, overwrite)
    if device.startswith("cuda"):
        # The Trainer puts batches on the current CUDA device: make it the model's.
        torch.cuda.set_device(torch.device(device))
    set_seed(cfg.seed)
    tokenizer = load_tokenizer(cfg)  # the base itself is loaded by TRL (model_init_kwargs)
    train_ds, dropped = build_dataset(
        tokenizer, select_items(corpus, "train", cfg.limit), cfg.max_length
    )
    eval_ds, eval_dropped = build_dataset(
        tokenizer, select_items(corpus, "valid", cfg.eval_limit), cfg.max_length
    )
    if not len(train_ds):
        raise TrainError(
            f"No train example fits --max-length {cfg.max_length} tokens "
            f"({len(dropped)} left out); raise --max-length."
        )
    trainer = build_trainer(
        cfg, cfg.base, tokenizer, train_ds, eval_ds if len(eval_ds) else None, out, device
    )
    if not progress.enabled():
        # Off a terminal the run is quiet (no printed log dicts); loss.csv follows it live.
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)
    args = trainer.args
    record: dict[str, Any] = {
        "config": _settings(cfg),
        "resolved": {
            "trainer": "trl.SFTTrainer",
            "optim": cfg.resolved_optim,
            "gradient_accumulation_steps": cfg.accumulation_steps,
            "save_steps": cfg.resolved_save_steps,
            "bf16": bool(args.bf16),
            "device": device,
            "gradient_checkpointing": bool(args.gradient_checkpointing),
            "gradient_checkpointing_kwargs": args.gradient_checkpointing_kwargs,
            "quantization": "nf4, double quant, bf16 compute" if cfg.load_in_4bit else None,
            "loss": "completion only (TRL prompt-completion: answer and end-of-turn tokens)",
            "adapter_kept": "lowest eval_loss" if len(eval_ds) else "last step",
        },
        "data": {
            "corpus": str(corpus.root),
            "corpus_sha256": corpus.content_hash,
            "prompt": prompt_template().signature,
            "train_examples": len(train_ds),
            "valid_examples": len(eval_ds),
            "train_dropped_too_long": [list(k) for k in dropped],
            "valid_dropped_too_long": [list(k) for k in eval_dropped],
        },
        "versions": _versions(),
    }
    config_file = out / "training_config.json"
    config_file.write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    try:
        result = trainer.train(resume_from_checkpoint=resume)
    except torch.cuda.OutOfMemoryError:  # pragma: no cover - GPU only
        raise TrainError(
            "The GPU ran out of memory: lower --micro-batch-size (the effective --batch-size "
            "stays the same) or --max-length, or keep 4-bit on."
        ) from None
    state = trainer.state
    best_step = None
    eval_loss = None
    if len(eval_ds):
        best_step = int(Path(state.best_model_checkpoint).name.split("-")[-1])
        eval_loss = float(state.best_metric)
    # With an eval set the trainer has loaded the best checkpoint's adapter back.
    trainer.save_model(str(out))
    tokenizer.save_pretrained(out)
    write_loss_curve(out, loss_rows(state.log_history))
    train_loss = result.training_loss
    train_loss = None if train_loss is None or math.isnan(train_loss) else float(train_loss)
    record["result"] = {
        "steps": state.global_step,
        "train_loss": train_loss,
        "eval_loss": eval_loss,
        "best_step": best_step,
        "resumed_from": resume,
    }
    config_file.write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    pushed = push_adapter(out, cfg.push_to_hub) if cfg.push_to_hub else None
    return TrainResult(
        out=out,
        train_examples=len(train_ds),
        eval_examples=len(eval_ds),
        dropped=len(dropped),
        steps=state.global_step,
        train_loss=train_loss,
        eval_loss=eval_loss,
        best_step=best_step,
        resumed_from=resume,
        pushed_to=pushed,
    )
