"""4-bit QLoRA fine-tuning (NF4, bitsandbytes) on a CUDA device."""

from __future__ import annotations

from etclib.finetune import TrainConfig
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture


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
