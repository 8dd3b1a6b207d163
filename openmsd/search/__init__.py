"""Search: related papers (one paper or a library of seeds), free-text search, citation
recommendation and explanations.

The face is lazy (PEP 562): a name loads its own submodule on first use, so a command
loads only the search code its question needs.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

if TYPE_CHECKING:
    from openmsd.search.citation_graph import load_citation_graph, read_graph
    from openmsd.search.feed import atom, digest_html, nothing_new
    from openmsd.search.languages import corpus_languages, language_problem
    from openmsd.search.library import library_seeds, related_to_library
    from openmsd.search.neighbourhood import STRONG_SIMILARITY, Neighbourhood, build_neighbourhood
    from openmsd.search.no_results import no_results_reason
    from openmsd.search.paper_records import (
        load_paper_records,
        paper_aliases,
        read_aliases,
        read_records,
    )
    from openmsd.search.papers import paper_details, papers_by_id
    from openmsd.search.picture import FORMATS, LAYOUTS, Picture, draw, save, svg
    from openmsd.search.ranking import Hit, Ranking, ScorerRanking
    from openmsd.search.recommend import (
        MAX_LOCATIONS,
        CitationRequest,
        Location,
        RankWeights,
        Recommendation,
        language_warning,
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
    from openmsd.search.relevance import UNRATED, percent, ranked, ranked_locations
    from openmsd.search.resources import SearchResources, resources_of
    from openmsd.search.service import (
        SearchService,
        corpus_scorer,
        rank_related,
        rank_search,
        related_papers,
        search,
    )
    from openmsd.search.signals import dense_members
    from openmsd.search.view import (
        context_driver,
        driver_position,
        recommendations_table,
        recommendations_view,
        relevance_texts,
        results_table,
        results_view,
        shorten,
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
    "FORMATS",
    "LAYOUTS",
    "MAX_LOCATIONS",
    "STRONG_SIMILARITY",
    "SUMMARY",
    "UNRATED",
    "CitationRequest",
    "Hit",
    "Location",
    "Neighbourhood",
    "PaperNotFoundError",
    "Picture",
    "RankWeights",
    "Ranking",
    "Recommendation",
    "Result",
    "Results",
    "ScorerRanking",
    "SearchResources",
    "SearchService",
    "Watch",
    "arrivals",
    "atom",
    "build_neighbourhood",
    "compute_related_lists",
    "context_driver",
    "corpus_languages",
    "corpus_scorer",
    "dense_members",
    "digest_html",
    "draw",
    "driver_position",
    "find_paper",
    "is_current",
    "language_problem",
    "language_warning",
    "library_seeds",
    "lists_path",
    "load_citation_graph",
    "load_paper_records",
    "no_results_reason",
    "non_paper_kinds",
    "nothing_new",
    "paper_aliases",
    "paper_details",
    "papers_by_id",
    "percent",
    "rank_related",
    "rank_search",
    "ranked",
    "ranked_locations",
    "read_aliases",
    "read_graph",
    "read_records",
    "recommend_citations",
    "recommendations_table",
    "recommendations_view",
    "record_watch",
    "related_papers",
    "related_to_library",
    "relevance_texts",
    "resources_of",
    "results_table",
    "results_view",
    "save",
    "search",
    "seed_set_name",
    "shorten",
    "stored_related",
    "stored_watches",
    "svg",
    "watch_library",
    "watch_state",
]

__getattr__, __dir__ = lazy_face(__name__)
