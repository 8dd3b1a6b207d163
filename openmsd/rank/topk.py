"""Exact top-k: the rank package's kernel for picking the best rows of score matrices.

>>> import numpy as np
>>> docs = np.array([[1, 0], [0, 1], [0.6, 0.8]], np.float32)
>>> indices, scores = top_k(np.eye(2, dtype=np.float32), docs, k=2)
>>> indices.tolist()
[[0, 2], [1, 2]]
"""

from __future__ import annotations

import numpy as np

__all__ = ["BLOCK_SIZE", "top_k", "top_k_of_scores"]

#: Query and document rows per block of exact scoring: at most BLOCK_SIZE² scores in memory.
BLOCK_SIZE = 4096


def top_k_of_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of a (rows × columns) score matrix, the column indices and scores of the
    ``min(k, columns)`` highest scores, best first: two (rows × min(k, columns)) arrays.
    Equal scores are ordered by column, except that which of several equal scores at the
    k-th place make the cut is arbitrary."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    k = min(k, scores.shape[1])
    if k < scores.shape[1]:
        candidates = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    else:
        candidates = np.broadcast_to(np.arange(k), scores.shape)
    candidate_scores = np.take_along_axis(scores, candidates, axis=1)
    order = np.lexsort((candidates, -candidate_scores), axis=1)
    return (np.take_along_axis(candidates, order, axis=1),
            np.take_along_axis(candidate_scores, order, axis=1))


def top_k(query_vectors: np.ndarray, doc_vectors: np.ndarray, k: int,
          block_size: int = BLOCK_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` documents by dot product for each query: (queries × dim) and
    (docs × dim) float arrays in, ``(indices, scores)`` out, both (queries × min(k, docs)),
    best first. Scores are computed ``block_size`` queries by ``block_size`` documents at a
    time and merged, so memory stays at about block_size × (block_size + 2k) scores."""
    if query_vectors.ndim != 2 or doc_vectors.ndim != 2 or \
            query_vectors.shape[1] != doc_vectors.shape[1]:
        raise ValueError(f"top_k: shapes {query_vectors.shape} and {doc_vectors.shape} do not "
                         "match: expected (queries × dim) and (docs × dim)")
    if k < 1 or block_size < 1:
        raise ValueError(f"top_k: k and block_size must be at least 1, got {k}, {block_size}")
    n_queries, n_docs = len(query_vectors), len(doc_vectors)
    k = min(k, n_docs)
    indices = np.zeros((n_queries, k), np.int64)
    scores = np.zeros((n_queries, k), np.float32)
    for q in range(0, n_queries, block_size):
        queries = query_vectors[q:q + block_size]
        best = np.zeros((len(queries), 0), np.int64)
        best_scores = np.zeros((len(queries), 0), np.float32)
        for d in range(0, n_docs, block_size):
            block_best, block_scores = top_k_of_scores(queries @ doc_vectors[d:d + block_size].T,
                                                       k)
            merged = np.hstack([best, block_best + d])
            merged_scores = np.hstack([best_scores, block_scores])
            keep, best_scores = top_k_of_scores(merged_scores, k)
            best = np.take_along_axis(merged, keep, axis=1)
        indices[q:q + block_size] = best
        scores[q:q + block_size] = best_scores
    return indices, scores
