"""QLoRA fine-tuning: label masking, the saved adapter and logs, refusals, pushing to the Hub."""

from __future__ import annotations

import csv
import json

import pytest

from etclib.backends import get_backend
from etclib.cli import COMMANDS, main
from etclib.corpus import load_corpus
from etclib.errors import ConfigError, TrainError
from etclib.finetune import (
    IGNORE_INDEX,
    LLAMA_TARGETS,
    Collator,
    TrainConfig,
    build_examples,
    prompt_and_completion,
    push_adapter,
)
from etclib.task import build_messages, chat_item, items
from tests.data.make_tiny_corpus import write_tiny_corpus
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture

torch = pytest.importorskip("torch")
CUDA = torch.cuda.is_available()


@pytest.fixture(autouse=True)
def _registered(monkeypatch):
    monkeypatch.setitem(COMMANDS, "train", "etclib.cli.train")


@pytest.fixture(scope="module")
def trained(tiny_model, tmp_path_factory):  # noqa: F811
    """Train the tiny model for a few steps through the CLI, once for this module."""
    root = write_tiny_corpus(tmp_path_factory.mktemp("corpus"))
    out = tmp_path_factory.mktemp("adapter")
    with pytest.MonkeyPatch.context() as mp:  # module scope: conftest's isolation is not active yet
        mp.setitem(COMMANDS, "train", "etclib.cli.train")
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("ETC_PROGRESS", "0")
        mp.setenv("ETC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        code = _train_cli(tiny_model, out, root)
    assert code == 0
    return out, root


def _train_cli(model, out, root) -> int:
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
        ]
    )


def tokenizer_of(folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


# --- data -----------------------------------------------------------------------------------


def test_prompt_tokens_are_masked_out_of_the_loss(tiny_model, tiny_corpus):  # noqa: F811
    tok = tokenizer_of(tiny_model)
    train = items(load_corpus(tiny_corpus), "train")[:6]
    examples, dropped = build_examples(tok, train, max_length=4096)
    assert not dropped and len(examples) == 6
    for ex, it in zip(examples, train, strict=True):
        prompt = tok.apply_chat_template(
            build_messages(it), add_generation_prompt=True, tokenize=False
        )
        n = len(tok(prompt, add_special_tokens=False)["input_ids"])
        assert ex.prompt_length == n
        assert ex.labels[:n] == [IGNORE_INDEX] * n
        assert ex.labels[n:] == ex.input_ids[n:]
        assert tok.decode(ex.input_ids[:n]) == prompt
        assert tok.decode(ex.input_ids[n:]) == it.reference + "<|eot|>"
        assert ex.key == it.key


def test_completion_is_what_the_template_appends(tiny_model):  # noqa: F811
    tok = tokenizer_of(tiny_model)
    item = chat_item([("A", "こんにちは")])
    item = type(item)(
        **{**{f: getattr(item, f) for f in item.__slots__}, "reference": "嬉しかった"}
    )
    prompt, completion = prompt_and_completion(tok, item)
    assert prompt.endswith("<|assistant|>")
    assert completion == "嬉しかった<|eot|>"


def test_too_long_examples_are_left_out(tiny_model, tiny_corpus):  # noqa: F811
    tok = tokenizer_of(tiny_model)
    train = items(load_corpus(tiny_corpus), "train")[:3]
    examples, dropped = build_examples(tok, train, max_length=10)
    assert examples == [] and dropped == [it.key for it in train]


@pytest.mark.parametrize(
    ("lengths", "pad"),
    [([3, 1, 2], 0), ([2], 9), ([4, 4], 5)],
)
def test_collator_right_pads(lengths, pad):
    batch = [
        {"input_ids": list(range(1, n + 1)), "labels": [IGNORE_INDEX] + list(range(2, n + 1))}
        for n in lengths
    ]
    out = Collator(pad)(batch)
    width = max(lengths)
    for row, n in enumerate(lengths):
        assert out["input_ids"][row].tolist() == list(range(1, n + 1)) + [pad] * (width - n)
        assert out["labels"][row].tolist() == [IGNORE_INDEX] + list(range(2, n + 1)) + [
            IGNORE_INDEX
        ] * (width - n)
        assert out["attention_mask"][row].tolist() == [1] * n + [0] * (width - n)


# --- settings -------------------------------------------------------------------------------


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
    from etclib.finetune import train

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


# --- a real (tiny) run ----------------------------------------------------------------------


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


@pytest.mark.skipif(not CUDA, reason="4-bit QLoRA (bitsandbytes) needs a CUDA GPU; none is visible")
def test_4bit_training_on_gpu(tiny_model, tiny_corpus, tmp_path):  # noqa: F811
    from etclib.finetune import train

    cfg = TrainConfig(
        base=str(tiny_model),
        out=str(tmp_path / "o"),
        data=str(tiny_corpus),
        limit=4,
        eval_limit=2,
        max_steps=2,
        batch_size=2,
        micro_batch_size=1,
        warmup_steps=0,
        eval_steps=1,
        logging_steps=1,
        lora_r=4,
        lora_alpha=8,
    )
    result = train(cfg)
    assert result.steps == 2 and (tmp_path / "o" / "adapter_model.safetensors").is_file()


# --- hub ----------------------------------------------------------------------------------------


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
    with pytest.raises(TrainError, match="me/x.*failed.*HF_TOKEN"):
        push_adapter(tmp_path, "me/x")


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    assert "etclib train --base" in text and "--no-4bit" in text and "--push-to-hub" in text
