"""The in-process hf backend in 4-bit NF4 on a CUDA device."""

from __future__ import annotations

from etclib.backends import get_backend
from etclib.task import chat_item
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture
from tests.integration.test_backends import CHATS


def test_hf_4bit_on_gpu(tiny_model):  # noqa: F811
    backend = get_backend("hf", model=str(tiny_model), load_in_4bit=True, max_new_tokens=4)
    import bitsandbytes as bnb

    assert any(isinstance(m, bnb.nn.Linear4bit) for m in backend.model.modules())
    preds = backend.predict([chat_item(c) for c in CHATS])
    assert len(preds) == len(CHATS)
