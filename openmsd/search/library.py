"""Related to a whole library: papers near a set of positive seeds and away from negative ones
(the Semantic Scholar recommendations API's positive / negative seeds, done locally).

The query is Rocchio's: the mean of the positive seeds' vectors minus half the mean of the
negatives', normalised; the seeds themselves are never results. Each result names the seeds
that put it there: the positive seeds it is nearest to (cosine within 0.05 of its best).
Seeds are paper ids, DOIs or aliases, or the entries of a BibTeX / RIS library matched to the
corpus by DOI, arXiv id, OpenAlex id or title.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.identifiers import normalize_title, without_bidi
from openmsd.index import VectorIndex, load_index
from openmsd.rank import papers_first
from openmsd.search.related import (
    PaperNotFoundError,
    Result,
    Results,
    find_paper,
    non_paper_kinds,
    related_results,
)

__all__ = ["NEGATIVE_WEIGHT", "LibraryResult", "library_seeds", "related_to_library",
           "without_vectors"]

NEGATIVE_WEIGHT = 0.5
SEED_MARGIN = 0.05


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


def _vectors(index: VectorIndex, ids: list[str], what: str, corpus: Corpus) -> np.ndarray:
    rows = []
    for paper_id in ids:
        try:
            rows.append(index.vector(index.row(paper_id)))
        except ValueError:
            raise PaperNotFoundError(f"{corpus.root}: {what} seed {paper_id!r} has no vector; "
                                     "run 'openmsd embed' and 'openmsd index build'") from None
    return np.asarray(rows, np.float32).reshape(len(ids), index.index.d)


def without_vectors(index: VectorIndex, ids: Collection[str]) -> list[str]:
    """The ``ids`` that have no vector in ``index`` (no title or abstract, or not embedded)."""
    return [paper_id for paper_id in ids if paper_id not in index.rows]


def _rank_among(index: VectorIndex, query: np.ndarray, ids: list[str], k: int,
                languages: list[str] | None,
                years: tuple[int | None, int | None] | None) -> list[tuple[str, float]]:
    """The ``k`` of ``ids`` (those with a vector) nearest to ``query``, by cosine."""
    keep = index.allowed(languages, years)
    rows = [r for paper_id in ids if (r := index.rows.get(paper_id)) is not None
            and (keep is None or keep[r])]
    if not rows:
        return []
    vectors = np.asarray([index.vector(r) for r in rows], np.float32)
    scores = vectors @ query
    top = np.argsort(-scores, kind="stable")[:k]
    return [(index.ids[rows[i]], float(scores[i])) for i in top]


def related_to_library(corpus: Corpus, positive: list[str], model: str,
                       negative: list[str] | None = None, k: int = 10,
                       languages: list[str] | None = None,
                       years: tuple[int | None, int | None] | None = None,
                       index: VectorIndex | None = None,
                       among: Collection[str] | None = None,
                       include_non_papers: bool = False) -> Results[LibraryResult]:
    """The ``k`` papers nearest to the ``positive`` seeds and away from the ``negative`` ones
    (ids, DOIs or aliases), each with the seeds that put it there; ``among``: only these
    paper ids are ranked (those without a vector are left out: :func:`without_vectors`).
    Records that are not papers are left out and counted (``left_out``) unless
    ``include_non_papers``."""
    if not positive:
        raise ValueError("related to a library: no positive seed")
    pos = [find_paper(corpus, key) for key in positive]
    neg = [find_paper(corpus, key) for key in negative or []]
    index = index or load_index(corpus, model)
    pos_vectors = _vectors(index, pos, "positive", corpus)
    query = pos_vectors.mean(axis=0)
    if neg:
        query = query - NEGATIVE_WEIGHT * _vectors(index, neg, "negative", corpus).mean(axis=0)
    query /= np.linalg.norm(query) or 1.0
    skip = set(pos) | set(neg)

    def rank(n: int) -> list[tuple[str, float]]:
        if among is None:
            hits = index.search(query[None, :], n + len(skip), languages, years)[0]
            return [hit for hit in hits if hit[0] not in skip][:n]
        return _rank_among(index, query, [p for p in among if p not in skip], n, languages,
                           years)

    hits, left = papers_first(rank, k, {} if include_non_papers else non_paper_kinds(corpus),
                              lambda hit: hit[0])
    results = Results([LibraryResult(**vars(r)) for r in related_results(corpus, hits)], left)
    if results:
        found = _vectors(index, [r.paper_id for r in results], "result", corpus)
        near = found @ pos_vectors.T
        for result, scores in zip(results, near, strict=True):
            best = scores.max()
            result.seeds = [pos[i] for i in np.argsort(-scores) if scores[i] >= best - SEED_MARGIN]
            result.why = [f"near {len(result.seeds)} of {len(pos)} seeds: "
                          + ", ".join(result.seeds[:3])
                          + (" ..." if len(result.seeds) > 3 else "")]
    return results
