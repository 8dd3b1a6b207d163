"""A paper's record as people read it: metadata, English title and abstract, citation counts.
Exports of records (BibTeX, RIS, CSL-JSON) are in :mod:`openmsd.export`."""

from __future__ import annotations

from typing import Any

from openmsd.corpus import Corpus
from openmsd.search.citation_graph import load_citation_graph
from openmsd.search.paper_records import load_paper_records
from openmsd.search.related import PaperNotFoundError, find_paper


def paper_details(corpus: Corpus, key: str) -> dict[str, Any]:
    """The paper named by ``key`` (id, DOI or alias): ``paper_id``, ``doi``, ``title``,
    ``abstract``, ``language``, ``year``, ``venue``, ``authors``, ``keywords``,
    ``english_title``, ``english_abstract`` (for a non-English paper that has them),
    ``references`` (its citations to corpus papers) and ``cited_by`` (corpus papers citing it).
    :class:`openmsd.search.related.PaperNotFoundError` for an unknown key."""
    paper_id = find_paper(corpus, key)
    found = load_paper_records(corpus).get([paper_id])
    if not found:  # gone in a re-ingest since find_paper looked
        raise PaperNotFoundError(f"{corpus.root}: no paper with id or DOI {key!r}")
    graph = load_citation_graph(corpus)
    return {**found[0],
            "references": graph.reference_count(paper_id),
            "cited_by": graph.citer_count(paper_id)}


def papers_by_id(corpus: Corpus, ids: list[str]) -> list[dict[str, Any]]:
    """The records (as :func:`paper_details`, without counts) of the known ``ids``, in their
    order; unknown ids are left out."""
    return load_paper_records(corpus).get(ids)
