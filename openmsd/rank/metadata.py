"""Scorers of a paper's metadata: who wrote it and when (read from the corpus, not its links).

* ``authors``: the authors two papers share, each weighted by 1 / log(2 + the number of corpus
  papers that author signed) (Adamic–Adar over the paper–author graph: a shared prolific
  author says less than a shared rare one). Researchers cite and are co-cited with their own
  earlier work and their co-authors'.
* ``year``: closeness in publication year, −|year(Q) − year(X)|.

Names are compared case-folded and without accents. A free-text query, a paper without
authors or year, has no score (``-inf``). These scorers read no citation link, so the
text-only protocol allows them (signal ``metadata``).

>>> papers = Papers(["a", "b", "c"], ["x", "y", "z"], ["en"] * 3)
>>> scorer = AuthorScorer(papers, [["Ana Pérez"], ["ana perez", "Li Wei"], ["Li Wei"]])
>>> scorer.score(Queries.of_rows(papers, [0]), np.array([1, 2])).astype(float).round(3).tolist()
[[0.721, -inf]]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from openmsd.rank.scorer import ExactScorer, Papers, Queries

METADATA_SCORERS = ("authors", "year")


def author_key(author: str) -> str:
    """An author's name as compared: case-folded, without accents, spaces collapsed.

    >>> author_key(" Ana  PÉREZ")
    'ana perez'
    """
    folded = unicodedata.normalize("NFKD", author.casefold())
    return " ".join("".join(c for c in folded if not unicodedata.combining(c)).split())


def corpus_metadata(papers: Papers) -> tuple[list[list[str]], np.ndarray, dict[str, int]]:
    """Per paper of the collection its authors and year (``nan`` unknown), and per author
    (normalised) the number of corpus papers signed."""
    authors: list[list[str]] = [[] for _ in papers.ids]
    years = np.full(len(papers), np.nan)
    counts: dict[str, int] = {}
    if papers.corpus is None:
        return authors, years, counts
    rows = papers.corpus.connect().execute(
        "SELECT paper_id, authors, year FROM papers").fetchall()
    for paper_id, names, year in rows:
        names = sorted({author_key(a) for a in names or [] if a and a.strip()})
        for name in names:
            counts[name] = counts.get(name, 0) + 1
        i = papers.position.get(paper_id)
        if i is not None:
            authors[i] = names
            years[i] = np.nan if year is None else float(year)
    return authors, years, counts


class AuthorScorer(ExactScorer):
    """``authors``: shared authors, rarer ones weighing more (see the module)."""

    name, signal, positive_only = "authors", "metadata", True

    def __init__(self, papers: Papers, authors: Sequence[Sequence[str]],
                 counts: dict[str, int] | None = None):
        self.papers = papers
        names = [[author_key(a) for a in paper] for paper in authors]
        vocabulary = {a: i for i, a in enumerate(sorted({a for paper in names for a in paper}))}
        if counts is None:
            counts = {}
            for paper in names:
                for a in set(paper):
                    counts[a] = counts.get(a, 0) + 1
        rows = [i for i, paper in enumerate(names) for _ in set(paper)]
        columns = [vocabulary[a] for paper in names for a in sorted(set(paper))]
        self.signed = sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, columns)),
                                        shape=(len(papers), max(1, len(vocabulary))))
        inverse = sorted(vocabulary, key=vocabulary.get)  # type: ignore[arg-type]
        weight = np.array([1 / np.log(2 + counts.get(a, 1)) for a in inverse] or [0.0],
                          np.float32)
        self.weighted = (self.signed @ sparse.diags(weight)).tocsr()

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        out = np.full((len(queries), len(candidates)), -np.inf, np.float32)
        linked = np.flatnonzero(queries.rows >= 0)
        if len(linked):
            block = (self.weighted[queries.rows[linked]] @ self.signed[candidates].T).toarray()
            out[linked] = np.where(block > 0, block, -np.inf)
        return out


class YearScorer(ExactScorer):
    """``year``: −|Δ year| (see the module)."""

    name, signal = "year", "metadata"

    def __init__(self, papers: Papers, years: np.ndarray):
        self.papers, self.years = papers, np.asarray(years, np.float64)

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        mine = np.where(queries.rows >= 0, self.years[np.maximum(queries.rows, 0)], np.nan)
        gap = -np.abs(mine[:, None] - self.years[candidates][None, :])
        return np.where(np.isfinite(gap), gap, -np.inf).astype(np.float32)


def metadata_scorer(papers: Papers, name: str) -> ExactScorer:
    """``authors`` or ``year`` over the collection's corpus."""
    authors, years, counts = corpus_metadata(papers)
    if name == "authors":
        return AuthorScorer(papers, authors, counts)
    if name == "year":
        return YearScorer(papers, years)
    raise ValueError(f"unknown metadata scorer {name!r}: one of {', '.join(METADATA_SCORERS)}")
