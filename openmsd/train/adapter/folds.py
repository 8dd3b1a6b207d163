"""Folds of papers for cross-validating an adapter on held-out train links.

Each paper of the train split falls in one of ``k`` folds by a seeded md5 of its id. Fold
``f`` is held out whole: the head learns from the rows whose papers are all outside it and is
judged on the pairs whose two papers are both inside it, ranking the fold's papers, as the
SDSM tasks rank a test split's papers that the model never saw.

>>> fold_of(["a", "b", "c", "d"], 2, seed=0).tolist()
[1, 1, 1, 0]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

__all__ = ["fold_of", "inside", "outside"]


def fold_of(ids: Sequence[str], k: int, seed: int = 0) -> np.ndarray:
    """The fold (0 … k−1) of each id."""
    return np.array([int(hashlib.md5(f"{paper}|{seed}".encode()).hexdigest()[:8], 16) % k
                     for paper in ids], np.int64)


def outside(rows: np.ndarray, folds: np.ndarray, fold: int) -> np.ndarray:
    """The rows (positions; -1 for none) with no paper in ``fold``."""
    held = folds[np.maximum(rows, 0)] == fold
    return rows[~(held & (rows >= 0)).any(axis=1)]


def inside(queries: np.ndarray, docs: np.ndarray, folds: np.ndarray, fold: int) -> np.ndarray:
    """Which (query, doc) pairs (positions) have both papers in ``fold``."""
    return (folds[queries] == fold) & (folds[docs] == fold)
