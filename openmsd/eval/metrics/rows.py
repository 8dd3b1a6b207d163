"""Ranks as rows: the one input of every metric of :mod:`openmsd.eval.metrics`.

A query's row holds the 1-based ranks of its relevant documents: ``inf`` for a relevant
document that was not ranked (outside a top-k list), ``nan`` for padding, so that queries with
different numbers of relevant documents share one (queries × slots) float matrix. R, a query's
number of relevant documents, is the count of its non-``nan`` slots.

>>> rank_rows(np.array([0, 0, 1]), np.array([4, 2, 1])).tolist()
[[2.0, 4.0], [1.0, nan]]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["as_rows", "n_relevant", "rank_rows"]


def rank_rows(query: ArrayLike, rank: ArrayLike, n_queries: int | None = None,
              values: ArrayLike | None = None) -> np.ndarray:
    """The (queries × max R) matrix of flat (query, rank) pairs: ``query`` holds each pair's
    row (0 … n_queries − 1), ``rank`` its rank. Each row is sorted by rank and padded with
    ``nan``. With ``values`` (one per pair, e.g. relevance grades), the matrix holds those
    values in the same places instead (padding 0): the companion of the rank matrix."""
    query = np.asarray(query, np.int64)
    rank = np.asarray(rank, np.float64)
    n_queries = int(query.max()) + 1 if n_queries is None and len(query) else n_queries or 0
    order = np.lexsort((rank, query))
    counts = np.bincount(query, minlength=n_queries)
    width = int(counts.max()) if len(query) else 0
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(len(query)) - starts[query[order]]
    if values is None:
        out = np.full((n_queries, width), np.nan)
        out[query[order], slot] = rank[order]
    else:
        out = np.zeros((n_queries, width))
        out[query[order], slot] = np.asarray(values, np.float64)[order]
    return out


def as_rows(ranks: ArrayLike) -> np.ndarray:
    """``ranks`` as a float matrix whose rows are sorted ascending (``nan`` padding last); one
    query's ranks (1-D) become one row."""
    rows = np.atleast_2d(np.asarray(ranks, np.float64))
    return np.sort(rows, axis=1)


def n_relevant(rows: np.ndarray) -> np.ndarray:
    """R per row: its slots that are not padding."""
    return np.count_nonzero(~np.isnan(rows), axis=1)
