"""A refused file's message says what is wrong once: the unexpected and missing fields named in
one line, identical problems on consecutive lines grouped ("lines 1–1010: ..."), in the page."""

from __future__ import annotations

import pytest

from etclib.core.errors import Problem, merge_runs


@pytest.mark.parametrize(
    ("problems", "shown"),
    [
        ([Problem(1, "a"), Problem(2, "a"), Problem(3, "a")], ["lines 1–3: a"]),
        ([Problem(1, "a"), Problem(3, "a")], ["line 1: a", "line 3: a"]),  # not consecutive
        ([Problem(1, "a"), Problem(2, "b"), Problem(3, "b")], ["line 1: a", "lines 2–3: b"]),
        ([Problem(0, "whole"), Problem(0, "whole")], ["whole", "whole"]),  # no line: kept
        ([Problem(5, "x", 9), Problem(10, "x")], ["lines 5–10: x"]),
        ([Problem(4, "重複"), Problem(5, "重複")], ["lines 4–5: 重複"]),
        ([], []),
    ],
)
def test_merge_runs(problems, shown):
    assert [str(p) for p in merge_runs(problems)] == shown
