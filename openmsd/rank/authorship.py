"""Author citation habits: scorers over the citation graph seen through the papers' authors.

Researchers re-cite what they and their co-authors cited before, and are cited by those who
cited their other papers. Over the corpus citation graph (hidden links left out, as for
:mod:`openmsd.rank.graph`) and the corpus papers' authors (every corpus paper, not only the
collection's), with each author weighted by 1 / log(2 + the number of corpus papers signed,
as ``authors`` weighs them):

* ``author-links``: Σ over the other corpus papers P sharing an author with the query, of the
  shared authors' weight × [P is linked to the candidate, either direction]: what the query's
  authors' other papers cite or are cited by;
* ``author-citations``: the author–author citation graph: Σ over the query's authors a and the
  candidate's authors b of w(a) × w(b) × the number of links between a paper signed by a and
  one signed by b (either direction; the two papers themselves included);
* ``author-ppr``: personalised PageRank (scikit-network) on the graph of papers and authors
  (citation links and paper–author edges), seeded at the query paper and its authors;
* ``cited-by``: popularity, log(1 + the candidate's number of citing corpus papers), for every
  paper query alike (a prior, not a relation: it breaks the ties of the others).

A free-text query gets no score (``-inf``), as for the citation-graph scorers; so does a pair
without evidence (no link reached through an author). Authors are read from the papers
(metadata), never from links, so hiding a link removes it from every count here
(tested in ``tests/rank/test_authorship.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pyarrow as pa
from scipy import sparse

from openmsd.rank.graph import adjacency, corpus_citations
from openmsd.rank.metadata import author_key
from openmsd.rank.scorer import ExactScorer, Papers, Queries

AUTHOR_SCORERS = ("author-links", "author-citations", "author-ppr", "cited-by")

__all__ = ["AUTHOR_SCORERS", "AuthorshipScorer", "corpus_authors"]


def corpus_authors(papers: Papers) -> dict[str, list[str]]:
    """Every corpus paper's authors (raw names), by paper id; empty without a corpus."""
    if papers.corpus is None:
        return {}
    rows = papers.corpus.connect().execute("SELECT paper_id, authors FROM papers").fetchall()
    return {paper: list(names or []) for paper, names in rows}


class AuthorshipScorer(ExactScorer):
    """One of :data:`AUTHOR_SCORERS` (see the module)."""

    signal = "graph"
    positive_only = True

    def __init__(self, papers: Papers, kind: str, authors: dict[str, Sequence[str]] | None,
                 citations: pa.Table | None = None,
                 hidden: Collection[tuple[str, str]] = (), damping: float = 0.85,
                 like: AuthorshipScorer | None = None):
        """``authors``: by paper id (collection papers and other corpus papers), their names
        (the corpus's when None); ``citations`` (``citing_id``, ``cited_id``): the corpus's
        when None; ``like``: another author scorer of the same collection, authors, citations
        and hidden links, whose graphs this one shares (read and built once for several
        kinds)."""
        if kind not in AUTHOR_SCORERS:
            raise ValueError(f"unknown author scorer {kind!r}: expected one of "
                             f"{', '.join(AUTHOR_SCORERS)}")
        self.papers, self.name, self.damping = papers, kind, damping
        self.source = (id(authors) if authors is not None else None,
                       id(citations) if citations is not None else None,
                       frozenset(frozenset(pair) for pair in hidden))
        if like is not None and like.papers is papers and like.source == self.source:
            self.adjacency, self.undirected = like.adjacency, like.undirected
            self.in_degree, self.signed, self.weighted = (like.in_degree, like.signed,
                                                          like.weighted)
        else:
            self._build(papers, corpus_authors(papers) if authors is None else authors,
                        corpus_citations(papers) if citations is None else citations, hidden)
        if kind == "author-citations":  # authors × authors: links between their papers
            self.author_links = (self.signed.T @ self.undirected @ self.signed).tocsr()
        if kind == "author-ppr":
            self.both = sparse.bmat([[self.undirected, self.signed],
                                     [self.signed.T, None]]).tocsr()

    def _build(self, papers: Papers, authors: dict[str, Sequence[str]],
               citations: pa.Table, hidden: Collection[tuple[str, str]]) -> None:
        """The citation graph over every corpus paper and the paper × author matrices."""
        others = sorted(set(authors) - set(papers.position))
        self.adjacency, n = adjacency(papers, citations, hidden, others)
        a = self.adjacency
        self.undirected = ((a + a.T) > 0).astype(np.float32).tocsr()
        self.in_degree = np.asarray(a.sum(axis=0)).ravel()
        node_ids = [*papers.ids, *others]
        keys = [sorted({author_key(x) for x in authors.get(p, ()) if x and x.strip()})
                for p in node_ids]
        vocabulary = {x: i for i, x in enumerate(sorted({x for k in keys for x in k}))}
        rows = [i for i, k in enumerate(keys) for _ in k]
        columns = [vocabulary[x] for k in keys for x in k]
        self.signed = sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, columns)),
                                        shape=(n, max(1, len(vocabulary))))
        counts = np.asarray(self.signed.sum(axis=0)).ravel()
        self.weighted = (self.signed @ sparse.diags((1 / np.log(2 + counts))
                                                    .astype(np.float32))).tocsr()

    def _rows(self, nodes: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """The scores of ``candidates`` for query ``nodes`` (collection rows), 0 = none."""
        if self.name == "cited-by":
            return np.tile(np.log1p(self.in_degree[candidates]), (len(nodes), 1))
        if self.name == "author-links":
            coauthored = (self.weighted[nodes] @ self.signed.T).tolil()
            for i, node in enumerate(nodes):
                coauthored[i, node] = 0  # the query's own links are not its authors' habits
            return (coauthored.tocsr() @ self.undirected[:, candidates]).toarray()
        if self.name == "author-citations":
            return (self.weighted[nodes] @ self.author_links
                    @ self.weighted[candidates].T).toarray()
        return np.vstack([self._ppr(int(node))[candidates] for node in nodes])

    def _ppr(self, node: int) -> np.ndarray:
        from sknetwork.ranking import PageRank  # lazy: sknetwork takes ~1.1 s to import

        offset = self.undirected.shape[0]
        seeds = {node: 1.0, **{offset + int(a): 1.0 for a in self.signed[node].indices}}
        if self.both[node].nnz == 0:
            return np.zeros(offset, np.float32)
        scores = PageRank(damping_factor=self.damping).fit_predict(self.both, weights=seeds)
        scores = np.asarray(scores[:offset], np.float32)
        scores[node] = 0
        return scores

    def describe(self, row: int, candidates: np.ndarray) -> list[str | None]:
        """For ``author-links``, in words, how many other papers of the query's authors each
        candidate row is linked to ("linked to 2 other papers of the same authors"); None
        where none (and for the other kinds, or a free-text query, row -1)."""
        if self.name != "author-links" or row < 0:
            return [None] * len(candidates)
        theirs = (self.signed @ self.signed[row].T).nonzero()[0]
        theirs = theirs[theirs != row]  # the query's authors' other papers
        counts = np.asarray(self.undirected[theirs][:, np.asarray(candidates, np.int64)]
                            .sum(axis=0)).ravel()
        return [f"linked to {int(n)} other paper{'s' if n > 1 else ''} of the same authors"
                if n else None for n in counts]

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        out = np.full((len(queries), len(candidates)), -np.inf, np.float32)
        linked = np.flatnonzero(queries.rows >= 0)
        if len(linked):
            block = self._rows(queries.rows[linked], candidates)
            out[linked] = np.where(block > 0, block, -np.inf)
        return out
