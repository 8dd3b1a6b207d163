"""Average precision (AP), trec_eval's ``map``: every relevant document counts, however deep.

    AP = (1/R) Σᵢ i / rankᵢ

over the relevant documents in rank order (i = 1 … R); a relevant document not ranked adds 0.
``AP@k`` sums only the ranks ≤ k (trec_eval's ``map_cut_k`` and ranx's ``map@k`` still divide
by R; MP-BERT4CR's ``MAP@10`` divides by min(R, k): ``by="cutoff"``).

>>> average_precision([[2, 4]]).tolist()  # (1/2 + 2/4) / 2
[0.5]
>>> average_precision([[2, 5, 40]], k=10, by="cutoff").tolist()  # (1/2 + 2/5) / 3
[0.3]
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from openmsd.eval.metrics.rows import as_rows, n_relevant

__all__ = ["average_precision"]


def average_precision(ranks: ArrayLike, k: int | None = None,
                      by: Literal["relevant", "cutoff"] = "relevant") -> np.ndarray:
    """AP (AP@k with ``k``) per row of ``ranks`` (:mod:`openmsd.eval.metrics.rows`); ``by``:
    divide by R, or by min(R, k). 0 for a row without a relevant document."""
    rows = as_rows(ranks)
    place = np.arange(1, rows.shape[1] + 1)
    counted = rows <= (np.inf if k is None else k)
    total = np.where(counted, place / np.where(counted, rows, 1), 0.0).sum(axis=1)
    relevant = n_relevant(rows)
    if by == "cutoff":
        if k is None:
            raise ValueError("average_precision: by='cutoff' needs k")
        relevant = np.minimum(relevant, k)
    elif by != "relevant":
        raise ValueError(f"average_precision: by must be 'relevant' or 'cutoff', not {by!r}")
    return np.divide(total, relevant, out=np.zeros(len(rows)), where=relevant > 0)
