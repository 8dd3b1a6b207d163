"""The one way related papers, free-text search, related-to-a-library and citation
recommendation are answered, by the command line and by the server alike:
:class:`SearchService`.

A service answers over one corpus with its :class:`~openmsd.search.resources.SearchResources`
(what is kept in memory: paper records, the citation graph, rankers, related lists). Each
question names a ranking (:mod:`openmsd.search.ranking`): a ranker name (``hybrid-graph``,
``bm25``, a dense model's vector key, a fusion ``A+B``), ranked by that ranker over the
corpus. A server's served models (:meth:`SearchService.serve_model`) are the same rankers,
their query encoder the server's and their index its live one, so a command and the server
answer one question the same way. The hits become :class:`~openmsd.search.related.Result`
rows: each paper's summary, its citation links to the query paper and the text signals that
put it there.

The functions at the end (:func:`rank_related`, :func:`rank_search`, ...) answer one question
with a service of the corpus object's resources.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import VectorIndex, load_index
from openmsd.rank import (
    HYBRID,
    HYBRID_GRAPH,
    QueryEncoder,
    Scorer,
    dense_members,
    papers_first,
    why,
)
from openmsd.search.library import LibraryResult, related_to_library
from openmsd.search.ranking import Hit, Ranking, ScorerRanking, Years
from openmsd.search.recommend import CitationRequest, Location, citation_locations
from openmsd.search.related import (
    Result,
    Results,
    explain,
    find_paper,
    non_paper_kinds,
    related_results,
)
from openmsd.search.resources import SearchResources, resources_of

__all__ = ["SearchService", "corpus_scorer", "rank_related", "rank_search", "related_papers",
           "search"]


class SearchService:
    """Related papers, search, related to a library and citation recommendation over
    ``corpus``, with ``resources`` (default: the corpus object's, :func:`resources_of`).
    A server keeps one per corpus for as long as it serves; a command makes one."""

    def __init__(self, corpus: Corpus, resources: SearchResources | None = None):
        self.corpus = corpus
        self.resources = resources if resources is not None else resources_of(corpus)
        self._served: dict[str, tuple[Callable[[], VectorIndex], Callable[[], QueryEncoder]]] = {}

    def serve_model(self, key: str, index: Callable[[], VectorIndex],
                    encoder: Callable[[], QueryEncoder]) -> None:
        """From now on, the dense model of vector key ``key`` (a server's served model), alone
        or as a ranker's member, encodes free text with ``encoder()`` and searches the index
        ``index()`` gives (the current one; :meth:`openmsd.rank.DenseScorer.serve`)."""
        self._served[key] = (index, encoder)

    def ranking(self, name: str) -> Ranking:
        """The ranking ``name`` answers with: the ranker ``name``
        (:class:`~openmsd.rank.UnknownScorerError` for a name that names none)."""
        return ScorerRanking(name, self.scorer(name), self.resources)

    def built(self, name: str) -> Ranking | None:
        """What :meth:`ranking` would answer at once, without building a ranker; else None."""
        scorer = self.resources.built_scorer(name)
        return ScorerRanking(name, self._serve(scorer), self.resources) \
            if scorer is not None else None

    def scorer(self, name: str) -> Scorer:
        """The ranker ``name`` over every corpus paper (kept in the resources), its served
        dense members reading the served encoder and index."""
        return self._serve(self.resources.scorer(name))

    def _serve(self, scorer: Scorer) -> Scorer:
        for member in dense_members(scorer):
            served = self._served.get(member.name)
            if served is not None:
                member.serve(served[1], served[0])
        return scorer

    def results(self, hits: list[Hit], query_id: str | None) -> list[Result]:
        """``hits`` as results: each paper's summary, its citation links to paper
        ``query_id`` (None: a free text, none), then why (the signals a ranker said)."""
        results = related_results(self.corpus, [(h.paper_id, h.score) for h in hits])
        explain(self.corpus, query_id, results)
        for result, hit in zip(results, hits, strict=True):
            if hit.said is not None:
                result.why = why(hit.said, result.why)
            result.relevance = hit.probability
        return results

    def papers_first(self, rank: Callable[[int], list[Hit]], k: int,
                     include_non_papers: bool = False) -> tuple[list[Hit], Counter[str]]:
        """The first ``k`` hits of ``rank(n)`` (the ``n`` first hits of a ranking) that are
        papers, and the non-papers left out above them by kind
        (:func:`openmsd.rank.papers_first`); with ``include_non_papers``, the first ``k``."""
        if include_non_papers:
            return rank(k), Counter()
        return papers_first(rank, k, non_paper_kinds(self.corpus), lambda hit: hit.paper_id)

    def related(self, paper: str, ranker: str | Ranking = HYBRID_GRAPH, k: int = 10,
                languages: list[str] | None = None, years: Years = None,
                include_non_papers: bool = False) -> Results[Result]:
        """The ``k`` papers ``ranker`` ranks first for paper ``paper`` (an id, DOI or alias;
        never the paper itself); a paper without text still gets graph results, one without
        links text results. Records that are not papers are left out and counted
        (``left_out``) unless ``include_non_papers``."""
        paper_id = find_paper(self.corpus, paper)
        ranking = self.ranking(ranker) if isinstance(ranker, str) else ranker
        hits, left = self.papers_first(
            lambda n: ranking.related(paper_id, n, languages, years), k, include_non_papers)
        return Results(self.results(hits, paper_id), left)

    def search(self, text: str, ranker: str | Ranking = HYBRID, k: int = 10,
               languages: list[str] | None = None, years: Years = None,
               vectors: Mapping[str, np.ndarray] | None = None,
               include_non_papers: bool = False) -> Results[Result]:
        """The ``k`` papers ``ranker`` ranks first for a free ``text``; ``vectors``: the
        text's query vector (one row) for the dense models that have it already (a server's
        batching encoder), by name. Records that are not papers are left out and counted
        (``left_out``) unless ``include_non_papers``."""
        if not text.strip():
            raise ValueError("search: the query text is empty")
        ranking = self.ranking(ranker) if isinstance(ranker, str) else ranker
        hits, left = self.papers_first(
            lambda n: ranking.search(text, n, languages, years, vectors), k,
            include_non_papers)
        return Results(self.results(hits, None), left)

    def index(self, model: str) -> VectorIndex:
        """The vector index of ``model`` (a vector key): the served one, else the corpus's."""
        served = self._served.get(model)
        return served[0]() if served is not None else load_index(self.corpus, model)

    def library(self, positive: list[str], model: str, negative: list[str] | None = None,
                k: int = 10, languages: list[str] | None = None, years: Years = None,
                among: Collection[str] | None = None, include_non_papers: bool = False
                ) -> Results[LibraryResult]:
        """The ``k`` papers nearest to the ``positive`` seeds and away from the ``negative``
        ones in ``model``'s index (:func:`openmsd.search.library.related_to_library`)."""
        return related_to_library(self.corpus, positive, model, negative, k, languages, years,
                                  index=self.index(model), among=among,
                                  include_non_papers=include_non_papers)

    def recommend(self, request: CitationRequest, encoder: QueryEncoder | None = None
                  ) -> list[Location]:
        """Papers to cite at each citation location of a manuscript
        (:func:`openmsd.search.recommend.recommend_citations`), searched in the index of
        ``request.model`` with its query ``encoder`` (default: the served one)."""
        return list(self.recommend_each(request, encoder))

    def recommend_each(self, request: CitationRequest, encoder: QueryEncoder | None = None
                       ) -> Iterator[Location]:
        """:meth:`recommend`'s locations as they are ranked
        (:func:`openmsd.search.recommend.citation_locations`): memory of one batch of
        locations, however many the manuscript has."""
        served = self._served.get(request.model)
        if encoder is None:
            if served is None:
                raise ValueError(f"recommend: no encoder for {request.model!r}: pass one, or "
                                 "serve its model")
            encoder = served[1]()
        return citation_locations(self.corpus, request, encoder,
                                  served[0]() if served is not None else None)


def corpus_scorer(corpus: Corpus, name: str) -> Scorer:
    """The ranker ``name`` over every paper of ``corpus`` (kept in its resources)."""
    return resources_of(corpus).scorer(name)


def rank_related(corpus: Corpus, key: str, ranker: str = HYBRID_GRAPH, k: int = 10,
                 languages: list[str] | None = None, years: Years = None,
                 include_non_papers: bool = False) -> Results[Result]:
    """:meth:`SearchService.related` over ``corpus`` with the ranker ``ranker``."""
    return SearchService(corpus).related(key, ranker, k, languages, years,
                                         include_non_papers=include_non_papers)


def rank_search(corpus: Corpus, text: str, ranker: str = HYBRID, k: int = 10,
                languages: list[str] | None = None, years: Years = None,
                include_non_papers: bool = False) -> Results[Result]:
    """:meth:`SearchService.search` over ``corpus`` with the ranker ``ranker``."""
    return SearchService(corpus).search(text, ranker, k, languages, years,
                                        include_non_papers=include_non_papers)


def related_papers(corpus: Corpus, key: str, model: str, k: int = 10,
                   languages: list[str] | None = None, years: Years = None) -> list[Result]:
    """The ``k`` papers nearest to paper ``key`` (id or DOI) by ``model``'s vectors (a vector
    key)."""
    return SearchService(corpus).related(key, model, k, languages, years)


def search(corpus: Corpus, text: str, encoder: QueryEncoder, model: str, k: int = 10,
           languages: list[str] | None = None, years: Years = None) -> list[Result]:
    """The ``k`` papers nearest to free ``text`` (a title, an abstract, a query) by
    ``model``'s vectors (a vector key), the text encoded by ``encoder``."""
    if not text.strip():
        raise ValueError("search: the query text is empty")
    vector = np.asarray(encoder.encode([text], "query"), np.float32)
    return SearchService(corpus).search(text, model, k, languages, years, {model: vector})
