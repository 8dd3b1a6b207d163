"""Search: related papers (one paper or a library of seeds), free-text search, citation
recommendation and explanations.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.search.build_cache import is_loaded
    from openmsd.search.citation_graph import load_citation_graph, read_graph
    from openmsd.search.languages import corpus_languages, language_problem
    from openmsd.search.library import library_seeds, related_to_library
    from openmsd.search.paper_records import (
        load_paper_records,
        paper_aliases,
        read_aliases,
        read_records,
    )
    from openmsd.search.papers import paper_details, papers_by_id
    from openmsd.search.ranking import (
        built_scorer,
        corpus_scorer,
        dense_members,
        is_built,
        rank_related,
        rank_search,
    )
    from openmsd.search.recommend import (
        MAX_LOCATIONS,
        RankWeights,
        language_warning,
        recommend_citations,
    )
    from openmsd.search.related import (
        SUMMARY,
        PaperNotFoundError,
        Result,
        find_paper,
        nearest,
        related_papers,
        search,
    )
    from openmsd.search.related_lists import (
        compute_related_lists,
        is_current,
        lists_path,
        stored_related,
    )
    from openmsd.search.view import recommendations_view, results_table, shorten

_WHERE: dict[str, str] = {
    "MAX_LOCATIONS": "recommend",
    "PaperNotFoundError": "related",
    "RankWeights": "recommend",
    "Result": "related",
    "SUMMARY": "related",
    "built_scorer": "ranking",
    "compute_related_lists": "related_lists",
    "corpus_languages": "languages",
    "corpus_scorer": "ranking",
    "dense_members": "ranking",
    "find_paper": "related",
    "is_built": "ranking",
    "is_current": "related_lists",
    "is_loaded": "build_cache",
    "language_problem": "languages",
    "language_warning": "recommend",
    "library_seeds": "library",
    "lists_path": "related_lists",
    "load_citation_graph": "citation_graph",
    "load_paper_records": "paper_records",
    "nearest": "related",
    "paper_aliases": "paper_records",
    "paper_details": "papers",
    "papers_by_id": "papers",
    "rank_related": "ranking",
    "rank_search": "ranking",
    "read_aliases": "paper_records",
    "read_graph": "citation_graph",
    "read_records": "paper_records",
    "recommend_citations": "recommend",
    "recommendations_view": "view",
    "related_papers": "related",
    "related_to_library": "library",
    "results_table": "view",
    "search": "related",
    "shorten": "view",
    "stored_related": "related_lists",
}

__all__ = [
    "MAX_LOCATIONS", "SUMMARY", "PaperNotFoundError", "RankWeights", "Result", "built_scorer",
    "compute_related_lists", "corpus_languages", "corpus_scorer",
    "dense_members", "find_paper", "is_built", "is_current", "is_loaded", "language_problem",
    "language_warning",
    "library_seeds", "lists_path", "load_citation_graph", "load_paper_records", "nearest",
    "paper_aliases", "paper_details", "papers_by_id", "rank_related", "rank_search",
    "read_aliases", "read_graph", "read_records", "recommend_citations", "recommendations_view",
    "related_papers", "related_to_library", "results_table", "search", "shorten", "stored_related",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
