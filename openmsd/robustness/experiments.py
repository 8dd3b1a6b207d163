"""The measurements of Singh & Singh on vectors: alternative-self retrieval (Tasks I and II),
NN1_Ret / NN10_Ret, AOP-10 / AOP-20, pairwise-similarity distributions and the Table 5
capability matrix. Every function takes L2-normalised float32 matrices (cosine = dot product)
and returns numbers; which model made the vectors is the caller's business.

Ranks are 1 + the number of candidates scoring strictly higher than the relevant one
(:func:`openmsd.eval.ranks.relevant_ranks`, no tie order); MRR, T100 and NN1/NN10_Ret are
:mod:`openmsd.eval.metrics`' reciprocal rank and hit rate.

>>> x = np.eye(3, dtype=np.float32)
>>> alternative_self(x, x)
{'MRR': 1.0, 'T100': 100.0, 'n_queries': 3}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from openmsd.eval.metrics import hit_rate, reciprocal_rank
from openmsd.eval.ranks import DenseScorer, relevant_ranks

BLOCK = 512  # query rows per similarity block: (BLOCK × candidates) floats at a time

CAPABILITY_THRESHOLDS: dict[str, tuple[float | None, float | None]] = {
    "LL-HS": (75.0, None), "LO-HS": (70.0, None), "LL-PS": (50.0, 70.0),
    "LO-PS": (50.0, 70.0), "LO-DS": (None, 20.0)}
"""Table 5: the AOP-20 range (exclusive bounds, None = open) where a model represents a
category optimally. The paper prints four thresholds for five columns; the ``50 < AOP-20 < 70``
cell spans both partially similar categories (SPECTER's 69.03 on LO-PS is shaded as optimal)."""


def _blocks(n: int) -> Iterator[slice]:
    for start in range(0, n, BLOCK):
        yield slice(start, min(start + BLOCK, n))


def target_ranks(queries: np.ndarray, candidates: np.ndarray, targets: np.ndarray,
                 excluded: np.ndarray | None = None) -> np.ndarray:
    """Rank of ``candidates[targets[i]]`` for ``queries[i]`` by cosine; ``excluded[i]`` (a
    candidate index, or -1) is left out of query i's candidates."""
    n = len(queries)
    return relevant_ranks(DenseScorer(queries, candidates), np.arange(n), np.arange(n),
                          targets, tie_order=None, exclude_self=False,
                          budget=BLOCK * max(1, len(candidates)), exclude=excluded)


def _mrr_t100(ranks: np.ndarray) -> dict[str, float | int]:
    rows = ranks[:, None]
    return {"MRR": round(float(np.mean(reciprocal_rank(rows))), 4),
            "T100": round(float(np.mean(hit_rate(rows, 100)) * 100), 2), "n_queries": len(ranks)}


def alternative_self(titles: np.ndarray, documents: np.ndarray) -> dict[str, float | int]:
    """Task I: each title (query) against the T+A of every paper; MRR and T100 (% of queries
    whose own T+A is in the top 100). Row i of both matrices is paper i."""
    n = len(titles)
    return _mrr_t100(target_ranks(titles, documents, np.arange(n)))


def alternative_self_with_titles(titles: np.ndarray, documents: np.ndarray,
                                 title_candidates: np.ndarray) -> dict[str, float | int]:
    """Task II: candidates are every T+A and every *other* paper's title
    (``title_candidates``, the titles embedded as documents)."""
    n = len(titles)
    candidates = np.vstack([documents, title_candidates])
    return _mrr_t100(target_ranks(titles, candidates, np.arange(n), excluded=np.arange(n) + n))


def nn_retrieval(neighbours: np.ndarray, papers: np.ndarray,
                 documents: np.ndarray) -> dict[str, float | int]:
    """NN1_Ret and NN10_Ret: % of neighbour vectors (row r made from paper ``papers[r]``) whose
    1 / 10 nearest T+A vectors among all papers' include their original."""
    ranks = target_ranks(neighbours, documents, papers)[:, None]
    return {"NN1_Ret": round(float(np.mean(hit_rate(ranks, 1)) * 100), 2),
            "NN10_Ret": round(float(np.mean(hit_rate(ranks, 10)) * 100), 2), "n": len(ranks)}


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def neighbour_overlap(neighbours: np.ndarray, papers: np.ndarray, documents: np.ndarray,
                      ks: Sequence[int] = (10, 20)) -> np.ndarray:
    """Per neighbour vector and k, the % overlap of its k nearest neighbours with those of its
    original T+A, both searched in the pool {all T+A} ∪ {all neighbours of this type}, each
    leaving itself out (§6.3). Returns a (rows × len(ks)) array; its column means are AOP-k."""
    n, k_max = len(documents), max(ks)
    pool = np.vstack([documents, neighbours])
    if len(pool) - 1 < k_max:
        raise ValueError(f"AOP-{k_max} needs more than {k_max} vectors in the pool, got "
                         f"{len(pool)}")
    out = np.empty((len(neighbours), len(ks)), np.float64)
    for rows in _blocks(len(neighbours)):
        local = np.arange(rows.stop - rows.start)
        from_neighbour = neighbours[rows] @ pool.T
        from_neighbour[local, n + local + rows.start] = -np.inf
        from_original = documents[papers[rows]] @ pool.T
        from_original[local, papers[rows]] = -np.inf
        a, b = _top(from_neighbour, k_max), _top(from_original, k_max)
        for j, k in enumerate(ks):
            shared = (a[:, :k, None] == b[:, None, :k]).any(axis=2).sum(axis=1)
            out[rows, j] = shared / k * 100
    return out


def pair_similarities(vectors: np.ndarray, limit: int = 2000, seed: int = 0) -> np.ndarray:
    """Cosine of every pair (i < j) of ``vectors``, on a seeded subset of ``limit`` rows when
    there are more (2,000 rows: 2M pairs)."""
    if len(vectors) > limit:
        rows = np.sort(np.random.default_rng(seed).choice(len(vectors), limit, replace=False))
        vectors = vectors[rows]
    upper = np.triu_indices(len(vectors), k=1)
    return (vectors @ vectors.T)[upper].astype(np.float32)


def similarity_summary(similarities: np.ndarray) -> dict[str, float | int] | None:
    """min, max, mean, std of pairwise similarities and the % of pairs above their mean
    (Figures 3 and 4); None for no pairs."""
    if len(similarities) == 0:
        return None
    mean = float(similarities.mean(dtype=np.float64))
    return {"min": round(float(similarities.min()), 4), "max": round(float(similarities.max()), 4),
            "mean": round(mean, 4), "std": round(float(similarities.std(dtype=np.float64)), 4),
            "above_mean_pct": round(float(np.mean(similarities > mean) * 100), 2),
            "n_pairs": len(similarities)}


def capability(aop20: Mapping[str, float | None]) -> dict[str, dict[str, object]]:
    """Table 5: each category's AOP-20, the paper's threshold and whether it is met."""
    matrix: dict[str, dict[str, object]] = {}
    for category, (low, high) in CAPABILITY_THRESHOLDS.items():
        value = aop20.get(category)
        optimal = value is not None and (low is None or value > low) and \
            (high is None or value < high)
        threshold = (f"{low:g} < AOP-20 < {high:g}" if low is not None and high is not None
                     else f"> {low:g}" if low is not None else f"< {high:g}")
        matrix[category] = {"AOP-20": value, "threshold": threshold, "optimal": bool(optimal)}
    return matrix
