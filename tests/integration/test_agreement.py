"""Agreement statistics against hand-worked tables and independent implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from etclib.metrics.agreement import (
    binary_fleiss_kappa,
    binary_fleiss_with_ci,
    bootstrap_ci,
    cohen_kappa,
    kappa_with_ci,
)


@pytest.mark.parametrize("seed", [0, 5])
def test_vectorised_intervals_equal_the_generic_bootstrap(seed):
    rng = np.random.default_rng(seed)
    votes = rng.random((120, 3)) < np.array([0.3, 0.4, 0.35])
    votes[:, 1] |= votes[:, 0] & (rng.random(120) < 0.5)  # some real agreement
    a, b = votes[:, 0], votes[:, 1]
    fast = kappa_with_ci(a, b, [False, True], n_resamples=300, seed=seed)
    slow = bootstrap_ci(
        lambda x, y: cohen_kappa(x, y, [False, True]), a, b, n_resamples=300, seed=seed
    )
    assert fast[0] == pytest.approx(cohen_kappa(a, b))
    assert fast[1:] == pytest.approx(slow, abs=1e-12)
    fleiss = binary_fleiss_with_ci(votes, n_resamples=300, seed=seed)
    slow = bootstrap_ci(binary_fleiss_kappa, votes, n_resamples=300, seed=seed)
    assert fleiss[0] == pytest.approx(binary_fleiss_kappa(votes))
    assert fleiss[1:] == pytest.approx(slow, abs=1e-12)
    assert all(math.isnan(v) for v in binary_fleiss_with_ci(np.ones((5, 3), dtype=bool)))
