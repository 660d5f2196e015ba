"""Tiny models built locally from a config, for tests that must never download anything."""

from __future__ import annotations

from pathlib import Path

JA_CHARS = "私は相手が嬉しい悲しかった思いましたと感じてを伝えたくて気持ちになった旅行仕事試験料理映画犬もっと話したい共感驚き怖いでしたです。、"


def make_tiny_bert(path: Path, layers: int = 2) -> Path:
    """A random 2-layer BERT with a character vocabulary (Japanese) and a saved tokenizer."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(JA_CHARS))
    (path / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    tok = BertTokenizerFast(vocab_file=str(path / "vocab.txt"), model_max_length=128)
    tok.save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
    )
    BertModel(cfg).save_pretrained(path)
    return path
