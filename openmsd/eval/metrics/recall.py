"""Recall at k: the share of the R relevant documents ranked in the top k.

    Recall@k = |{i : rankᵢ ≤ k}| / R

>>> recall([[2, 5, 40]], k=10).round(4).tolist()
[0.6667]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from openmsd.eval.metrics.rows import as_rows, n_relevant

__all__ = ["recall"]


def recall(ranks: ArrayLike, k: int) -> np.ndarray:
    """Recall@k per row of ``ranks``; 0 for a row without a relevant document."""
    rows = as_rows(ranks)
    relevant = n_relevant(rows)
    return np.divide(np.count_nonzero(rows <= k, axis=1), relevant,
                     out=np.zeros(len(rows)), where=relevant > 0)
