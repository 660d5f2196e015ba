"""`etclib judge calibrate` end to end: CLI -> runner -> real SDK -> fake server -> studies db.

The scripted judge splits a text into sentences (one unit per "。"-ended sentence) and calls a
unit Supported when it occurs verbatim in the target, so the expected numbers are worked out
here from the texts alone.
"""

from __future__ import annotations

import math

import pytest

from etclib.studies import judge_calibration as cal
from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401


@pytest.mark.parametrize(
    ("mean", "verdict"),
    [
        (1.35, "close to the paper's"),
        (1.35 + 0.2 * 0.64 - 1e-9, "close to the paper's"),
        (1.35 - 0.3 * 0.64, "somewhat off the paper's"),
        (1.35 + 0.5 * 0.64 - 1e-9, "somewhat off the paper's"),
        (1.35 + 0.51 * 0.64, "far from the paper's"),
        (0.0, "far from the paper's"),
        (math.nan, "not measured"),
    ],
)
def test_verdict_band(mean, verdict):
    assert cal.band(mean, 1.35, 0.64)[1] == verdict
