"""A LoRA adapter folder that ``etclib train`` wrote (:mod:`etclib.models.finetune`): uploaded to the
Hugging Face Hub (:func:`push_adapter`), and identified by its weights, base and training
quantisation (:func:`adapter_fingerprint`, which the site's chat compares with the served
model)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from etclib.core import config
from etclib.core.errors import ConfigError, DependencyError, TrainError

__all__ = ["adapter_fingerprint", "push_adapter"]


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
            f'`hf upload {repo} {folder} . --private --exclude "checkpoints/*"`.'
        ) from None
    return f"https://huggingface.co/{repo}"


def adapter_fingerprint(folder: str | Path) -> dict[str, Any]:
    """What identifies an adapter folder that ``etclib train`` wrote: ``adapter_sha256``,
    ``trained_base`` and ``trained_quantization`` (``"bf16"`` when not quantised); a missing
    file leaves its field None, a missing folder is a ``ConfigError``."""
    import hashlib

    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"Adapter folder {str(root)!r} does not exist (ETC_FINETUNED_ADAPTER).")
    out: dict[str, Any] = dict.fromkeys(("adapter_sha256", "trained_base", "trained_quantization"))
    for name in ("adapter_model.safetensors", "adapter_model.bin"):
        weights = root / name
        if weights.is_file():
            digest = hashlib.sha256()
            with weights.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            out["adapter_sha256"] = digest.hexdigest()
            break
    try:
        adapter = json.loads((root / "adapter_config.json").read_text(encoding="utf-8"))
        out["trained_base"] = adapter.get("base_model_name_or_path")
    except (OSError, ValueError):
        pass
    try:
        record = json.loads((root / "training_config.json").read_text(encoding="utf-8"))
        out["trained_quantization"] = record.get("resolved", {}).get("quantization") or "bf16"
    except (OSError, ValueError):
        pass
    return out
