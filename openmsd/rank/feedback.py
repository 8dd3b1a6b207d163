"""Pseudo-relevance feedback and text propagated over citation links: scorers made of another.

* ``NAME~prf`` (:class:`Feedback`): the query's own scores by ``NAME`` averaged with the scores
  of its ``depth`` best papers by ``NAME`` (each row min–max normalised over the collection):
  score(Q, X) = ½ s(Q, X) + ½ mean_{Y ∈ top(Q)} s(Y, X), each row divided by its best score
  (:func:`scaled`). For a dense model this is Rocchio's
  q' = q + mean of the top vectors; for BM25 a document-side relevance model (the feedback
  papers' own BM25 queries in place of RM3's expanded terms). Reads what ``NAME`` reads.
* ``NAME~links`` (:class:`Propagated`): ``NAME``'s normalised scores carried over the citation
  graph: score(Q, X) = Σ_{Y linked to X} s(Q, Y), the papers linked to X that read like the
  query (citation-aware retrieval: it needs no link of the query itself, so it works for a
  paper whose links are hidden and for free text). Reads the graph; hidden links are left out.

>>> import numpy as np
>>> from openmsd.rank.lexical import VIEWS, LexicalScorer
>>> from openmsd.rank.scorer import Papers
>>> papers = Papers(["a", "b", "c"], ["graph neural networks", "graph networks learning",
...                                    "neural networks learning"], ["en", "en", "en"])
>>> plain = LexicalScorer(papers, VIEWS["bm25"], "bm25")
>>> scores = Feedback(plain, depth=1).score(Queries.of_texts(["graph"], ["en"]), np.arange(3))
>>> bool(scores[0, 2] > plain.score(Queries.of_texts(["graph"], ["en"]), np.arange(3))[0, 2])
True
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pyarrow as pa

from openmsd.rank.graph import GraphScorer
from openmsd.rank.scorer import ExactScorer, Queries, Scorer, exclude_self

FEEDBACK, LINKS = "~prf", "~links"
#: How many of its best papers feed a query back; queries scored per block.
DEPTH, BLOCK = 5, 64


def scaled(scores: np.ndarray) -> np.ndarray:
    """Each row divided by its best finite score; no score, or a negative one, is 0.

    >>> scaled(np.array([[2.0, 1.0, -np.inf], [-1.0, -2.0, -np.inf]])).tolist()
    [[1.0, 0.5, 0.0], [0.0, 0.0, 0.0]]
    """
    finite = np.where(np.isfinite(scores), scores, 0.0)
    best = finite.max(axis=1, keepdims=True)
    return np.where(best > 0, np.maximum(finite, 0) / np.where(best > 0, best, 1), 0.0
                    ).astype(np.float32)


def _normalised(scorer: Scorer, queries: Queries) -> np.ndarray:
    """``scorer``'s scores of the whole collection, the query paper excluded, each row
    :func:`scaled`."""
    everything = np.arange(len(scorer.papers))
    return scaled(exclude_self(np.array(scorer.score(queries, everything), np.float32),
                               queries, everything))


class Feedback(ExactScorer):
    """``NAME~prf``: pseudo-relevance feedback over ``inner`` (see the module)."""

    def __init__(self, inner: Scorer, depth: int = DEPTH):
        self.inner, self.depth = inner, depth
        self.papers, self.signal = inner.papers, inner.signal
        self.name = f"{inner.name}{FEEDBACK}"

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        out = np.full((len(queries), len(candidates)), -np.inf, np.float32)
        for start in range(0, len(queries), BLOCK):
            block = queries.subset(np.arange(start, min(start + BLOCK, len(queries))))
            own = _normalised(self.inner, block)
            k = min(self.depth, own.shape[1])
            top = np.argsort(-own, axis=1, kind="stable")[:, :k]
            found = np.take_along_axis(own, top, axis=1) > 0
            rows = np.unique(top[found])
            fed = (_normalised(self.inner, Queries.of_rows(self.papers, rows))
                   if len(rows) else np.zeros((0, own.shape[1]), np.float32))
            fed[np.arange(len(rows)), rows] = 1.0  # a feedback paper is its own best match
            where = {int(r): i for i, r in enumerate(rows)}
            for i in range(len(block)):
                mine = [where[int(r)] for r, ok in zip(top[i], found[i], strict=True) if ok]
                back = fed[mine].mean(axis=0) if mine else np.zeros(own.shape[1], np.float32)
                value = 0.5 * own[i, candidates] + 0.5 * back[candidates]
                out[start + i] = np.where(value > 0, value, -np.inf)
        return out


class Propagated(ExactScorer):
    """``NAME~links``: ``inner``'s scores carried over the citation graph (see the module)."""

    signal = "graph"
    positive_only = True

    def __init__(self, inner: Scorer, citations: pa.Table | None = None,
                 hidden: Collection[tuple[str, str]] = ()):
        self.inner, self.papers = inner, inner.papers
        self.name = f"{inner.name}{LINKS}"
        n = len(self.papers)
        graph = GraphScorer(self.papers, "citation", citations, hidden)
        self.links = graph.undirected[:n, :n].tocsc()  # links among the collection's papers

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        out = np.full((len(queries), len(candidates)), -np.inf, np.float32)
        links = self.links[:, candidates]
        for start in range(0, len(queries), BLOCK):
            index = np.arange(start, min(start + BLOCK, len(queries)))
            carried = np.asarray((links.T @ _normalised(self.inner, queries.subset(index)).T).T,
                                 np.float32)
            out[index] = np.where(carried > 0, carried, -np.inf)
        return out
