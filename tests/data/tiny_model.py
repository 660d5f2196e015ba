"""Build a tiny random Llama causal LM and a byte-level tokenizer with a chat template, locally.

Nothing is downloaded: the tokenizer is a byte-level BPE trained in memory on a few Japanese
texts (so any text round-trips), the model a 2-layer Llama with random weights. Both are saved
with ``save_pretrained`` to a folder that ``from_pretrained`` loads like a hub model.

Two chat templates: ``plain`` (role markers, ``<|eot|>``, content kept as is) and ``llama31``,
the shape of Llama 3.1's (and Llama-3.1-Swallow's) template: header tokens, a knowledge-date
system block, ``<|eot_id|>`` as end of turn and EOS, no pad token, and message content trimmed.
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

#: Llama 3.1's template, cut to what text-only chats use (no tools): note ``| trim``.
LLAMA31_TEMPLATE = (
    "{{- bos_token }}"
    "{%- if messages[0]['role'] == 'system' %}"
    "{%- set system_message = messages[0]['content'] | trim %}"
    "{%- set messages = messages[1:] %}"
    "{%- else %}{%- set system_message = '' %}{%- endif %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}"
    "{{- 'Cutting Knowledge Date: December 2023\\n' }}"
    "{{- 'Today Date: 26 Jul 2024\\n\\n' }}"
    "{{- system_message }}{{- '<|eot_id|>' }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + "
    "message['content'] | trim + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)
#: Llama 3's pre-tokenisation pattern (its tokenizer.json): newlines, letters, digits and
#: punctuation are split apart before BPE, so no token spans the prompt/answer boundary.
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA31_SPECIALS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
]


def _training_texts() -> list[str]:
    from etclib.data.task import prompt_template

    t = prompt_template()
    texts = [t.system, t.instruction.template, t.examples_header, t.example.template]
    texts += [
        "旅行の話1の1番目です。私はどう思いますか？",
        "旅行について1回目に話したくて嬉しかった1",
        "仕事 試験 料理 映画 引っ越し 誕生日 犬 共感したくて あなたは",
        "相手の話に共感して、私も嬉しい気持ちになりました。",
    ]
    return texts


def build_tokenizer(vocab_size: int = 600, style: str = "plain"):
    """A fast tokenizer: byte-level BPE learned from the prompt template, with a chat template.

    ``style`` is ``plain`` or ``llama31`` (see the module docstring).
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if style == "llama31":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS if style == "plain" else LLAMA31_SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_training_texts(), trainer=trainer)
    if style == "llama31":
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok,
            bos_token="<|begin_of_text|>",
            eos_token="<|eot_id|>",
            additional_special_tokens=LLAMA31_SPECIALS[1:4],
        )
        fast.chat_template = LLAMA31_TEMPLATE
        return fast
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|bos|>",
        eos_token="<|eot|>",
        pad_token="<|pad|>",
        additional_special_tokens=["<|system|>", "<|user|>", "<|assistant|>"],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(folder: Path, seed: int = 0, style: str = "plain") -> Path:
    """Save a tiny random Llama and its tokenizer (``style`` template) to ``folder``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer(style=style)
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


@pytest.fixture(scope="session")
def tiny_llama31(tmp_path_factory) -> Path:
    """A tiny Llama whose tokenizer has Llama 3.1's chat template (which trims content)."""
    if "llama31" not in _BUILT:
        _BUILT["llama31"] = build_tiny_model(
            tmp_path_factory.mktemp("tiny-llama31"), style="llama31"
        )
    return _BUILT["llama31"]
