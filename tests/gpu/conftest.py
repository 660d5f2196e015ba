"""The GPU tier: every test here runs on a CUDA device, and skips, with the reason, without one."""

from __future__ import annotations

import pytest


def _why_no_cuda() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "needs a CUDA GPU; none is visible"
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        return "4-bit NF4 needs bitsandbytes: pip install bitsandbytes"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _why_no_cuda()
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if "/gpu/" in str(item.path):
                item.add_marker(skip)
