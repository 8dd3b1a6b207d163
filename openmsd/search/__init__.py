"""Search: related papers (one paper or a library of seeds), free-text search, citation
recommendation and explanations; how they are shown is :mod:`openmsd.present`'s.

The face is lazy (PEP 562): a name loads its own submodule on first use, so a command
loads only the search code its question needs.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

if TYPE_CHECKING:
    from openmsd.search.citation_graph import load_citation_graph, read_graph
    from openmsd.search.languages import language_problem
    from openmsd.search.library import LibraryResult, library_seeds, related_to_library
    from openmsd.search.no_results import no_results_reason
    from openmsd.search.paper_records import (
        load_paper_records,
        paper_aliases,
        read_aliases,
        read_records,
    )
    from openmsd.search.papers import paper_details, papers_by_id
    from openmsd.search.ranking import Hit, Ranking, ScorerRanking
    from openmsd.search.recommend import (
        MAX_LOCATIONS,
        CitationRequest,
        Location,
        Recommendation,
        recommend_citations,
    )
    from openmsd.search.related import (
        SUMMARY,
        PaperNotFoundError,
        Result,
        Results,
        find_paper,
        non_paper_kinds,
    )
    from openmsd.search.related_lists import (
        compute_related_lists,
        is_current,
        lists_path,
        stored_related,
    )
    from openmsd.search.resources import SearchResources, resources_of
    from openmsd.search.service import (
        SearchService,
        corpus_scorer,
        rank_related,
        rank_search,
        related_papers,
        search,
    )
    from openmsd.search.watch import (
        Watch,
        arrivals,
        record_watch,
        seed_set_name,
        stored_watches,
        watch_library,
        watch_state,
    )

__all__ = [
    "MAX_LOCATIONS",
    "SUMMARY",
    "CitationRequest",
    "Hit",
    "LibraryResult",
    "Location",
    "PaperNotFoundError",
    "Ranking",
    "Recommendation",
    "Result",
    "Results",
    "ScorerRanking",
    "SearchResources",
    "SearchService",
    "Watch",
    "arrivals",
    "compute_related_lists",
    "corpus_scorer",
    "find_paper",
    "is_current",
    "language_problem",
    "library_seeds",
    "lists_path",
    "load_citation_graph",
    "load_paper_records",
    "no_results_reason",
    "non_paper_kinds",
    "paper_aliases",
    "paper_details",
    "papers_by_id",
    "rank_related",
    "rank_search",
    "read_aliases",
    "read_graph",
    "read_records",
    "recommend_citations",
    "record_watch",
    "related_papers",
    "related_to_library",
    "resources_of",
    "search",
    "seed_set_name",
    "stored_related",
    "stored_watches",
    "watch_library",
    "watch_state",
]

__getattr__, __dir__ = lazy_face(__name__)
