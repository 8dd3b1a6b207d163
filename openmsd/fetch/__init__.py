"""Fetching a researcher's own corpus from the open APIs: OpenAlex works around seed papers
(pyalex), Crossref works for DOIs (habanero), seeds from ids, BibTeX, RIS or Zotero.

The API clients are the ``fetch`` extra: names are imported on first use, so seed files
(:func:`read_seed_file`) work without it.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "BATCH": "crawler", "FetchPlan": "crawler", "FetchReport": "crawler", "crawl": "crawler",
    "iter_works": "crawler", "sidecar_path": "crawler",
    "CROSSREF_API": "crossref", "CrossrefReport": "crossref", "dois_lacking": "crossref",
    "fetch_crossref": "crossref",
    "DEFAULT_API": "openalex", "OpenAlex": "openalex",
    "seed_path": "ids", "work_id": "ids",
    "Seed": "seeds", "SeedError": "seeds", "read_seed_file": "seeds",
    "seeds_from_bibtex": "seeds", "seeds_from_ids": "seeds", "seeds_from_ris": "seeds",
    "seeds_from_zotero": "seeds",
    "BadAnswer": "errors", "FetchError": "errors", "Polite": "session",
    "ResponseTooLarge": "session",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'openmsd.fetch' has no attribute {name!r}")
    return getattr(importlib.import_module(f"openmsd.fetch.{_WHERE[name]}"), name)
