"""What every ranker is: a :class:`Scorer` over a collection of :class:`Papers`.

* ``score(queries, candidates)``: exact scores, a (queries × candidates) float32 matrix, for
  ``candidates`` given as row numbers of the collection; ``-inf`` where a scorer has nothing to
  say (a candidate without a vector, a query paper against itself).
* ``top_k(queries, k, filters)``: the ``k`` best rows of the collection for each query (only
  rows where the boolean mask ``filters`` is true), best first, never the query paper itself.

A query is a paper of the collection (``rows[i] >= 0``: its text, language and links are the
collection's) or a free text (``rows[i] == -1``).

>>> papers = Papers(["a", "b"], ["graph neural networks", "protein folding"], ["en", "en"])
>>> Queries.of_rows(papers, [1]).texts
['protein folding']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from openmsd.corpus import identify_sure
from openmsd.rank.topk import top_k_of_scores

if TYPE_CHECKING:
    from openmsd.corpus import Corpus


#: The language-identification confidence from which a free-text query's language is used.
CONFIDENT = 0.9


@dataclass
class Papers:
    """The candidate collection: ids, texts (title + abstract), languages (``und`` when
    unknown), English texts (a paper's own English title/abstract or its English summary; ""
    where none) and the corpus it comes from (for stored vectors and the citation graph)."""

    ids: list[str]
    texts: list[str]
    languages: list[str]
    english: list[str] = field(default_factory=list)
    corpus: Corpus | None = None

    def __post_init__(self) -> None:
        if not self.english:
            self.english = [""] * len(self.ids)
        self.position = {paper: i for i, paper in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class Queries:
    """Queries: texts, languages, English texts, and the collection row of each (-1: free
    text)."""

    texts: list[str]
    languages: list[str]
    english: list[str]
    rows: np.ndarray
    #: each dense scorer's query vectors, once encoded (a fusion's stages encode a query once)
    vectors: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    #: while a fusion ranks these queries (None otherwise: nothing kept), each dense
    #: member's ``top_k`` candidates: their rows (queries × m, -1: none) and stored vectors
    #: (queries × m × dim), read once from the collection's matrix and scored again from
    #: there (:meth:`openmsd.rank.dense.DenseScorer.score_pools`); not carried by
    #: :meth:`subset`
    read: dict[str, tuple[np.ndarray, np.ndarray]] | None = field(default=None, repr=False)

    @classmethod
    def of_rows(cls, papers: Papers, rows: Sequence[int] | np.ndarray) -> Queries:
        """The papers at ``rows`` of the collection as queries."""
        rows = np.asarray(rows, np.int64)
        return cls([papers.texts[r] for r in rows], [papers.languages[r] for r in rows],
                   [papers.english[r] for r in rows], rows)

    @classmethod
    def of_texts(cls, texts: Sequence[str], languages: Sequence[str] | None = None) -> Queries:
        """Free texts as queries; their language, when not given, detected where the
        detector is confident (:data:`CONFIDENT`), else ``und`` (a lexical scorer then reads
        the query in every language of its collection)."""
        if languages is None:
            languages = identify_sure(list(texts), CONFIDENT)
        return cls(list(texts), list(languages), [""] * len(texts),
                   np.full(len(texts), -1, np.int64))

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, index: Sequence[int] | np.ndarray) -> Queries:
        index = np.asarray(index, np.int64)
        return Queries([self.texts[i] for i in index], [self.languages[i] for i in index],
                       [self.english[i] for i in index], self.rows[index],
                       {name: vectors[index] for name, vectors in self.vectors.items()})


@runtime_checkable
class Scorer(Protocol):
    """A ranker over one collection."""

    name: str
    papers: Papers
    #: what the scorer reads: "text" (title/abstract), "graph" (citation links)
    signal: str
    #: whether ``top_k`` is cheap enough to propose a fusion's candidates (an index, sparse
    #: graph rows), not a score of every paper of the collection
    generates: bool

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray: ...

    def top_k(self, queries: Queries, k: int, filters: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]: ...


def exclude_self(scores: np.ndarray, queries: Queries, candidates: np.ndarray) -> np.ndarray:
    """``scores`` with ``-inf`` where a candidate is the query paper itself (in place)."""
    if (queries.rows >= 0).any():
        hit = queries.rows[:, None] == np.asarray(candidates)[None, :]
        scores[hit] = -np.inf
    return scores


def best_of(scores: np.ndarray, candidates: np.ndarray, k: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the ``k`` best candidates (row numbers) and their scores, best first; a place
    with no finite score holds row -1 and score ``-inf``."""
    if scores.shape[1] == 0:
        return (np.full((len(scores), 0), -1, np.int64), np.zeros((len(scores), 0), np.float32))
    index, best = top_k_of_scores(scores, k)
    rows = np.asarray(candidates)[index]
    rows[~np.isfinite(best)] = -1
    return rows, best


def score_pools(scorer: Scorer, queries: Queries, pools: Sequence[np.ndarray]
                ) -> list[np.ndarray]:
    """Each query's exact scores of its own candidates (``pools[i]``, row numbers): a list of
    1-d float32 arrays, the same values as ``score(queries.subset([i]), pools[i])[0]``. A
    scorer may do this for all queries at once (``scorer.score_pools``: BM25 analyses every
    query together, a graph scorer reads every query's sparse row in one product); else one
    ``score`` call per query."""
    batched = getattr(scorer, "score_pools", None)
    if batched is not None:
        return batched(queries, pools)
    return [np.asarray(scorer.score(queries.subset([i]), pool), np.float32)[0]
            for i, pool in enumerate(pools)]


class ExactScorer:
    """A scorer whose ``top_k`` scores every candidate exactly (linear in the collection:
    milliseconds per query at 100,000 papers for BM25, dense dot products and graph rows)."""

    name = "scorer"
    signal = "text"
    generates = False
    #: a score of 0 or less means "no evidence" (no shared word, no link): never a candidate
    positive_only = False
    papers: Papers

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def top_k(self, queries: Queries, k: int, filters: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        candidates = (np.flatnonzero(filters) if filters is not None
                      else np.arange(len(self.papers)))
        scores = exclude_self(self.score(queries, candidates), queries, candidates)
        if self.positive_only:
            scores[scores <= 0] = -np.inf
        return best_of(scores, candidates, k)


class RandomScorer(ExactScorer):
    """Uniform random scores, seeded per query paper: the random baseline."""

    name = "random"

    def __init__(self, papers: Papers, seed: int = 0):
        self.papers, self.seed = papers, seed

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        return np.vstack([np.random.default_rng([self.seed, int(max(q, 0))])
                          .random(len(self.papers), np.float32)[candidates]
                          for q in queries.rows]).reshape(len(queries), len(candidates))


class LanguagePairScorer(ExactScorer):
    """A scorer heard only for some pairs of languages, ``-inf`` elsewhere:

    * ``NAME@en`` (any language code): query and candidate both in that language
      (``minilm-en@en``: the English-only model beside the multilingual one, for English pairs);
    * ``NAME@same``: query and candidate in the same language (``bm25@same``: words compared
      only within a language, so that cross-lingual pairs are left to the dense model and the
      English view); a query or candidate of unknown language (``und``) pairs with any;
    * ``NAME@cross``: query and candidate in two different known languages, the pairs
      ``NAME@same`` does not hear, for the queries the inner scorer reads (its ``reads``, where
      it has one): ``bm25-en@cross``: an English query, or a paper with an English text,
      meets a Portuguese paper through its English title, and no pair is counted by two BM25
      views.
    """

    def __init__(self, inner: Scorer, language: str):
        self.inner, self.language = inner, language
        self.papers, self.signal = inner.papers, inner.signal
        self.name = f"{inner.name}@{language}"
        # each paper's language as a number, listed once (compared per query)
        names, codes = np.unique(np.array([*self.papers.languages, "und"], dtype=object),
                                 return_inverse=True)
        self.code = {str(name): i for i, name in enumerate(names)}
        self.codes = codes[:-1].astype(np.int32)

    def heard(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        """A (queries × candidates) mask of the pairs this scorer speaks for."""
        return self._heard(self._codes_of(queries), self.codes[candidates])

    def _codes_of(self, queries: Queries) -> np.ndarray:
        codes = np.array([self.code.get(lang, -1) for lang in queries.languages], np.int32)
        reads = getattr(self.inner, "reads", None)
        if self.language == "cross" and reads is not None:
            # a query the inner scorer cannot read (a Spanish text against English words) would
            # meet the other languages' papers only by chance: heard by none, as one of unknown
            # language (whose pairs are all NAME@same's)
            codes[~reads(queries)] = self.code["und"]
        return codes

    def _heard(self, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        if self.language in ("same", "cross"):
            und = self.code["und"]
            same = ((mine[:, None] == theirs[None, :]) | (mine[:, None] == und)
                    | (theirs[None, :] == und))
            return same if self.language == "same" else ~same
        wanted = self.code.get(self.language, -2)
        return (mine[:, None] == wanted) & (theirs[None, :] == wanted)

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        mask = self.heard(queries, candidates)
        scores = np.full(mask.shape, -np.inf, np.float32)
        rows, columns = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        if len(rows) and len(columns):
            inner = self.inner.score(queries.subset(rows), candidates[columns])
            scores[np.ix_(rows, columns)] = np.where(mask[np.ix_(rows, columns)], inner,
                                                     -np.inf)
        return scores

    def score_pools(self, queries: Queries, pools: Sequence[np.ndarray]) -> list[np.ndarray]:
        """:func:`score_pools`: each query's pairs heard, the inner scorer asked for all
        queries at once (BM25 analyses them together) and only for those pairs."""
        pools = [np.asarray(pool, np.int64) for pool in pools]
        mine = self._codes_of(queries)
        heard = [np.flatnonzero(self._heard(mine[i:i + 1], self.codes[pool])[0])
                 for i, pool in enumerate(pools)]
        out = [np.full(len(pool), -np.inf, np.float32) for pool in pools]
        asked = [i for i, columns in enumerate(heard) if len(columns)]  # as score() asks
        if asked:
            inner = score_pools(self.inner, queries if len(asked) == len(queries)
                                else queries.subset(asked), [pools[i][heard[i]] for i in asked])
            for i, scores in zip(asked, inner, strict=True):
                out[i][heard[i]] = scores
        return out
