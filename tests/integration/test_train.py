"""QLoRA fine-tuning on TRL: label masks, settings, the saved (best) adapter, resume, the Hub."""

from __future__ import annotations

import csv
import json
import shutil
import warnings

import pytest

from etclib.cli import COMMANDS, main
from etclib.core.errors import ConfigError, TrainError
from etclib.data.corpus import load_corpus
from etclib.data.task import build_messages, chat_item, items
from etclib.models import get_backend
from etclib.models.finetune import (
    IGNORE_INDEX,
    LLAMA_TARGETS,
    TrainConfig,
    build_dataset,
    build_trainer,
    conversation,
    load_base,
    push_adapter,
)
from tests.conftest import REAL_CORPUS, needs_corpus
from tests.data.make_tiny_corpus import write_tiny_corpus
from tests.data.tiny_model import tiny_llama31, tiny_model  # noqa: F401 - fixtures

torch = pytest.importorskip("torch")


pytest.importorskip("trl")


CUDA = torch.cuda.is_available()


#: The end-of-turn token each tiny template closes the assistant's message with.
END_OF_TURN = {"plain": "<|eot|>", "llama31": "<|eot_id|>"}


@pytest.fixture(autouse=True)
def _registered(monkeypatch):
    monkeypatch.setitem(COMMANDS, "train", "etclib.cli.train")
    monkeypatch.delenv("ETC_HF_DEVICE", raising=False)


@pytest.fixture(scope="module")
def trained(tiny_model, tmp_path_factory):  # noqa: F811
    """Train the tiny model for a few steps through the CLI, once for this module."""
    root = write_tiny_corpus(tmp_path_factory.mktemp("corpus"))
    out = tmp_path_factory.mktemp("adapter")
    with pytest.MonkeyPatch.context() as mp:  # module scope: conftest's isolation is not active yet
        mp.setitem(COMMANDS, "train", "etclib.cli.train")
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("ETC_PROGRESS", "0")
        mp.delenv("ETC_HF_DEVICE", raising=False)
        mp.setenv("ETC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        code = _train_cli(tiny_model, out, root)
    assert code == 0
    return out, root


def _train_cli(model, out, root, *extra: str) -> int:
    return main(
        [
            "train",
            "--base",
            str(model),
            "--out",
            str(out),
            "--data",
            str(root),
            "--no-4bit",
            "--limit",
            "8",
            "--eval-limit",
            "3",
            "--max-steps",
            "4",
            "--batch-size",
            "2",
            "--micro-batch-size",
            "1",
            "--lr",
            "0.02",
            "--warmup-steps",
            "0",
            "--eval-steps",
            "2",
            "--logging-steps",
            "1",
            "--lora-r",
            "4",
            "--lora-alpha",
            "8",
            "--seed",
            "3",
            "--max-length",
            "1024",
            *extra,
        ]
    )


def tokenizer_of(folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def old_rule(tok, item, reference):
    """``(input_ids, labels)`` by the pre-TRL rule, recomputed here from the chat template.

    The prompt is the conversation rendered up to the assistant's turn; the completion is what
    the template appends when the assistant answers ``reference``; both are tokenised apart and
    the prompt's labels are -100. ``None`` where that rule fell back (the prompt is not a prefix
    of the whole conversation, or the reference is not in what follows it).
    """
    messages = build_messages(item)
    prompt = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    full = tok.apply_chat_template(
        [*messages, {"role": "assistant", "content": reference}], tokenize=False
    )
    if not (full.startswith(prompt) and reference in full[len(prompt) :]):
        return None
    p = tok(prompt, add_special_tokens=False)["input_ids"]
    c = tok(full[len(prompt) :], add_special_tokens=False)["input_ids"]
    return p + c, [IGNORE_INDEX] * len(p) + c


def trl_examples(model_dir, chosen, tmp_path):
    """The tokenizer and the train examples exactly as etclib's SFTTrainer prepares them."""
    cfg = TrainConfig(
        base=str(model_dir), out=str(tmp_path), load_in_4bit=False, max_length=100_000
    )
    model, tok = load_base(cfg, "cpu")
    dataset, dropped = build_dataset(tok, chosen, cfg.max_length)
    assert dropped == []
    trainer = build_trainer(cfg, model, tok, dataset, None, tmp_path, "cpu")
    assert trainer.completion_only_loss
    return tok, trainer.train_dataset


def assert_masks_match(tok, chosen, prepared, style):
    assert len(prepared) == len(chosen)
    for it, row in zip(chosen, prepared, strict=True):
        answer = it.reference.strip()
        expected = old_rule(tok, it, answer)
        assert expected is not None, it.key  # the stripped reference never falls back
        ids, labels = expected
        assert row["input_ids"] == ids, it.key
        assert row["labels"] == labels, it.key
        trained = [t for t in row["labels"] if t != IGNORE_INDEX]
        assert tok.decode(trained) == answer + END_OF_TURN[style], it.key
        assert trained[-1] == tok.convert_tokens_to_ids(END_OF_TURN[style])


def test_trl_trains_on_the_answer_and_end_of_turn_only(tiny_model, tiny_corpus, tmp_path):  # noqa: F811
    chosen = items(load_corpus(tiny_corpus), "train")
    tok, prepared = trl_examples(tiny_model, chosen, tmp_path)
    assert_masks_match(tok, chosen, prepared, "plain")


def _shapes(train):
    """Every kind of train item: newline-led and multi-line references, first and deep turns,
    both roles, the longest context, and an even sample of the rest."""
    picked = {it.key: it for it in train if it.reference != it.reference.strip()}
    picked.update((it.key, it) for it in train if "\n" in it.reference.strip())
    for role in ("speaker", "listener"):
        first = min((it for it in train if it.role == role), key=lambda it: len(it.context))
        picked[first.key] = first
    longest = max(train, key=lambda it: sum(len(line.text) for line in it.context))
    picked[longest.key] = longest
    picked.update((it.key, it) for it in train[::80])
    return list(picked.values())


@needs_corpus
@pytest.mark.parametrize("style", ["plain", "llama31"])
def test_trl_masks_equal_the_old_rule_on_the_real_train_split(
    style,
    tiny_model,  # noqa: F811
    tiny_llama31,  # noqa: F811
    tmp_path,
):
    train = items(load_corpus(REAL_CORPUS), "train")
    chosen = _shapes(train)
    newline_led = [it for it in chosen if it.reference.startswith("\n")]
    assert len(newline_led) == 35  # all of them
    assert {it.role for it in chosen} == {"speaker", "listener"}
    model_dir = tiny_model if style == "plain" else tiny_llama31
    tok, prepared = trl_examples(model_dir, chosen, tmp_path)
    assert_masks_match(tok, chosen, prepared, style)


def test_newline_led_reference_is_stripped_on_a_trimming_template(tiny_llama31, tmp_path):  # noqa: F811
    item = chat_item([("A", "旅行の話です。"), ("B", "どこに行きましたか？")])
    item = type(item)(
        **{**{f: getattr(item, f) for f in item.__slots__}, "reference": "\n嬉しかった"}
    )
    tok = tokenizer_of(tiny_llama31)
    # The bug: with the raw reference, the old rule fell back (and trained "\n" + text + EOS).
    assert old_rule(tok, item, item.reference) is None
    assert conversation(item)["completion"] == [{"role": "assistant", "content": "嬉しかった"}]
    tok, prepared = trl_examples(tiny_llama31, [item], tmp_path)
    assert_masks_match(tok, [item], prepared, "llama31")


def test_too_long_examples_are_left_out(tiny_model, tiny_corpus):  # noqa: F811
    tok = tokenizer_of(tiny_model)
    train = items(load_corpus(tiny_corpus), "train")[:3]
    dataset, dropped = build_dataset(tok, train, max_length=10)
    assert len(dataset) == 0 and dropped == [it.key for it in train]
    full = [
        len(tok.apply_chat_template(build_messages(it), add_generation_prompt=True)["input_ids"])
        for it in train
    ]
    dataset, dropped = build_dataset(tok, train, max_length=min(full) + 2)
    # Longer ones are left out whole, never truncated into an answer that does not end.
    assert len(dataset) + len(dropped) == 3 and len(dropped) >= 1


def test_gradient_checkpointing_is_non_reentrant(tiny_model, tiny_corpus, tmp_path):  # noqa: F811
    cfg = TrainConfig(
        base=str(tiny_model),
        out=str(tmp_path),
        load_in_4bit=False,
        gradient_checkpointing=True,
        max_steps=2,
        batch_size=1,
        micro_batch_size=1,
        warmup_steps=0,
        lora_r=4,
        lora_alpha=8,
    )
    model, tok = load_base(cfg, "cpu")
    dataset, _ = build_dataset(tok, items(load_corpus(tiny_corpus), "train")[:2], 4096)
    trainer = build_trainer(cfg, model, tok, dataset, None, tmp_path, "cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.train()
    from transformers.modeling_layers import GradientCheckpointingLayer

    layers = [m for m in trainer.model.modules() if isinstance(m, GradientCheckpointingLayer)]
    assert len(layers) == 2  # both decoder layers of the tiny Llama
    for layer in layers:
        assert layer.gradient_checkpointing
        assert layer._gradient_checkpointing_func.keywords == {"use_reentrant": False}
    assert not [w for w in caught if "use_reentrant" in str(w.message)]
    assert trainer.args.gradient_checkpointing_kwargs == {"use_reentrant": False}


def _adapter_weights(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def spoil_after(step: int):
    """A trainer callback that, at the end of step ``step``, adds large noise to every LoRA B
    matrix: the adapter then changes the base far more than training did, so every later
    validation loss is far above the earlier ones, on any device (no overshoot to hope for)."""
    from transformers import TrainerCallback

    class Spoil(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            if state.global_step == step:
                with torch.no_grad():
                    for name, weight in model.named_parameters():
                        if "lora_B" in name:
                            noise = torch.Generator(device=weight.device).manual_seed(0)
                            weight.add_(
                                torch.randn(
                                    weight.shape,
                                    generator=noise,
                                    device=weight.device,
                                    dtype=weight.dtype,
                                )
                            )

    return Spoil()


def test_best_adapter_by_validation_loss_is_kept(tiny_model, tiny_corpus, tmp_path, monkeypatch):  # noqa: F811
    from etclib.models import finetune

    built = finetune.build_trainer

    def with_spoiler(*args, **kwargs):
        trainer = built(*args, **kwargs)
        trainer.add_callback(spoil_after(2))
        return trainer

    monkeypatch.setattr(finetune, "build_trainer", with_spoiler)
    out = tmp_path / "o"
    cfg = TrainConfig(
        base=str(tiny_model),
        out=str(out),
        data=str(tiny_corpus),
        load_in_4bit=False,
        limit=8,
        eval_limit=3,
        max_steps=4,
        batch_size=1,
        micro_batch_size=1,
        learning_rate=0.02,
        warmup_steps=0,
        eval_steps=1,
        logging_steps=1,
        lora_r=4,
        lora_alpha=8,
        seed=0,
    )
    result = finetune.train(cfg)
    curve = json.loads((out / "loss.json").read_text(encoding="utf-8"))
    evals = {r["step"]: r["eval_loss"] for r in curve if r["eval_loss"] is not None}
    assert sorted(evals) == [1, 2, 3, 4]
    best = min(evals, key=evals.get)
    assert best in (1, 2) and min(evals[3], evals[4]) > evals[best], evals
    assert result.best_step == best and result.eval_loss == pytest.approx(evals[best])
    kept = _adapter_weights(out)
    best_ckpt = _adapter_weights(out / "checkpoints" / f"checkpoint-{best}")
    last_ckpt = _adapter_weights(out / "checkpoints" / "checkpoint-4")
    assert kept.keys() == best_ckpt.keys()
    assert all(torch.equal(kept[k], best_ckpt[k]) for k in kept)
    assert not all(torch.equal(kept[k], last_ckpt[k]) for k in kept)
    record = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    assert record["result"]["best_step"] == best
    assert record["resolved"]["adapter_kept"] == "lowest eval_loss"


def test_save_steps_must_be_a_multiple_of_eval_steps():
    with pytest.raises(ConfigError, match="--save-steps 300 must be a positive multiple"):
        TrainConfig(base="m", out="o", save_steps=300, eval_steps=200).check()
    TrainConfig(base="m", out="o", save_steps=400, eval_steps=200).check()
    assert TrainConfig(base="m", out="o").resolved_save_steps == 200


def test_an_interrupted_run_resumes_from_its_last_checkpoint(
    tiny_model,  # noqa: F811
    tiny_corpus,
    tmp_path,
    capsys,
):
    out = tmp_path / "o"
    assert _train_cli(tiny_model, out, tiny_corpus) == 0
    first = json.loads((out / "loss.json").read_text(encoding="utf-8"))
    # Interrupted after step 2: the step-4 checkpoint and the final adapter never got written.
    shutil.rmtree(out / "checkpoints" / "checkpoint-4")
    (out / "adapter_model.safetensors").unlink()
    capsys.readouterr()
    assert _train_cli(tiny_model, out, tiny_corpus) == 0
    assert "resumed from" in capsys.readouterr().out
    record = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    assert record["result"]["resumed_from"].endswith("checkpoint-2")
    assert record["result"]["steps"] == 4 and (out / "adapter_model.safetensors").is_file()
    again = json.loads((out / "loss.json").read_text(encoding="utf-8"))
    # The curve is whole (steps 1-2 from the checkpoint's history, 3-4 from the resumed run),
    # and the resumed steps match the uninterrupted run (same data order, same seed).
    assert [r["step"] for r in again] == [r["step"] for r in first]
    for a, b in zip(again, first, strict=True):
        for key in ("loss", "eval_loss"):
            assert (a[key] is None) == (b[key] is None)
            if a[key] is not None:
                assert a[key] == pytest.approx(b[key], rel=1e-4)


def test_resuming_with_other_settings_is_refused_unless_overwrite(
    tiny_model,  # noqa: F811
    tiny_corpus,
    tmp_path,
    capsys,
):
    out = tmp_path / "o"
    assert _train_cli(tiny_model, out, tiny_corpus) == 0
    capsys.readouterr()
    assert _train_cli(tiny_model, out, tiny_corpus, "--lora-r", "8") == 2  # a usage error
    err = capsys.readouterr().err
    assert "lora_r: 4 -> 8" in err and "--overwrite" in err
    assert _train_cli(tiny_model, out, tiny_corpus, "--lora-r", "8", "--overwrite") == 0
    record = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    assert record["config"]["lora_r"] == 8 and record["result"]["resumed_from"] is None


@pytest.mark.parametrize(
    ("setting", "expected"),
    [("cuda:1", {"": 1}), ("cuda:0", {"": 0}), ("cuda:3", {"": 3})],
)
def test_4bit_training_places_the_base_on_the_etc_hf_device_gpu(setting, expected, monkeypatch):
    from etclib.models import finetune

    monkeypatch.setenv("ETC_HF_DEVICE", setting)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    cfg = TrainConfig(base="m", out="o")
    device = finetune.training_device(cfg)
    assert device == setting
    kwargs = finetune.model_load_kwargs(cfg, device)
    assert kwargs["device_map"] == expected
    assert kwargs["quantization_config"].load_in_4bit
    assert kwargs["quantization_config"].bnb_4bit_quant_type == "nf4"


def test_training_on_cpu_when_etc_hf_device_says_so(monkeypatch):
    from etclib.models import finetune

    monkeypatch.setenv("ETC_HF_DEVICE", "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    cfg = TrainConfig(base="m", out="o")
    assert finetune.training_device(cfg) == "cpu"
    with pytest.raises(TrainError, match="--no-4bit"):
        finetune.check_four_bit_training(cfg, "cpu")
    assert "device_map" not in finetune.model_load_kwargs(
        TrainConfig(base="m", out="o", load_in_4bit=False), "cpu"
    )


def test_defaults_are_the_reference_setup():
    cfg = TrainConfig(base="m", out="o")
    assert (cfg.epochs, cfg.learning_rate, cfg.warmup_steps, cfg.batch_size, cfg.eval_steps) == (
        2.0,
        1e-5,
        300,
        8,
        200,
    )
    assert cfg.load_in_4bit and cfg.resolved_optim == "paged_adamw_8bit"
    assert cfg.micro_batch_size * cfg.accumulation_steps == 8
    assert cfg.lora_targets == LLAMA_TARGETS
    assert TrainConfig(base="m", out="o", load_in_4bit=False).resolved_optim == "adamw_torch"


def test_the_sft_config_carries_the_reference_setup(tmp_path):
    from etclib.models.finetune import sft_config

    args = sft_config(TrainConfig(base="m", out=str(tmp_path)), tmp_path, "cpu", has_eval=True)
    assert type(args).__name__ == "SFTConfig"
    assert (args.num_train_epochs, args.learning_rate, args.warmup_steps) == (2.0, 1e-5, 300)
    assert args.per_device_train_batch_size * args.gradient_accumulation_steps == 8
    assert args.optim == "paged_adamw_8bit" and args.lr_scheduler_type == "linear"
    assert args.eval_strategy == "steps" and args.eval_steps == 200 and args.save_steps == 200
    assert args.load_best_model_at_end and args.metric_for_best_model == "eval_loss"
    assert args.greater_is_better is False
    assert args.completion_only_loss is True and args.assistant_only_loss is False
    assert args.packing is False and args.max_length == 2048
    on_gpu_settings = sft_config(
        TrainConfig(base="m", out=str(tmp_path), gradient_checkpointing=True),
        tmp_path,
        "cpu",
        has_eval=False,
    )
    assert on_gpu_settings.gradient_checkpointing
    assert on_gpu_settings.gradient_checkpointing_kwargs == {"use_reentrant": False}
    assert not on_gpu_settings.load_best_model_at_end and on_gpu_settings.eval_strategy == "no"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"batch_size": 8, "micro_batch_size": 3}, "multiple of --micro-batch-size"),
        ({"learning_rate": 0}, "--lr"),
        ({"lora_r": 0}, "--lora-r"),
        ({"lora_dropout": 1.0}, "--lora-dropout"),
        ({"lora_targets": ()}, "--lora-targets"),
        ({"limit": 0}, "--limit"),
        ({"warmup_steps": -1}, "--warmup-steps"),
    ],
)
def test_bad_settings_are_refused(changes, message):
    with pytest.raises(ConfigError, match=message):
        TrainConfig(base="m", out="o", **changes).check()


@pytest.mark.skipif(CUDA, reason="checks the CPU refusal; a GPU is present")
def test_4bit_without_a_gpu_says_to_pass_no_4bit(tiny_model, tiny_corpus, tmp_path, capsys):  # noqa: F811
    code = main(
        [
            "train",
            "--base",
            str(tiny_model),
            "--out",
            str(tmp_path / "o"),
            "--data",
            str(tiny_corpus),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "needs a CUDA GPU" in err and "--no-4bit" in err


def test_bad_lora_targets(tiny_model, tiny_corpus, tmp_path):  # noqa: F811
    from etclib.models.finetune import train

    cfg = TrainConfig(
        base=str(tiny_model),
        out=str(tmp_path / "o"),
        data=str(tiny_corpus),
        load_in_4bit=False,
        lora_targets=("no_such_proj",),
        limit=2,
        max_steps=1,
    )
    with pytest.raises(TrainError, match="--lora-targets"):
        train(cfg)


def test_training_saves_adapter_tokenizer_config_and_loss_curve(trained):
    out, _ = trained
    for name in (
        "adapter_config.json",
        "adapter_model.safetensors",
        "tokenizer_config.json",
        "training_config.json",
        "loss.json",
        "loss.csv",
    ):
        assert (out / name).is_file(), name
    record = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    assert record["config"]["learning_rate"] == 0.02
    assert record["config"]["lora_r"] == 4
    assert record["resolved"]["optim"] == "adamw_torch"
    assert record["resolved"]["gradient_accumulation_steps"] == 2
    assert record["data"]["train_examples"] == 8 and record["data"]["valid_examples"] == 3
    assert record["result"]["steps"] == 4
    adapter = json.loads((out / "adapter_config.json").read_text(encoding="utf-8"))
    assert adapter["r"] == 4 and set(adapter["target_modules"]) == set(LLAMA_TARGETS)
    curve = json.loads((out / "loss.json").read_text(encoding="utf-8"))
    train_steps = [r["step"] for r in curve if r["loss"] is not None]
    eval_steps = [r["step"] for r in curve if r["eval_loss"] is not None]
    assert train_steps == [1, 2, 3, 4] and eval_steps == [2, 4]
    with (out / "loss.csv").open(encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == len(curve)
    losses = [r["loss"] for r in curve if r["loss"] is not None]
    assert losses[-1] < losses[0]  # it learned something


def test_the_adapter_reloads_and_changes_the_output(trained, tiny_model):  # noqa: F811
    out, root = trained
    chats = [it for it in items(load_corpus(root), "test")[:3]]
    base = get_backend("hf", model=str(tiny_model), max_new_tokens=8)
    tuned = get_backend("hf", model=str(tiny_model), adapter=str(out), max_new_tokens=8)
    assert tuned.signature()["adapter"] == str(out)
    assert base.predict(chats) != tuned.predict(chats)
    # Reloading gives the same answers: the adapter on disk is the trained one.
    again = get_backend("hf", model=str(tiny_model), adapter=str(out), max_new_tokens=8)
    assert again.predict(chats) == tuned.predict(chats)


class FakeApi:
    calls: list[tuple[str, dict]] = []
    fail = False

    def __init__(self, token=None):
        FakeApi.calls.append(("init", {"token": token}))

    def create_repo(self, **kw):
        FakeApi.calls.append(("create_repo", kw))

    def upload_folder(self, **kw):
        if FakeApi.fail:
            raise RuntimeError("401 Unauthorized")
        FakeApi.calls.append(("upload_folder", kw))


def test_push_adapter_uploads_the_folder_without_checkpoints(tmp_path, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    FakeApi.calls, FakeApi.fail = [], False
    url = push_adapter(tmp_path, "me/etc-lora")
    assert url == "https://huggingface.co/me/etc-lora"
    kinds = dict(FakeApi.calls)
    assert kinds["init"] == {"token": "hf_x"}
    assert kinds["create_repo"]["repo_id"] == "me/etc-lora" and kinds["create_repo"]["exist_ok"]
    assert kinds["upload_folder"]["folder_path"] == str(tmp_path)
    assert "checkpoints/*" in kinds["upload_folder"]["ignore_patterns"]


def test_push_failure_is_a_train_error(tmp_path, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    FakeApi.calls, FakeApi.fail = [], True
    with pytest.raises(TrainError, match="me/x.*failed.*HF_TOKEN") as info:
        push_adapter(tmp_path, "me/x")
    # huggingface_hub 1.x installs the `hf` command; `huggingface-cli` is gone.
    message = str(info.value)
    assert f"`hf upload me/x {tmp_path} . --private" in message
    assert "huggingface-cli" not in message


def test_the_upload_hint_is_a_valid_hf_command(tmp_path, monkeypatch):
    """The hint's command line parses with the installed `hf` CLI (its --help, no upload)."""
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    FakeApi.calls, FakeApi.fail = [], True
    with pytest.raises(TrainError) as info:
        push_adapter(tmp_path, "me/x")
    command = str(info.value).split("`")[-2]
    argv = shlex.split(command)
    hf = Path(sys.executable).with_name("hf")
    if not hf.is_file():
        pytest.skip("the hf command is not installed beside this Python")
    usage = subprocess.run([str(hf), "upload", "--help"], capture_output=True, text=True)
    assert usage.returncode == 0
    assert argv[:2] == ["hf", "upload"]
    for option in (a for a in argv if a.startswith("--")):
        assert option in usage.stdout, option


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    assert "etclib train --base" in text and "--no-4bit" in text and "--push-to-hub" in text


def test_trl_loads_the_base_from_model_init_kwargs(tiny_model, tiny_corpus, tmp_path, monkeypatch):  # noqa: F811
    """train() hands TRL the base by name with SFTConfig(model_init_kwargs=...): the 4-bit NF4
    quantization_config (model_load_kwargs) reaches TRL's own from_pretrained; no model of ours."""
    from trl import SFTConfig

    from etclib.models import finetune

    cfg = TrainConfig(base=str(tiny_model), out=str(tmp_path / "o"), load_in_4bit=False)
    kwargs = finetune.model_load_kwargs(TrainConfig(base="m", out="o"), "cuda:0")
    assert kwargs["quantization_config"].bnb_4bit_quant_type == "nf4"
    args = finetune.sft_config(cfg, tmp_path, "cpu", False, kwargs)
    assert isinstance(args, SFTConfig) and args.model_init_kwargs is kwargs
    tok = finetune.load_tokenizer(cfg)
    dataset, _ = finetune.build_dataset(
        tok, items(load_corpus(tiny_corpus), "train")[:4], cfg.max_length
    )
    trainer = finetune.build_trainer(cfg, cfg.base, tok, dataset, None, tmp_path, "cpu")
    assert trainer.args.model_init_kwargs == finetune.model_load_kwargs(cfg, "cpu")
    assert type(trainer.model).__name__.startswith("PeftModel")
    bad = TrainConfig(
        base=str(tmp_path / "no-such-base"), out=str(tmp_path / "o"), load_in_4bit=False
    )
    with pytest.raises(TrainError, match="Cannot load base model"):
        finetune.build_trainer(bad, bad.base, tok, dataset, None, tmp_path, "cpu")
