"""Normalised discounted cumulative gain at k (trec_eval's ``ndcg_cut_k``, ranx's ``ndcg@k``).

    DCG@k = Σ_{rankᵢ ≤ k} gᵢ / log₂(rankᵢ + 1),   nDCG@k = DCG@k / IDCG@k

where IDCG@k is the DCG of the ideal ranking: the R relevant documents at ranks 1 … R in
decreasing gain. Gains are 1 (binary relevance) or the grades given (Järvelin's form).

>>> ndcg([[1, 3]], k=10).round(4).tolist()  # (1 + 1/2) / (1 + 1/log₂3)
[0.9197]
>>> ndcg([[1, 2]], k=10, gains=[[1, 2]]).round(4).tolist()  # (1 + 2/log₂3) / (2 + 1/log₂3)
[0.8597]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from openmsd.eval.metrics.rows import as_rows

__all__ = ["ndcg"]


def ndcg(ranks: ArrayLike, k: int, gains: ArrayLike | None = None) -> np.ndarray:
    """nDCG@k per row of ``ranks``; ``gains`` (same shape, each relevant document's grade)
    for graded relevance. 0 for a row without a relevant document."""
    raw = np.atleast_2d(np.asarray(ranks, np.float64))
    if gains is None:
        rows = as_rows(raw)
        grade = np.where(np.isnan(rows), 0.0, 1.0)
    else:
        order = np.argsort(raw, axis=1)
        rows = np.take_along_axis(raw, order, axis=1)
        grade = np.take_along_axis(np.atleast_2d(np.asarray(gains, np.float64)), order, axis=1)
        grade = np.where(np.isnan(rows), 0.0, grade)
    counted = rows <= k
    dcg = np.where(counted, grade / np.log2(np.where(counted, rows, 1) + 1), 0.0).sum(axis=1)
    ideal_gains = -np.sort(-grade, axis=1)[:, :k]
    ideal = (ideal_gains / np.log2(np.arange(2, ideal_gains.shape[1] + 2))).sum(axis=1)
    return np.divide(dcg, ideal, out=np.zeros(len(rows)), where=ideal > 0)
