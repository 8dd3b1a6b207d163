"""Ranking for a whole library: papers near a set of positive seeds and away from negative ones
(the Semantic Scholar recommendations API's positive / negative seeds, done locally), over a
dense model's vector index.

The query is Rocchio's: the mean of the positive seeds' vectors minus half the mean of the
negatives', normalised; the seeds themselves are never results. Each result's seeds are the
positive seeds it is nearest to (cosine within :data:`SEED_MARGIN` of its best).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from openmsd.index import VectorIndex

__all__ = ["NEGATIVE_WEIGHT", "SEED_MARGIN", "LibraryQuery", "MissingVectorError",
           "without_vectors"]

NEGATIVE_WEIGHT = 0.5
SEED_MARGIN = 0.05


class MissingVectorError(KeyError):
    """A seed or result with no vector in the index: ``args`` are its role and paper id."""


def index_vectors(index: VectorIndex, ids: Sequence[str], role: str) -> np.ndarray:
    """The vectors of ``ids`` in ``index`` (rows in order); :class:`MissingVectorError` naming
    ``role`` and the first id without one."""
    rows = []
    for paper_id in ids:
        try:
            rows.append(index.vector(index.row(paper_id)))
        except ValueError:
            raise MissingVectorError(role, paper_id) from None
    return np.asarray(rows, np.float32).reshape(len(ids), index.index.d)


def without_vectors(index: VectorIndex, ids: Collection[str]) -> list[str]:
    """The ``ids`` that have no vector in ``index`` (no title or abstract, or not embedded)."""
    return [paper_id for paper_id in ids if paper_id not in index.rows]


class LibraryQuery:
    """The Rocchio query of ``positive`` and ``negative`` seeds (corpus paper ids) in
    ``index``."""

    def __init__(self, index: VectorIndex, positive: list[str], negative: list[str]):
        self.index, self.positive = index, positive
        self.seed_vectors = index_vectors(index, positive, "positive")
        query = self.seed_vectors.mean(axis=0)
        if negative:
            query = query - NEGATIVE_WEIGHT * index_vectors(index, negative,
                                                            "negative").mean(axis=0)
        self.vector = query / (np.linalg.norm(query) or 1.0)
        self.skip = set(positive) | set(negative)

    def nearest(self, n: int, languages: list[str] | None,
                years: tuple[int | None, int | None] | None,
                among: Collection[str] | None = None) -> list[tuple[str, float]]:
        """The ``n`` papers nearest to the query (never a seed), ``(paper_id, cosine)``;
        ``among``: only these ids are ranked (those with a vector)."""
        index = self.index
        if among is None:
            hits = index.search(self.vector[None, :], n + len(self.skip), languages, years)[0]
            return [hit for hit in hits if hit[0] not in self.skip][:n]
        keep = index.allowed(languages, years)
        rows = [r for paper_id in among if paper_id not in self.skip
                and (r := index.rows.get(paper_id)) is not None and (keep is None or keep[r])]
        if not rows:
            return []
        scores = np.asarray([index.vector(r) for r in rows], np.float32) @ self.vector
        top = np.argsort(-scores, kind="stable")[:n]
        return [(index.ids[rows[i]], float(scores[i])) for i in top]

    def seeds_of(self, results: Sequence[str]) -> list[list[str]]:
        """For each result (paper id), the positive seeds nearest to it, nearest first."""
        near = index_vectors(self.index, results, "result") @ self.seed_vectors.T
        return [[self.positive[i] for i in np.argsort(-scores)
                 if scores[i] >= scores.max() - SEED_MARGIN] for scores in near]
