"""``hf``: a causal LM run in-process with transformers, optionally with a LoRA adapter and 4-bit.

The task prompt is rendered with the model's chat template; decoding is greedy, batches are
left-padded, longest prompts first. Options fall back to the ``ETC_HF_*`` settings. The site
lists it as usable only when ``ETC_HF_MODEL`` is set, so it never loads an 8B model unasked.
docs/models.md, "Settings".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from etclib.core import config
from etclib.core.errors import BackendError, DependencyError
from etclib.data.task import Item, build_messages
from etclib.models.base import (
    Backend,
    Progress,
    Shots,
    as_bool,
    batched,
    clean,
    messages_for,
    positive_int,
)

DEFAULT_MODEL = "tokyotech-llm/Llama-3.1-Swallow-8B-Instruct-v0.3"
#: End-of-turn tokens of common chat templates, used as extra stop tokens when in the vocabulary.
END_OF_TURN_TOKENS = ("<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>", "<|eot|>")


def require_torch_stack() -> None:
    """Import check for torch + transformers, with the fix in the message."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise DependencyError(
            f"The hf backend needs torch and transformers ({exc}). Install them with "
            "`pip install torch transformers peft accelerate` (and bitsandbytes for 4-bit)."
        ) from None


def four_bit_config() -> Any:
    """The reference QLoRA quantisation: NF4, double quantisation, bfloat16 compute."""
    import torch
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )


def check_four_bit(what: str = "4-bit loading") -> None:
    """Raise ``BackendError`` unless bitsandbytes and a CUDA GPU are available."""
    import torch

    if not torch.cuda.is_available():
        raise BackendError(
            f"{what} needs a CUDA GPU (bitsandbytes NF4), and none is visible. Run without 4-bit "
            "(--no-4bit / load_in_4bit=false) or on a GPU machine."
        )
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        raise DependencyError(
            f"{what} needs bitsandbytes: `pip install bitsandbytes`, or run without 4-bit."
        ) from None


def four_bit_device_map(device: str | None) -> dict[str, int]:
    """``from_pretrained``'s ``device_map`` for a 4-bit model: all of it on the CUDA device
    ``ETC_HF_DEVICE`` names (none: the current one); NF4 weights live on a GPU."""
    import torch

    try:
        dev = torch.device(device or "cuda")
    except RuntimeError:
        raise BackendError(
            f"ETC_HF_DEVICE={device!r} is not a device name; use cuda, cuda:N or cpu."
        ) from None
    if dev.type != "cuda":
        raise BackendError(
            f"4-bit loading needs a CUDA device, but ETC_HF_DEVICE is {device!r}. Set it to "
            "cuda or cuda:N, or load without 4-bit."
        )
    return {"": dev.index if dev.index is not None else torch.cuda.current_device()}


def stop_token_ids(tokenizer: Any, model: Any) -> list[int]:
    """Token ids that end the assistant's turn: EOS, the generation config's EOS, end-of-turn."""
    candidates: list[Any] = [tokenizer.eos_token_id]
    gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    candidates += gen_eos if isinstance(gen_eos, list) else [gen_eos]
    vocab = tokenizer.get_vocab()
    candidates += [vocab.get(t) for t in END_OF_TURN_TOKENS]
    return list(dict.fromkeys(c for c in candidates if isinstance(c, int)))


def load_model(
    model: str,
    adapter: str | None = None,
    load_in_4bit: bool = False,
    device: str | None = None,
) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` for generation: eval mode, left padding, a pad token."""
    require_torch_stack()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if load_in_4bit:
        check_four_bit("The hf backend's 4-bit loading")
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer_source = model
    if adapter and (Path(adapter) / "tokenizer_config.json").is_file():
        tokenizer_source = adapter  # the adapter was saved with the tokenizer it was trained with
    try:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_source)
        kwargs: dict[str, Any] = {}
        if load_in_4bit:
            kwargs["quantization_config"] = four_bit_config()
            kwargs["device_map"] = four_bit_device_map(device)
            kwargs["dtype"] = torch.bfloat16
        elif device.startswith("cuda"):
            kwargs["dtype"] = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        lm = AutoModelForCausalLM.from_pretrained(model, **kwargs)
    except OSError as exc:
        raise BackendError(
            f"Cannot load model {model!r}: {exc}. Give a local folder or a hub id that this "
            "machine can download (check HF_TOKEN for gated models, HF_HUB_OFFLINE)."
        ) from None
    if not load_in_4bit:
        lm.to(device)
    if adapter:
        try:
            from peft import PeftModel
        except ImportError:
            raise DependencyError("Loading an adapter needs peft: `pip install peft`.") from None
        try:
            lm = PeftModel.from_pretrained(lm, adapter)
        except (OSError, ValueError) as exc:
            raise BackendError(
                f"Cannot load adapter {adapter!r} onto {model!r}: {exc}. Give the folder that "
                "`etclib train` wrote (it holds adapter_config.json) or a hub id."
            ) from None
    lm.eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not getattr(tokenizer, "chat_template", None):
        raise BackendError(
            f"The tokenizer of {tokenizer_source!r} has no chat template; use an instruct/chat "
            "model (or one fine-tuned with `etclib train`, which saves its template)."
        )
    return lm, tokenizer


class HFBackend(Backend):
    """A transformers causal LM (optionally LoRA and 4-bit), greedy decoding, batched."""

    name = "hf"
    description = "In-process transformers model (optional LoRA adapter, 4-bit); GPU advised."
    uses_prompt = True

    def __init__(
        self,
        model: str | None = None,
        adapter: str | None = None,
        load_in_4bit: bool | str | None = None,
        max_new_tokens: int | str | None = None,
        batch_size: int | str | None = None,
        device: str | None = None,
    ) -> None:
        """Load the model now (this is the slow part); settings fill the options not given."""

        def given(value: Any, name: str, default: str) -> Any:
            return value if value is not None else config.setting(name, default)

        self.model_name = model or config.setting("ETC_HF_MODEL") or DEFAULT_MODEL
        self.adapter = adapter or config.setting("ETC_HF_ADAPTER")
        self.load_in_4bit = as_bool(
            given(load_in_4bit, "ETC_HF_4BIT", "0"), "load_in_4bit", self.name
        )
        self.max_new_tokens = positive_int(
            given(max_new_tokens, "ETC_HF_MAX_NEW_TOKENS", "256"), "max_new_tokens", self.name
        )
        self.batch_size = positive_int(
            given(batch_size, "ETC_HF_BATCH_SIZE", "8"), "batch_size", self.name
        )
        self.model, self.tokenizer = load_model(
            self.model_name,
            self.adapter,
            self.load_in_4bit,
            device or config.setting("ETC_HF_DEVICE"),
        )
        self.stop_ids = stop_token_ids(self.tokenizer, self.model)

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        import importlib.util

        # find_spec, not import: listing backends must not pay for importing torch.
        missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
        if missing:
            return False, (
                f"needs {' and '.join(missing)}: `pip install torch transformers peft accelerate`"
            )
        model = config.setting("ETC_HF_MODEL")
        if not model:
            return False, (
                "set ETC_HF_MODEL (and optionally ETC_HF_ADAPTER, ETC_HF_4BIT=1) to load a model "
                "in this process; a GPU is advised"
            )
        adapter = config.setting("ETC_HF_ADAPTER")
        return True, f"ready ({model}{' + ' + adapter if adapter else ''})"

    # --- generation --------------------------------------------------------------------------

    def prompt_text(self, messages: list[dict[str, str]]) -> str:
        """The messages rendered with the model's chat template, ready for the answer."""
        return self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )

    def _inputs(self, prompts: list[str]) -> Any:
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        return enc.to(self.model.device)

    def _generate_kwargs(self) -> dict[str, Any]:
        return {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": False,
            "temperature": None,
            "top_p": None,
            "top_k": None,
            "eos_token_id": self.stop_ids,
            "pad_token_id": self.tokenizer.pad_token_id,
        }

    def generate(self, prompts: list[str]) -> list[str]:
        """Greedy answers for already-templated prompts, in one left-padded batch."""
        import torch

        enc = self._inputs(prompts)
        with torch.inference_mode():
            out = self.model.generate(**enc, **self._generate_kwargs())
        new = out[:, enc["input_ids"].shape[1] :]
        return [clean(t) for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]

    def predict(
        self,
        items: Sequence[Item],
        progress: Progress | None = None,
        shots: Shots | None = None,
    ) -> list[str]:
        prompts = [self.prompt_text(m) for m in messages_for(items, shots)]
        # Longest first: similar lengths share a batch (less padding), and memory peaks early.
        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
        out: list[str] = [""] * len(prompts)
        for batch in batched(order, self.batch_size):
            idx = [order[i] for i in batch]
            for i, text in zip(idx, self.generate([prompts[i] for i in idx]), strict=True):
                out[i] = text
            if progress:
                progress(len(idx))
        return out

    def stream(self, item: Item, shots: Sequence[Item] = ()) -> Iterator[str]:
        """Yield the answer as it is generated; closing the iterator early (the chat's stop
        button) stops generation at the next token."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList, TextIteratorStreamer

        cancel = threading.Event()

        class Cancelled(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):  # noqa: ANN001
                return torch.full(
                    (input_ids.shape[0],),
                    cancel.is_set(),
                    dtype=torch.bool,
                    device=input_ids.device,
                )

        enc = self._inputs([self.prompt_text(build_messages(item, list(shots)))])
        streamer = TextIteratorStreamer(
            self.tokenizer, skip_prompt=True, skip_special_tokens=True, timeout=600
        )
        errors: list[BaseException] = []

        def work() -> None:
            try:
                with torch.inference_mode():
                    self.model.generate(
                        **enc,
                        **self._generate_kwargs(),
                        streamer=streamer,
                        stopping_criteria=StoppingCriteriaList([Cancelled()]),
                    )
            except BaseException as exc:  # reported to the consumer below
                errors.append(exc)
                streamer.end()

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        started = False
        try:
            for chunk in streamer:
                if not started:
                    chunk = chunk.lstrip()
                    started = bool(chunk)
                if chunk:
                    yield chunk
        finally:
            cancel.set()
            thread.join()
        if errors:
            raise BackendError(f"Generation failed for {self.model_name!r}: {errors[0]}")

    def signature(self) -> dict[str, Any]:
        sig = super().signature()
        sig.update(
            model=self.model_name,
            adapter=self.adapter,
            load_in_4bit=self.load_in_4bit,
            decoding="greedy",
            max_new_tokens=self.max_new_tokens,
        )
        return sig


BACKEND = HFBackend
