"""Fetching a researcher's own corpus from the open APIs: OpenAlex works around seed papers
(pyalex), Crossref works for DOIs (plain HTTP), seeds from ids, BibTeX, RIS or Zotero.

The API clients are the ``fetch`` extra, so the face is lazy (PEP 562): a name loads its own
submodule on first use, and seed files (:func:`read_seed_file`) work without the extra.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

if TYPE_CHECKING:
    from openmsd.fetch.budget import PRICES, Budget, BudgetSpent, CostCap
    from openmsd.fetch.crawler import (
        BATCH,
        PER_PAGE,
        FetchPlan,
        FetchReport,
        check_out,
        crawl,
        iter_works,
        sidecar_path,
    )
    from openmsd.fetch.crossref import (
        CROSSREF_API,
        CrossrefReport,
        check_mailto,
        dois_lacking,
        fetch_crossref,
    )
    from openmsd.fetch.dry_run import Estimate, estimate, estimate_view
    from openmsd.fetch.errors import (
        BadAnswer,
        FetchError,
        NetworkError,
        PlanRequired,
        QueryTooLong,
    )
    from openmsd.fetch.ids import seed_path, work_id
    from openmsd.fetch.openalex import DEFAULT_API, SEARCH_MAX, OpenAlex, fit_search
    from openmsd.fetch.seeds import (
        LOCAL_API,
        LOCAL_API_ENV,
        ZOTERO_LOCAL,
        Seed,
        SeedError,
        is_zotero_local,
        read_seed_file,
        read_seeds,
        seeds_from_bibtex,
        seeds_from_ids,
        seeds_from_ris,
        seeds_from_zotero,
        seeds_from_zotero_local,
    )
    from openmsd.fetch.session import DeadlineExceeded, Polite, ResponseTooLarge

__all__ = [
    "BATCH", "CROSSREF_API", "DEFAULT_API", "LOCAL_API", "LOCAL_API_ENV", "PER_PAGE", "PRICES",
    "SEARCH_MAX", "ZOTERO_LOCAL", "BadAnswer", "Budget", "BudgetSpent", "CostCap",
    "CrossrefReport", "DeadlineExceeded", "Estimate", "FetchError", "FetchPlan", "FetchReport",
    "NetworkError", "OpenAlex", "PlanRequired", "Polite", "QueryTooLong", "ResponseTooLarge",
    "Seed", "SeedError", "check_mailto", "check_out", "crawl", "dois_lacking", "estimate",
    "estimate_view", "fetch_crossref", "fit_search", "is_zotero_local", "iter_works",
    "read_seed_file", "read_seeds", "seed_path", "seeds_from_bibtex", "seeds_from_ids",
    "seeds_from_ris", "seeds_from_zotero", "seeds_from_zotero_local", "sidecar_path", "work_id",
]

__getattr__, __dir__ = lazy_face(__name__)
