"""Fetching a researcher's own corpus from the open APIs: OpenAlex works around seed papers
(pyalex), Crossref works for DOIs (habanero), seeds from ids, BibTeX, RIS or Zotero.

The API clients are the ``fetch`` extra: names are imported on first use, so seed files
(:func:`read_seed_file`) work without it.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

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
    from openmsd.fetch.crossref import CROSSREF_API, CrossrefReport, dois_lacking, fetch_crossref
    from openmsd.fetch.dry_run import Estimate, estimate, estimate_view
    from openmsd.fetch.errors import BadAnswer, FetchError, NetworkError
    from openmsd.fetch.ids import seed_path, work_id
    from openmsd.fetch.openalex import DEFAULT_API, OpenAlex
    from openmsd.fetch.seeds import (
        Seed,
        SeedError,
        read_seed_file,
        seeds_from_bibtex,
        seeds_from_ids,
        seeds_from_ris,
        seeds_from_zotero,
    )
    from openmsd.fetch.session import DeadlineExceeded, Polite, ResponseTooLarge

_WHERE: dict[str, str] = {
    "BATCH": "crawler",
    "BadAnswer": "errors",
    "Budget": "budget",
    "BudgetSpent": "budget",
    "CostCap": "budget",
    "DeadlineExceeded": "session",
    "Estimate": "dry_run",
    "NetworkError": "errors",
    "PER_PAGE": "crawler",
    "PRICES": "budget",
    "check_out": "crawler",
    "estimate": "dry_run",
    "estimate_view": "dry_run",
    "CROSSREF_API": "crossref",
    "CrossrefReport": "crossref",
    "DEFAULT_API": "openalex",
    "FetchError": "errors",
    "FetchPlan": "crawler",
    "FetchReport": "crawler",
    "OpenAlex": "openalex",
    "Polite": "session",
    "ResponseTooLarge": "session",
    "Seed": "seeds",
    "SeedError": "seeds",
    "crawl": "crawler",
    "dois_lacking": "crossref",
    "fetch_crossref": "crossref",
    "iter_works": "crawler",
    "read_seed_file": "seeds",
    "seed_path": "ids",
    "seeds_from_bibtex": "seeds",
    "seeds_from_ids": "seeds",
    "seeds_from_ris": "seeds",
    "seeds_from_zotero": "seeds",
    "sidecar_path": "crawler",
    "work_id": "ids",
}

__all__ = [
    "BATCH", "CROSSREF_API", "DEFAULT_API", "PER_PAGE", "PRICES", "BadAnswer", "Budget",
    "BudgetSpent", "CostCap", "CrossrefReport", "DeadlineExceeded", "Estimate", "FetchError",
    "FetchPlan", "FetchReport", "NetworkError", "OpenAlex", "Polite", "ResponseTooLarge",
    "Seed", "SeedError", "check_out", "crawl", "dois_lacking", "estimate", "estimate_view",
    "fetch_crossref",
    "iter_works", "read_seed_file", "seed_path", "seeds_from_bibtex", "seeds_from_ids",
    "seeds_from_ris", "seeds_from_zotero", "sidecar_path", "work_id",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
