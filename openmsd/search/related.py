"""A related paper as an answer shows it, and why it is related.

Each :class:`Result` carries the paper's metadata (with its English title when it is not
English) and, where the citation graph knows, why it is related: it is cited by or cites the
query paper, shares n references with it (bibliographic coupling), or is co-cited with it n
times. :func:`find_paper` names a corpus paper by id, DOI or alias.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from openmsd.corpus import Corpus, non_papers
from openmsd.identifiers import key_aliases, normalize_doi
from openmsd.rank import link_words
from openmsd.search.citation_graph import load_citation_graph
from openmsd.search.paper_records import load_paper_records, paper_aliases
from openmsd.search.resources import resources_of

T = TypeVar("T")

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
    #: the probability (0 to 1) that the paper is linked to the query, from the corpus's
    #: trained ranker (``openmsd train ranker``); None: unrated
    relevance: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {**vars(self), "why": list(self.why)}  # what asdict gives, without deep copies


class Results(list[T]):
    """Ranked results, and the records that are not papers left out of them (``left_out``:
    their count by kind, :mod:`openmsd.rank.non_papers`; empty when none was, or when they
    were asked for)."""

    def __init__(self, results: Iterable[T] = (), left_out: Mapping[str, int] | None = None):
        super().__init__(results)
        self.left_out = dict(left_out or {})


def non_paper_kinds(corpus: Corpus) -> dict[str, str]:
    """Each record of ``corpus`` that is not a paper: its id -> its kind
    (:func:`openmsd.corpus.non_papers`), read once per corpus build."""
    return resources_of(corpus).kept("non_papers", None, lambda: non_papers(corpus))


def find_paper(corpus: Corpus, key: str) -> str:
    """The ``paper_id`` of a paper id, a DOI (any form), or any alias (``openalex:W1``)."""
    doi = normalize_doi(key)
    candidates = dict.fromkeys([key, *([doi, f"doi:{doi}"] if doi else []), *key_aliases(key)])
    records, aliases = load_paper_records(corpus), paper_aliases(corpus)
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
    links = load_citation_graph(corpus).links(query_id, [r.paper_id for r in results])
    for result, link in zip(results, links, strict=True):
        result.cites, result.cited_by = link.cites, link.cited_by
        result.shared_references, result.co_cited = link.shared_references, link.co_cited
        result.why = link_words(link.cites, link.cited_by, link.shared_references,
                                link.co_cited)


def related_results(corpus: Corpus, hits: list[tuple[str, float]]) -> list[Result]:
    """Results of ``(paper_id, score)`` hits, with each paper's summary columns."""
    records = load_paper_records(corpus).get([h[0] for h in hits], SUMMARY)
    return [Result(paper_id, round(score, 4), paper["title"], paper["english_title"],
                   paper["language"], paper["year"], paper["venue"], paper["doi"])
            for (paper_id, score), paper in zip(hits, records, strict=True)]
