"""Related papers of a paper, and free-text search, with why each result is related.

``related`` embeds nothing: it looks the paper's vector up in the index and searches with it
(the paper itself is never a result). ``search`` embeds the text as a query. Each result
carries the paper's metadata (with its English title when it is not English) and, where the
citation graph knows, why it is related: it is cited by or cites the query paper, shares n
references with it (bibliographic coupling), or is co-cited with it n times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openmsd.corpus.identifiers import key_aliases, normalize_doi
from openmsd.corpus.store import Corpus
from openmsd.index.vector_index import VectorIndex, load_index
from openmsd.models.encoder import DenseEncoder
from openmsd.search.citation_graph import citation_graph
from openmsd.search.paper_records import paper_aliases, paper_records

SUMMARY = ["title", "english_title", "language", "year", "venue", "doi"]
"""The record columns a result shows."""


class PaperNotFoundError(LookupError):
    """A paper id or DOI that names no corpus paper."""


@dataclass
class Result:
    """One related paper (the API's ``Result`` is this, as a pydantic model:
    :mod:`openmsd.server.api`)."""

    paper_id: str
    score: float
    title: str | None
    english_title: str | None
    language: str | None
    year: int | None
    venue: str | None
    doi: str | None
    cites: bool = False
    cited_by: bool = False
    shared_references: int = 0
    co_cited: int = 0
    why: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**vars(self), "why": list(self.why)}  # what asdict gives, without deep copies


def find_paper(corpus: Corpus, key: str) -> str:
    """The ``paper_id`` of a paper id, a DOI (any form), or any alias (``openalex:W1``)."""
    doi = normalize_doi(key)
    candidates = dict.fromkeys([key, *([doi, f"doi:{doi}"] if doi else []), *key_aliases(key)])
    records, aliases = paper_records(corpus), paper_aliases(corpus)
    for candidate in candidates:
        if candidate in records:
            return candidate
        if candidate in aliases:
            return aliases[candidate]
    raise PaperNotFoundError(f"{corpus.root}: no paper with id or DOI {key!r}")


def explain(corpus: Corpus, query_id: str | None, results: list[Result]) -> None:
    """Set each result's citation links to ``query_id`` and the sentences saying them."""
    if query_id is None or not results:
        return
    links = citation_graph(corpus).links(query_id, [r.paper_id for r in results])
    for result, link in zip(results, links, strict=True):
        result.cites, result.cited_by = link.cites, link.cited_by
        result.shared_references, result.co_cited = link.shared_references, link.co_cited
        shared, co_cited = link.shared_references, link.co_cited
        why = []
        if link.cites:
            why.append("cited by the query paper")
        if link.cited_by:
            why.append("cites the query paper")
        if shared:
            why.append(f"{shared} shared reference{'s' if shared > 1 else ''}")
        if co_cited:
            why.append(f"co-cited {co_cited} time{'s' if co_cited > 1 else ''}")
        result.why = why


def related_results(corpus: Corpus, hits: list[tuple[str, float]]) -> list[Result]:
    """Results of ``(paper_id, score)`` hits, with each paper's summary columns."""
    records = paper_records(corpus).get([h[0] for h in hits], SUMMARY)
    return [Result(paper_id, round(score, 4), paper["title"], paper["english_title"],
                   paper["language"], paper["year"], paper["venue"], paper["doi"])
            for (paper_id, score), paper in zip(hits, records, strict=True)]


def related(corpus: Corpus, key: str, model: str, k: int = 10,
            languages: list[str] | None = None,
            years: tuple[int | None, int | None] | None = None,
            index: VectorIndex | None = None) -> list[Result]:
    """The ``k`` papers nearest to paper ``key`` (id or DOI) in ``model``'s index."""
    paper_id = find_paper(corpus, key)
    index = index or load_index(corpus, model)
    try:
        row = index.row(paper_id)
    except ValueError:
        raise PaperNotFoundError(f"{corpus.root}: paper {paper_id!r} has no vector for "
                                 f"{model!r} (no title or abstract?); run 'openmsd embed' and "
                                 "'openmsd index build' after ingesting it") from None
    vector = index.vector(row)[None, :]
    hits = index.search(vector, k, languages, years, exclude=[paper_id])[0]
    results = related_results(corpus, hits)
    explain(corpus, paper_id, results)
    return results


def search(corpus: Corpus, text: str, encoder: DenseEncoder, model: str, k: int = 10,
           languages: list[str] | None = None,
           years: tuple[int | None, int | None] | None = None,
           index: VectorIndex | None = None) -> list[Result]:
    """The ``k`` papers nearest to free ``text`` (a title, an abstract, a query)."""
    if not text.strip():
        raise ValueError("search: the query text is empty")
    return nearest(corpus, encoder.encode([text], "query"), model, k, languages, years, index)


def nearest(corpus: Corpus, vector: np.ndarray, model: str, k: int = 10,
            languages: list[str] | None = None,
            years: tuple[int | None, int | None] | None = None,
            index: VectorIndex | None = None) -> list[Result]:
    """The ``k`` papers nearest to a query ``vector`` (one row) in ``model``'s index."""
    index = index or load_index(corpus, model)
    vector = np.asarray(vector, np.float32).reshape(1, -1)
    return related_results(corpus, index.search(vector, k, languages, years)[0])
