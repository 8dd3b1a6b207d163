"""Reciprocal rank (RR; its mean over queries is MRR): one over the best rank of a relevant
document, 0 when none is ranked (within k, when given).

    RR = 1 / min rankᵢ

>>> reciprocal_rank([[3, 7], [np.inf, np.nan]]).tolist()
[0.3333333333333333, 0.0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from openmsd.eval.metrics.rows import as_rows

__all__ = ["reciprocal_rank"]


def reciprocal_rank(ranks: ArrayLike, k: int | None = None) -> np.ndarray:
    """RR (RR@k with ``k``) per row of ``ranks``."""
    rows = as_rows(ranks)
    best = rows[:, 0] if rows.shape[1] else np.full(len(rows), np.inf)
    counted = best <= (np.inf if k is None else k)
    return np.where(counted, 1 / np.where(counted, best, 1), 0.0)
