"""A dense member scored the way a learned ranker must learn it: out of fold.

:class:`HeldOutDense` scores a query paper of fold ``f`` with vectors from a head fitted
without fold ``f``'s links, the query's and the candidates' alike
(:func:`openmsd.train.adapter.held_out.held_out_vectors`). It stands in for an adapter while
``openmsd train ranker`` scores its members; the ranker it trains then reads the adapter fitted
on every link.

>>> papers = Papers(["a", "b", "c"], ["", "", ""], ["en"] * 3)
>>> fold0 = np.array([[1, 0], [1, 0], [0, 1]], np.float32)  # a and b alike to fold 0's head
>>> fold1 = np.array([[1, 0], [0, 1], [0, 1]], np.float32)  # b and c alike to fold 1's head
>>> scorer = HeldOutDense(papers, ["a", "b", "c"], np.array([0, 1, 1]), [fold0, fold1], "x")
>>> scorer.score(Queries.of_rows(papers, [0, 1]), np.arange(3)).tolist()
[[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openmsd.rank.scorer import ExactScorer, Papers, Queries

__all__ = ["HeldOutDense"]


class HeldOutDense(ExactScorer):
    """Dot products of the vectors of each query's own fold (a free text has none: ``-inf``);
    papers without a vector score ``-inf``."""

    def __init__(self, papers: Papers, ids: Sequence[str], folds: np.ndarray,
                 matrices: Sequence[np.ndarray], name: str):
        self.papers, self.name = papers, name
        where = {paper: i for i, paper in enumerate(ids)}
        at = np.array([where.get(p, -1) for p in papers.ids], np.int64)
        self.present = at >= 0
        self.folds = np.where(self.present, np.asarray(folds)[np.maximum(at, 0)], -1)
        self.matrices = [np.asarray(m, np.float32)[np.maximum(at, 0)] for m in matrices]

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        out = np.full((len(queries), len(candidates)), -np.inf, np.float32)
        rows = np.asarray(queries.rows, np.int64)
        fold = np.where(rows >= 0, self.folds[np.maximum(rows, 0)], -1)
        for f, matrix in enumerate(self.matrices):
            mine = np.flatnonzero((fold == f) & (rows >= 0))
            if len(mine):
                out[mine] = matrix[rows[mine]] @ matrix[candidates].T
        out[:, ~self.present[candidates]] = -np.inf
        return out
