"""Hit rate at k: 1 when a relevant document is in the top k, else 0.

    Hit@k = [min rankᵢ ≤ k]

With one relevant document per query (the paper's own text), the mean in % is the robustness
suite's T100 (k = 100) and NN1_Ret / NN10_Ret (k = 1, 10) (Singh & Singh).

>>> hit_rate([[3], [120]], k=100).tolist()
[1.0, 0.0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from openmsd.eval.metrics.rows import as_rows

__all__ = ["hit_rate"]


def hit_rate(ranks: ArrayLike, k: int) -> np.ndarray:
    """Hit@k per row of ``ranks``."""
    rows = as_rows(ranks)
    return np.any(rows <= k, axis=1).astype(np.float64)
