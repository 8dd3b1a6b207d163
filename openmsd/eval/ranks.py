"""The one ranking kernel of the evaluations: exact ranks of the relevant documents.

SDSM, pools, citation recommendation and the robustness tasks rank through
:func:`relevant_ranks`; retrieval, whose ranking is the scorer's own top-k list, through
:func:`listed_ranks`. The metrics (:mod:`openmsd.eval.metrics`) take these ranks.

For SDSM, a query is a paper of the pool and every other paper of the pool is a candidate; MAP
and nDCG@10 with binary relevance depend only on where each relevant document lands in the
full ranking. :func:`relevant_ranks` finds those places without sorting or storing a
(queries × pool) matrix: for a block of queries it takes the block's score rows from a
:class:`Scorer`, and for every (query, relevant document) pair counts the candidates that score
higher. Ties are broken as trec_eval does (the higher document id first), so the ranks give
exactly the metrics ``trec_eval`` / ``pytrec_eval`` compute from the full run; without a
``tie_order``, equal scores count in the relevant document's favour (1 + the candidates scoring
strictly higher: the citation recommendation and robustness protocols).

>>> import numpy as np
>>> docs = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]], np.float32)
>>> scorer = DenseScorer(docs, docs)
>>> relevant_ranks(scorer, queries=np.array([0]), pair_query=np.array([0, 0]),
...                pair_doc=np.array([1, 2]), tie_order=np.arange(3)).tolist()
[1, 2]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np

from openmsd.rank.scorer import Queries
from openmsd.rank.scorer import Scorer as RankScorer

#: Scores held at once, per block of queries (float32): about 256 MiB.
SCORE_BUDGET = 64 * 2**20


class Scorer(Protocol):
    """Scores of pool documents for pool queries."""

    n_docs: int

    def rows(self, queries: np.ndarray) -> np.ndarray:
        """A (len(queries) × n_docs) float32 matrix: row i scores every document for the
        query at pool index ``queries[i]``."""
        ...


class DenseScorer:
    """Dot products of query and document vectors (normalised vectors: cosine)."""

    def __init__(self, query_vectors: np.ndarray, doc_vectors: np.ndarray):
        self.query_vectors = np.ascontiguousarray(query_vectors, np.float32)
        self.doc_vectors = np.ascontiguousarray(doc_vectors, np.float32)
        self.n_docs = len(doc_vectors)

    def rows(self, queries: np.ndarray) -> np.ndarray:
        return self.query_vectors[queries] @ self.doc_vectors.T


class MatrixScorer:
    """Scores from a function of query texts (BM25): ``score(texts) -> (len × n_docs)``."""

    def __init__(self, score: Callable[[list[str]], np.ndarray], query_texts: Sequence[str],
                 n_docs: int):
        self.score = score
        self.query_texts = list(query_texts)
        self.n_docs = n_docs

    def rows(self, queries: np.ndarray) -> np.ndarray:
        return np.asarray(self.score([self.query_texts[i] for i in queries]), np.float32)


class RandomScorer:
    """Uniform random scores, seeded per query: the random baseline (MAP ≈ relevant / pool)."""

    def __init__(self, n_docs: int, seed: int = 0):
        self.n_docs = n_docs
        self.seed = seed

    def rows(self, queries: np.ndarray) -> np.ndarray:
        return np.vstack([np.random.default_rng([self.seed, int(q)]).random(self.n_docs,
                                                                           np.float32)
                          for q in queries]).reshape(len(queries), self.n_docs)


class ScorerRows:
    """The rows of a ranker (:class:`openmsd.rank.Scorer`) over its whole collection, the
    collection's papers as queries (the SDSM and pool protocols)."""

    def __init__(self, scorer: RankScorer):
        self.scorer = scorer
        self.n_docs = len(scorer.papers)
        self.candidates = np.arange(self.n_docs)

    def rows(self, queries: np.ndarray) -> np.ndarray:
        return np.asarray(self.scorer.score(Queries.of_rows(self.scorer.papers, queries),
                                            self.candidates), np.float32)


class PrecomputedRows:
    """Rows of a score matrix computed beforehand (queries × documents; its dtype is kept)."""

    def __init__(self, scores: np.ndarray):
        self.scores = scores
        self.n_docs = scores.shape[1]

    def rows(self, queries: np.ndarray) -> np.ndarray:
        return self.scores[queries]


class QueryRows:
    """The rows of a ranker for free-text queries (citation contexts) over its collection."""

    def __init__(self, scorer: RankScorer, queries: Queries):
        self.scorer, self.queries = scorer, queries
        self.n_docs = len(scorer.papers)
        self.candidates = np.arange(self.n_docs)

    def rows(self, queries: np.ndarray) -> np.ndarray:
        return np.asarray(self.scorer.score(self.queries.subset(queries), self.candidates),
                          np.float32)


def relevant_ranks(scorer: Scorer, queries: np.ndarray, pair_query: np.ndarray,
                   pair_doc: np.ndarray, tie_order: np.ndarray | None,
                   exclude_self: bool = True, budget: int = SCORE_BUDGET,
                   progress: Callable[[int], None] | None = None,
                   exclude: np.ndarray | None = None) -> np.ndarray:
    """The 1-based rank of each (query, relevant document) pair in its query's full ranking.

    ``queries``: pool indices of the queries; ``pair_query``: for each pair, the position of its
    query in ``queries``; ``pair_doc``: the pool index of its document; ``tie_order``: per pool
    document, its place in id order (trec_eval puts the higher id first among equal scores), or
    None (equal scores do not count against a relevant document). With ``exclude_self`` the
    query paper (``queries[i]`` is also a pool index) is never a candidate; ``exclude`` (per
    query, a document index or -1) names the document left out instead. Memory: about
    ``budget`` scores per block of queries; each query's row is then compared with its
    relevant papers' scores in place (no copies of rows)."""
    pair_query = np.asarray(pair_query, np.int64)
    pair_doc = np.asarray(pair_doc, np.int64)
    ranks = np.zeros(len(pair_query), np.int64)
    if len(pair_query) == 0:
        return ranks
    order = np.argsort(pair_query, kind="stable")
    bounds = np.searchsorted(pair_query[order], np.arange(len(queries) + 1))
    n_docs = scorer.n_docs
    block = max(1, budget // max(1, n_docs))
    if exclude is None and exclude_self:
        exclude = np.asarray(queries)
    for start in range(0, len(queries), block):
        stop = min(len(queries), start + block)
        scores = scorer.rows(queries[start:stop])
        if exclude is not None:
            drop = np.asarray(exclude[start:stop])
            scores[np.flatnonzero(drop >= 0), drop[drop >= 0]] = -np.inf
        for local in range(stop - start):
            pairs = order[bounds[start + local]:bounds[start + local + 1]]
            if len(pairs) == 0:
                continue
            row = scores[local]
            docs = pair_doc[pairs]
            own = row[docs][:, None]
            above = np.count_nonzero(row[None, :] > own, axis=1)
            if tie_order is not None:  # trec_eval: among equal scores, the higher id first
                equal = row[None, :] == own
                tied = np.count_nonzero(equal, axis=1) > 1
                if tied.any():
                    later = tie_order[None, :] > tie_order[docs[tied]][:, None]
                    above[tied] += np.count_nonzero(equal[tied] & later, axis=1)
            ranks[pairs] = above + 1
        if progress:
            progress(stop - start)
    return ranks


def listed_ranks(ranking: Mapping[str, Sequence[str]], relevant: Mapping[str, Sequence[str]]
                 ) -> list[np.ndarray]:
    """Per query of ``relevant`` (``{query: [doc, ...]}``), the 1-based place of each of its
    documents in the query's ``ranking`` (best first; ``inf`` where it is not listed, or the
    query has no ranking), in ``relevant``'s order.

    >>> listed_ranks({"q": ["b", "a"]}, {"q": ["a", "c"]})[0].tolist()
    [2.0, inf]
    """
    out = []
    for query, docs in relevant.items():
        place: dict[str, int] = {}
        for i, doc in enumerate(ranking.get(query, ())):
            place.setdefault(doc, i + 1)
        out.append(np.array([place.get(doc, np.inf) for doc in docs], np.float64))
    return out
