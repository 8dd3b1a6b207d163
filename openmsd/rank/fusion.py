"""Fusion: one ranking from several scorers.

Candidates for a query come from the members that propose them cheaply (``pool="cheap"``, the
default): the union of the dense members' top :data:`POOL` from their FAISS index and, for a
paper of the corpus, the graph members' linked papers; a fusion with no dense member (BM25 and
graph only) takes every member's top ``depth``, as ``pool="all"`` (the exhaustive mode, for
evaluation) always does. Every candidate is then scored exactly by every member (BM25 scores
only those candidates), and the members' scores are combined:

* ``zscore``: each member's scores standardised over the query's candidates it scores (z-scores:
  mean 0, standard deviation 1; no score: 0, the mean), then a weighted sum — CombSUM over
  z-scores (Montague and Aslam, CIKM 2001; ranx's ``zmuv`` norm). A member's vote is as strong
  as its evidence stands out from its own spread for that query: a lexical member that matches
  a single word of a short query gives its lone match no more than an average candidate, and
  matches on a common word fall below the papers it does not hear. The untuned ``hybrid`` and
  ``hybrid-graph`` fuse so (:mod:`openmsd.rank.load`);
* ``weighted``: each member's scores min–max normalised over the query's candidates (no score:
  0), then a weighted sum;
* ``rrf``: reciprocal-rank fusion, Σ wᵢ / (60 + rankᵢ) with the rank among the candidates
  (no score: no contribution);
* ``learned``: a linear model over :func:`features` (per member: its min–max score, 60 times
  its reciprocal rank, whether it has a score), its coefficients fitted by logistic regression
  on relevant and other candidates of tuning queries; three weights per member (``openmsd
  train ranker`` writes models of its own instead: :mod:`openmsd.rank.learned`).

A fusion may hold **fallbacks** (:class:`Fallback`): another weighting of some of its members,
used for a query for which given members are silent (no score for any candidate), e.g. the
weights fitted without ``authors`` and ``year`` for a free-text query (a citation context,
``search``), which has neither. A member silent for a whole query adds a constant to every
candidate and so changes no order, but the other members' weights were fitted beside it.

>>> import numpy as np
>>> minmax(np.array([[1.0, 3.0, -np.inf]], np.float32)).tolist()
[[0.0, 1.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from openmsd.rank.calibration import Calibration
from openmsd.rank.scorer import ExactScorer, Queries, Scorer, exclude_self, score_pools

METHODS = ("weighted", "rrf", "zscore", "learned")
#: Features per member of the ``learned`` method (see :func:`features`).
FEATURES = ("score", "reciprocal rank", "has score")
RRF_K = 60
#: How many candidates each member proposes per query (``pool="all"``).
DEPTH = 100
#: How many candidates each cheap member proposes per query (``pool="cheap"``); on TALN dev
#: this keeps the exhaustive fusion's MAP (docs/server.md).
POOL = 200
POOLS = ("cheap", "all")


def minmax(scores: np.ndarray) -> np.ndarray:
    """Each row scaled to [0, 1] over its finite values; non-finite values become 0."""
    finite = np.isfinite(scores)
    low = np.where(finite, scores, np.inf).min(axis=1, keepdims=True)
    high = np.where(finite, scores, -np.inf).max(axis=1, keepdims=True)
    span = np.where(high > low, high - low, 1.0)
    out = np.where(finite, (scores - np.where(np.isfinite(low), low, 0)) / span, 0.0)
    return out.astype(np.float32)


def zscores(scores: np.ndarray) -> np.ndarray:
    """Each row standardised over its finite values (mean 0, standard deviation 1; a row whose
    finite values are all equal: 0); non-finite values become 0, the row's mean.

    >>> zscores(np.array([[1.0, 3.0, -np.inf], [5.0, -np.inf, -np.inf]], np.float32)).tolist()
    [[-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    finite = np.isfinite(scores)
    count = np.maximum(finite.sum(axis=1, keepdims=True), 1)
    values = np.where(finite, scores, 0.0).astype(np.float64)
    mean = values.sum(axis=1, keepdims=True) / count
    spread = np.sqrt(np.where(finite, (values - mean) ** 2, 0.0).sum(axis=1, keepdims=True)
                     / count)
    out = np.where(finite & (spread > 0), (values - mean) / np.where(spread > 0, spread, 1.0),
                   0.0)
    return out.astype(np.float32)


def reciprocal_ranks(scores: np.ndarray, k: int = RRF_K) -> np.ndarray:
    """1 / (k + rank) of each score in its row (rank 1 = best); 0 for a non-finite score."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    ranks[np.arange(len(scores))[:, None], order] = np.arange(1, scores.shape[1] + 1)
    return np.where(np.isfinite(scores), 1.0 / (k + ranks), 0.0).astype(np.float32)


def features(parts: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The ``learned`` method's features of members' score matrices: per member (in order)
    each of :data:`FEATURES`, a matrix of the same shape.

    >>> scores = np.array([[2.0, 1.0, -np.inf]], np.float32)
    >>> [f.astype(float).round(3).tolist() for f in features([scores])]
    [[[1.0, 0.0, 0.0]], [[0.984, 0.968, 0.0]], [[1.0, 1.0, 0.0]]]
    """
    out = []
    for p in parts:
        out += [minmax(p), RRF_K * reciprocal_ranks(p), np.isfinite(p).astype(np.float32)]
    return out


def transformed(parts: Sequence[np.ndarray], method: str) -> list[np.ndarray]:
    """What a fusion ``method`` sums, weighted, of members' score matrices: each member's
    min–max scores (``weighted``), reciprocal ranks (``rrf``), z-scores (``zscore``) or
    :func:`features` (``learned``), so that many weightings of the same scores transform them
    once."""
    if method not in METHODS:
        raise ValueError(f"fusion method must be one of {', '.join(METHODS)}, not {method!r}")
    if method == "learned":
        return features(parts)
    transform = {"weighted": minmax, "rrf": reciprocal_ranks, "zscore": zscores}[method]
    return [transform(p) for p in parts]


def heard(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Where some member has a score (the fused score is ``-inf`` elsewhere)."""
    return np.any([np.isfinite(p) for p in parts], axis=0)


def blend(terms: Sequence[np.ndarray], weights: Sequence[float], where: np.ndarray
          ) -> np.ndarray:
    """The weighted sum of :func:`transformed` terms, ``-inf`` outside ``where``."""
    if len(weights) != len(terms):
        raise ValueError(f"{len(weights)} weights for {len(terms)} fused terms")
    fused = sum((w * t for w, t in zip(weights, terms, strict=True) if w),
                np.zeros(where.shape, np.float32))
    return np.where(where, fused, -np.inf).astype(np.float32)


def combine(parts: Sequence[np.ndarray], weights: Sequence[float], method: str) -> np.ndarray:
    """The fused scores of members' score matrices (same shape), ``-inf`` where no member has
    a score. ``learned`` takes ``len(FEATURES)`` weights per member, the others one."""
    if method == "learned" and len(weights) != len(FEATURES) * len(parts):
        raise ValueError(f"a learned fusion of {len(parts)} members takes "
                         f"{len(FEATURES) * len(parts)} weights, not {len(weights)}")
    return blend(transformed(parts, method), weights, heard(parts))


@dataclass(frozen=True)
class Fallback:
    """Weights of the members ``members`` (indices into a fusion's members), for the queries
    for which every member in ``silent`` has no score."""

    silent: tuple[int, ...]
    members: tuple[int, ...]
    weights: tuple[float, ...]
    method: str


def fuse(parts: Sequence[np.ndarray], weights: Sequence[float], method: str,
         fallbacks: Sequence[Fallback] = ()) -> np.ndarray:
    """:func:`combine`, each query (row) whose members ``silent`` of a :class:`Fallback` are
    all silent combined by that fallback instead (the first that applies).

    >>> a = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
    >>> b = np.array([[1.0, 2.0], [-np.inf, -np.inf]], np.float32)
    >>> c = np.array([[0.0, 1.0], [2.0, 1.0]], np.float32)
    >>> fuse([a, b, c], [0.0, 1.0, 1.0], "weighted").tolist()  # row 1: only c speaks
    [[0.0, 2.0], [1.0, 0.0]]
    >>> fuse([a, b, c], [0.0, 1.0, 1.0], "weighted", [Fallback((1,), (0,), (1.0,), "weighted")]
    ...      ).tolist()  # row 1: b is silent, so a alone ranks it
    [[0.0, 2.0], [0.0, 1.0]]
    """
    fused = combine(parts, weights, method)
    done = np.zeros(len(fused), bool)
    for fallback in fallbacks:
        quiet = ~done & np.all([~np.isfinite(parts[i]).any(axis=1) for i in fallback.silent],
                               axis=0)
        if quiet.any():
            fused[quiet] = combine([parts[i][quiet] for i in fallback.members],
                                   fallback.weights, fallback.method)
            done |= quiet
    return fused


def _union(parts: Sequence[np.ndarray]) -> np.ndarray:
    """``np.unique`` of the concatenated ``parts``: sorted, each value once (without its
    hash table: a few hundred candidates).

    >>> _union([np.array([5, 1, 3]), np.array([3, 9])]).tolist()
    [1, 3, 5, 9]
    """
    values = np.sort(np.concatenate(parts))
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if len(values) else values


@dataclass
class Contribution:
    """What a member said about one result."""

    member: str
    signal: str
    score: float
    rank: int | None  # its rank among the query's candidates by that member (1 = best)
    detail: str | None = None  # what it saw, in words ("3 shared references, …"), if it says


class Fusion(ExactScorer):
    """A score-aware (``zscore``), weighted, reciprocal-rank or learned fusion of member scorers
    over one collection."""

    def __init__(self, name: str, members: Sequence[Scorer], weights: Sequence[float] | None = None,
                 method: str = "rrf", depth: int = DEPTH, pool: str = "cheap",
                 pool_depth: int = POOL, fallbacks: Sequence[Fallback] = (),
                 calibration: Calibration | None = None):
        if not members:
            raise ValueError(f"fusion {name!r}: no member")
        if method not in METHODS:
            raise ValueError(f"fusion method must be one of {', '.join(METHODS)}, not "
                             f"{method!r}")
        if pool not in POOLS:
            raise ValueError(f"fusion pool must be one of {', '.join(POOLS)}, not {pool!r}")
        self.name, self.members, self.method, self.depth = name, list(members), method, depth
        self.pool, self.pool_depth = pool, pool_depth
        # a fusion of a dense member proposes its candidates cheaply too (nested in another)
        self.generates = pool == "cheap" and any(
            getattr(m, "generates", False) and m.signal == "text" for m in self.members)
        self.weights = list(weights) if weights is not None else [1.0] * len(members)
        per_member = len(FEATURES) if method == "learned" else 1
        if len(self.weights) != per_member * len(members):
            raise ValueError(f"fusion {name!r} ({method}): {len(self.weights)} weights for "
                             f"{len(members)} members; expected {per_member * len(members)}")
        self.fallbacks = list(fallbacks)
        for fallback in self.fallbacks:
            if max((*fallback.silent, *fallback.members), default=0) >= len(members):
                raise ValueError(f"fusion {name!r}: a fallback names member "
                                 f"{max((*fallback.silent, *fallback.members))} of "
                                 f"{len(members)}")
        self.papers = members[0].papers
        self.signal = "graph" if any(m.signal == "graph" for m in members) else "text"
        self.calibration = calibration

    def fused(self, parts: Sequence[np.ndarray], queries: Queries, which: np.ndarray,
              candidates: np.ndarray) -> np.ndarray:
        """The fused scores of the members' score matrices ``parts`` of the queries at
        ``which`` (indices into ``queries``) against ``candidates`` (collection rows: one
        array for every query, or a row per query); ``-inf`` where no member has a score."""
        return fuse(parts, self.weights, self.method, self.fallbacks)

    def probability(self, scores: np.ndarray, free_text: bool = False) -> np.ndarray | None:
        """The probability that each result is linked to its query, from fused ``scores``
        (the calibration ``openmsd train ranker`` fitted out of fold); None when the fusion
        has none."""
        return None if self.calibration is None else self.calibration.probability(scores)

    def member_scores(self, queries: Queries, candidates: np.ndarray) -> list[np.ndarray]:
        """Each member's exact scores of ``candidates``, the query paper itself excluded."""
        return [exclude_self(np.array(m.score(queries, candidates), np.float32), queries,
                             candidates) for m in self.members]

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        return self.fused(self.member_scores(queries, candidates), queries,
                          np.arange(len(queries)), np.asarray(candidates))

    def candidates(self, queries: Queries, filters: np.ndarray | None = None) -> list[np.ndarray]:
        """Per query, the union of the cheap members' top ``pool_depth`` rows
        (``pool="cheap"``), else of every member's top ``depth``."""
        cheap = [m for m in self.members if getattr(m, "generates", False)]
        if self.pool == "cheap" and any(m.signal == "text" for m in cheap):
            found = [m.top_k(queries, self.pool_depth, filters)[0] for m in cheap]
        else:
            found = [m.top_k(queries, self.depth, filters)[0] for m in self.members]
        return [_union([rows[i][rows[i] >= 0] for rows in found]) for i in range(len(queries))]

    def top_k(self, queries: Queries, k: int, filters: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        rows, scores, _ = self.top_k_explained(queries, k, filters)
        return rows, scores

    def top_k_explained(self, queries: Queries, k: int, filters: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray, list[list[list[Contribution]]]]:
        """:meth:`top_k`, and for each query and result what each member said of it (its
        score, and its rank among the query's candidates). Equal fused scores are ordered by
        row, so the first ``k`` of a longer list are the list for ``k``."""
        rows = np.full((len(queries), k), -1, np.int64)
        scores = np.full((len(queries), k), -np.inf, np.float32)
        said: list[list[list[Contribution]]] = []
        kept, queries.read = queries.read, {}  # the dense candidates' vectors, read once
        try:
            pools = self.candidates(queries, filters)
            # each member's scores of every query's own candidates, for all queries at once
            by_member = [score_pools(m, queries, pools) for m in self.members]
        finally:
            queries.read = kept
        for i, pool in enumerate(pools):
            parts = [p[i][None, :].astype(np.float32, copy=True) for p in by_member]
            if queries.rows[i] >= 0:  # never the query paper itself (exclude_self)
                for part in parts:
                    part[0, pool == queries.rows[i]] = -np.inf
            fused = self.fused(parts, queries, np.array([i]), pool)[0]
            order = np.argsort(-fused, kind="stable")[:k]
            order = order[np.isfinite(fused[order])]
            rows[i, :len(order)], scores[i, :len(order)] = pool[order], fused[order]
            # a member that can say what it saw in words (shared references) says it
            details = [m.describe(int(queries.rows[i]), pool[order])
                       if hasattr(m, "describe") else [None] * len(order) for m in self.members]
            # each member's score of each result and its rank among the candidates (1 + the
            # candidates it scores higher), for all results at once
            shown = [p[0, order] for p in parts]
            ranks = [np.where(np.isfinite(v), (p[0][None, :] > v[:, None]).sum(axis=1) + 1, 0)
                     .tolist() for p, v in zip(parts, shown, strict=True)]
            values = [v.tolist() for v in shown]
            said.append([[Contribution(m.name, m.signal, score[n], rank[n] or None, detail[n])
                          for m, score, rank, detail in zip(self.members, values, ranks,
                                                            details, strict=True)]
                         for n in range(len(order))])
        return rows, scores, said
