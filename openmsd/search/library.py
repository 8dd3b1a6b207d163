"""Related to a whole library: the seeds of a library matched to the corpus, and the papers
:class:`openmsd.rank.LibraryQuery` ranks near them, each naming the seeds that put it there.
Seeds are paper ids, DOIs or aliases, or the entries of a BibTeX / RIS library matched to the
corpus by DOI, arXiv id, OpenAlex id or title.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from openmsd.corpus import Corpus
from openmsd.identifiers import normalize_title, without_bidi
from openmsd.index import VectorIndex, load_index
from openmsd.rank import (
    LibraryQuery,
    MissingVectorError,
    library_relevance,
    papers_first,
    rating_ranker,
)
from openmsd.search.related import (
    PaperNotFoundError,
    Result,
    Results,
    find_paper,
    non_paper_kinds,
    related_results,
)
from openmsd.search.resources import resources_of

__all__ = ["LibraryResult", "library_seeds", "related_to_library"]

log = logging.getLogger("openmsd.library")


@dataclass
class LibraryResult(Result):
    """A related paper, with the positive seeds nearest to it."""

    seeds: list[str] = field(default_factory=list)


def _bidi_ids(corpus: Corpus) -> dict[str, str]:
    """The papers whose id or DOI holds bidirectional-text controls, by that id and DOI
    without them (lower case): what openmsd's exports write of them."""
    rows = corpus.connect().execute(
        "SELECT paper_id, doi FROM papers WHERE regexp_matches(paper_id || coalesce(doi, ''), "
        "'[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]')").fetchall()
    out: dict[str, str] = {}
    for paper_id, doi in rows:
        for value in (paper_id, doi):
            if value:
                out.setdefault(without_bidi(value).lower(), paper_id)
    return out


def library_seeds(corpus: Corpus, seeds: list[Any]) -> tuple[list[str], list[str]]:
    """Corpus paper ids of fetch seeds (:class:`openmsd.fetch.Seed`), and the names of those
    that match no corpus paper."""
    found, missing = [], []
    titles: dict[str, str] | None = None
    unseen: dict[str, str] | None = None
    for seed in seeds:
        paper_id = None
        key = seed.key or ""
        candidates = ([key[4:]] if key.startswith("doi:") else
                      [f"openalex:{key}"] if key.startswith("W") else [key]) if key else []
        for candidate in candidates:
            try:
                paper_id = find_paper(corpus, candidate)
                break
            except PaperNotFoundError:
                continue
        if paper_id is None and key:  # an id or DOI holding bidi controls, exported without
            if unseen is None:
                unseen = _bidi_ids(corpus)
            bare = without_bidi(key[4:] if key.startswith("doi:") else key).lower()
            paper_id = unseen.get(bare)
        if paper_id is None and seed.title:
            if titles is None:
                rows = corpus.connect().execute("SELECT paper_id, title FROM papers").fetchall()
                titles = {normalize_title(t): p for p, t in rows if t}
            paper_id = titles.get(normalize_title(seed.title))
        if paper_id is None:
            missing.append(f"{seed.name} ({seed.origin})")
        elif paper_id not in found:
            found.append(paper_id)
    return found, missing


def _relevance(corpus: Corpus, results: list[str], seeds: list[list[str]]
               ) -> list[float | None]:
    """Each result's relevance (:func:`openmsd.rank.library_relevance`) by the corpus's trained
    ranker; unrated (None) without one, or where it cannot rank here (logged)."""
    rater = rating_ranker(corpus)
    if rater is None or not results:
        return [None] * len(results)
    try:
        return library_relevance(resources_of(corpus).scorer(rater), results, seeds)
    except (ValueError, FileNotFoundError) as error:
        log.warning("related to a library: unrated: %s cannot rank here (%s)", rater, error)
        return [None] * len(results)


def related_to_library(corpus: Corpus, positive: list[str], model: str,
                       negative: list[str] | None = None, k: int = 10,
                       languages: list[str] | None = None,
                       years: tuple[int | None, int | None] | None = None,
                       index: VectorIndex | None = None,
                       among: Collection[str] | None = None,
                       include_non_papers: bool = False) -> Results[LibraryResult]:
    """The ``k`` papers nearest to the ``positive`` seeds and away from the ``negative`` ones
    (ids, DOIs or aliases), each with the seeds that put it there; ``among``: only these
    paper ids are ranked (those without a vector are left out:
    :func:`openmsd.rank.without_vectors`). Records that are not papers are left out and
    counted (``left_out``) unless ``include_non_papers``."""
    if not positive:
        raise ValueError("related to a library: no positive seed")
    pos = [find_paper(corpus, key) for key in positive]
    neg = [find_paper(corpus, key) for key in negative or []]
    index = index or load_index(corpus, model)
    try:
        query = LibraryQuery(index, pos, neg)
        hits, left = papers_first(
            lambda n: query.nearest(n, languages, years, among), k,
            {} if include_non_papers else non_paper_kinds(corpus), lambda hit: hit[0])
        results = Results([LibraryResult(**vars(r)) for r in related_results(corpus, hits)],
                          left)
        seeds = query.seeds_of([r.paper_id for r in results]) if results else []
    except MissingVectorError as error:
        role, paper_id = error.args
        raise PaperNotFoundError(f"{corpus.root}: {role} seed {paper_id!r} has no vector; "
                                 "run 'openmsd embed' and 'openmsd index build'") from None
    chances = _relevance(corpus, [r.paper_id for r in results], seeds)
    for result, near, chance in zip(results, seeds, chances, strict=True):
        result.seeds, result.relevance = near, chance
        result.why = [f"near {len(near)} of {len(pos)} seeds: " + ", ".join(near[:3])
                      + (" ..." if len(near) > 3 else "")]
    return results
