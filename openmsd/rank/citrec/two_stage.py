"""The two-stage ranking of citation recommendation: a prefetch's top candidates reranked by the
weighted reciprocal-rank fusion of a model's rank and the prefetch's own
(:func:`openmsd.rank.fusion.reciprocal_ranks`, the one RRF of ranking), and the choice of its
weight on dev.

One function ranks: :func:`weighted_rrf` over (queries × candidates) matrices; :func:`two_stage`
applies it to a prefetch's top ``depth`` (evaluation, training), :func:`two_stage_hits` to the
candidates a prefetch gave one query (``recommend``).

>>> int(weighted_rrf(np.array([[3.0, 2.0, 1.0]]), np.array([[1.0, 2.0, 3.0]]), 0.9).argmax())
0
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from openmsd.index import VectorIndex
from openmsd.models import RerankFusion
from openmsd.rank.citrec.data import Location
from openmsd.rank.citrec.rerank import PREFETCH_DEPTH
from openmsd.rank.fusion import RRF_K, reciprocal_ranks

__all__ = ["FUSION_WEIGHTS", "choose_fusion_weight", "index_cosines", "learned_rerank",
           "recall_at", "two_stage", "two_stage_hits", "two_stage_weight", "weighted_rrf"]

FUSION_WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
"""The weights of the model's rank tried on dev for the two-stage ranker."""


def weighted_rrf(model: np.ndarray, prefetch: np.ndarray, weight: float, k: int = RRF_K
                 ) -> np.ndarray:
    """``weight / (k + model rank) + (1 − weight) / (k + prefetch rank)`` of two (queries ×
    candidates) score matrices (a non-finite model score adds nothing); −inf scores of
    ``prefetch`` (masked candidates) stay −inf."""
    fused = (weight * reciprocal_ranks(model, k).astype(np.float64)
             + (1.0 - weight) * reciprocal_ranks(prefetch, k).astype(np.float64))
    return np.where(np.isneginf(prefetch), -np.inf, fused)


def two_stage(model: np.ndarray, prefetch: np.ndarray, weight: float,
              depth: int = PREFETCH_DEPTH) -> np.ndarray:
    """The two-stage ranking: the prefetch's top ``depth`` candidates of each query reranked
    by :func:`weighted_rrf` (weight 1: the model alone), above all others, which keep the
    prefetch's order."""
    keep = np.zeros(prefetch.shape, bool)
    np.put_along_axis(keep, np.argsort(-prefetch, axis=1, kind="stable")[:, :depth], True,
                      axis=1)
    keep &= ~np.isneginf(prefetch)
    return np.where(keep, 1e6 + weighted_rrf(model, prefetch, weight), prefetch)


def index_cosines(index: VectorIndex, query: np.ndarray, ids: list[str]) -> np.ndarray:
    """The cosine of ``query`` with each paper's vector in ``index`` (−inf: none there)."""
    cosine = np.full(len(ids), -np.inf)
    for j, paper_id in enumerate(ids):
        with contextlib.suppress(ValueError, RuntimeError):
            cosine[j] = float(index.index.reconstruct(index.row(paper_id)) @ query)
    return cosine


def two_stage_hits(prefetched: list[list[str]], vectors: np.ndarray, index: VectorIndex,
                   weight: float, k: int) -> list[list[tuple[str, float]]]:
    """For each query (its model vector, its prefetched paper ids best first), the prefetched
    papers reranked by :func:`weighted_rrf` of the model's cosine with each candidate's vector
    in ``index`` (candidates without one keep only the prefetch term) and the prefetch's
    order; the best ``k`` as (paper id, fused score)."""
    out = []
    for query, ids in zip(vectors, prefetched, strict=True):
        cosine = index_cosines(index, query, ids)
        fused = weighted_rrf(cosine[None, :], -np.arange(len(ids), dtype=np.float64)[None, :],
                             weight)[0]
        order = np.argsort(-fused, kind="stable")[:k]
        out.append([(ids[j], float(fused[j])) for j in order])
    return out


def recall_at(scores: np.ndarray, locations: list[Location], candidates: list[str],
              k: int = 10) -> float:
    """Mean Recall@k of ``scores`` (queries × candidates, masked ones −inf) over locations."""
    column = {p: i for i, p in enumerate(candidates)}
    values = []
    for row, loc in zip(scores, locations, strict=True):
        relevant = [column[c] for c in loc.cited]
        top = set(np.argpartition(-row, min(k, len(row) - 1))[:k].tolist())
        values.append(sum(r in top for r in relevant) / len(relevant))
    return float(np.mean(values)) if values else 0.0


def choose_fusion_weight(model: np.ndarray, prefetch: np.ndarray, locations: list[Location],
                         candidates: list[str]) -> tuple[float, dict[float, float]]:
    """The weight of :data:`FUSION_WEIGHTS` whose two-stage ranking has the best Recall@10 on
    ``locations`` (ties: the smaller weight, nearer the prefetch), and every weight's
    recall."""
    recalls = {w: recall_at(two_stage(model, prefetch, w), locations, candidates)
               for w in FUSION_WEIGHTS}
    best = max(FUSION_WEIGHTS, key=lambda w: (recalls[w], -w))
    return best, recalls


def two_stage_weight(encoder: Any) -> float | None:
    """The fusion weight of a trained MP-BERT4CR ``encoder`` (chosen on dev), else None (no
    two-stage ranking by default)."""
    return getattr(getattr(encoder, "settings", None), "fusion_weight", None)


def learned_rerank(encoder: Any) -> RerankFusion | None:
    """The learned rerank fusion of a trained MP-BERT4CR ``encoder`` (``rerank`` in its
    ``citrec.json``), else None."""
    chosen = getattr(getattr(encoder, "settings", None), "rerank", None)
    return RerankFusion.of(chosen) if chosen and hasattr(encoder, "encode_profiles") else None
