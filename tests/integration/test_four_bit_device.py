"""4-bit loading puts the whole model on the GPU that ETC_HF_DEVICE names (not always GPU 0).

There is no GPU here, so these are unit-level checks: the ``device_map`` handed to
``from_pretrained`` is recorded, the 4-bit prerequisites check is replaced by a no-op, and the
model itself loads in full precision on the CPU (the recorded arguments are what matter).
"""

from __future__ import annotations

import pytest

from etclib.core.errors import BackendError
from etclib.models import get_backend, hf
from tests.data.tiny_model import tiny_model  # noqa: F401 - fixture

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("device", "expected"),
    [("cuda:1", {"": 1}), ("cuda:0", {"": 0}), ("cuda:7", {"": 7})],
)
def test_device_map_is_the_named_gpu(device, expected):
    assert hf.four_bit_device_map(device) == expected


def test_device_map_without_a_name_is_the_current_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 5)
    assert hf.four_bit_device_map(None) == {"": 5}
    assert hf.four_bit_device_map("cuda") == {"": 5}


@pytest.mark.parametrize(
    ("device", "message"), [("cpu", "needs a CUDA device"), ("gpu", "not a device")]
)
def test_device_map_refuses_what_cannot_hold_4bit(device, message):
    with pytest.raises(BackendError, match=message):
        hf.four_bit_device_map(device)


@pytest.fixture
def recorded(monkeypatch):
    """Record ``from_pretrained``'s arguments; load the tiny model in full precision instead."""
    from transformers import AutoModelForCausalLM

    calls: list[dict] = []
    real = AutoModelForCausalLM.from_pretrained

    def fake(name, **kwargs):
        calls.append(kwargs)
        return real(name)

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", fake)
    monkeypatch.setattr(hf, "check_four_bit", lambda what="": None)
    return calls


@pytest.mark.parametrize("setting", ["cuda:1", "cuda:3"])
def test_hf_backend_4bit_honours_etc_hf_device(setting, tiny_model, recorded, monkeypatch):  # noqa: F811
    monkeypatch.setenv("ETC_HF_DEVICE", setting)
    backend = get_backend("hf", model=str(tiny_model), load_in_4bit=True, max_new_tokens=2)
    assert backend.load_in_4bit
    (kwargs,) = recorded
    assert kwargs["device_map"] == {"": int(setting.split(":")[1])}
    assert kwargs["quantization_config"].load_in_4bit


def test_hf_backend_4bit_option_beats_the_setting(tiny_model, recorded, monkeypatch):  # noqa: F811
    monkeypatch.setenv("ETC_HF_DEVICE", "cuda:1")
    get_backend("hf", model=str(tiny_model), load_in_4bit=True, device="cuda:2", max_new_tokens=2)
    assert recorded[0]["device_map"] == {"": 2}
