"""Significance and confidence from :mod:`scipy.stats`: the paired two-tailed t-test
(``ttest_rel``) and the half-width of a 95 % Student-t confidence interval of a mean.

    t = mean(d) / (sd(d) / √n),  d = x − y;   half-width = t₀.₉₇₅,ₙ₋₁ · sd(x) / √n

>>> paired_t_test([1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 2.5, 2.0])["t"]
2.8284
>>> round(confidence_half_width([1.0, 2.0, 3.0]), 4)
2.4841
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["confidence_half_width", "paired_t_test"]


def paired_t_test(x: ArrayLike, y: ArrayLike) -> dict[str, Any]:
    """Two-tailed paired t-test of ``x`` against ``y`` (one value per query, same order):
    ``n_queries``, ``mean_difference`` (x − y), ``t`` (4 decimals) and ``p``; ``t``/``p`` None
    when fewer than two queries or no difference at all, ``mean_difference`` None with no
    query."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    out: dict[str, Any] = {"n_queries": len(x), "t": None, "p": None,
                           "mean_difference": round(float((x - y).mean()), 4)
                           if len(x) else None}
    if len(x) > 1 and np.any(x != y):
        test = stats.ttest_rel(x, y)
        if math.isfinite(test.statistic):
            out.update(t=round(float(test.statistic), 4), p=float(test.pvalue))
    return out


def confidence_half_width(values: ArrayLike, level: float = 0.95) -> float:
    """Half the width of the ``level`` confidence interval of the mean of ``values`` (at least
    two; 0 when they are all equal)."""
    data = np.asarray(values, np.float64)
    if len(data) < 2:
        raise ValueError("confidence_half_width: needs at least two values")
    if data.std() == 0:
        return 0.0
    return float(stats.sem(data) * stats.t.ppf((1 + level) / 2, len(data) - 1))
