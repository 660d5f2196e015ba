"""Build a tiny random Llama causal LM and a byte-level tokenizer with a chat template, locally.

Nothing is downloaded: the tokenizer is a byte-level BPE trained in memory on a few Japanese
texts (so any text round-trips), the model a 2-layer Llama with random weights. Both are saved
with ``save_pretrained`` to a folder that ``from_pretrained`` loads like a hub model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: A minimal chat template: role markers and an end-of-turn token, like real instruct models.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|eot|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SPECIALS = ["<|pad|>", "<|bos|>", "<|eot|>", "<|system|>", "<|user|>", "<|assistant|>"]


def _training_texts() -> list[str]:
    from etclib.task import prompt_template

    t = prompt_template()
    texts = [t.system, t.instruction.template, t.examples_header, t.example.template]
    texts += [
        "旅行の話1の1番目です。私はどう思いますか？",
        "旅行について1回目に話したくて嬉しかった1",
        "仕事 試験 料理 映画 引っ越し 誕生日 犬 共感したくて あなたは",
        "相手の話に共感して、私も嬉しい気持ちになりました。",
    ]
    return texts


def build_tokenizer(vocab_size: int = 600):
    """A fast tokenizer: byte-level BPE learned from the prompt template, with a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_training_texts(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|bos|>",
        eos_token="<|eot|>",
        pad_token="<|pad|>",
        additional_special_tokens=["<|system|>", "<|user|>", "<|assistant|>"],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Save a tiny random Llama and its tokenizer to ``folder``; return the folder."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer()
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(cfg)
    # Random init gives near-uniform logits; sharper weights make greedy outputs depend on input.
    with torch.no_grad():
        model.lm_head.weight.mul_(20)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# --- pytest fixture (import it into a test module) -------------------------------------------

_BUILT: dict[str, Path] = {}


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A folder holding the tiny Llama and its tokenizer, built once per test session."""
    if "model" not in _BUILT:
        _BUILT["model"] = build_tiny_model(tmp_path_factory.mktemp("tiny-model"))
    return _BUILT["model"]
