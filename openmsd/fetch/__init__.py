"""Fetching a researcher's own corpus from the open APIs: OpenAlex works around seed papers
(pyalex), Crossref works for DOIs (habanero), seeds from ids, BibTeX, RIS or Zotero."""

from openmsd.fetch.crawl import BATCH, FetchPlan, FetchReport, crawl, iter_works, sidecar_path
from openmsd.fetch.crossref import CROSSREF_API, CrossrefReport, dois_lacking, fetch_crossref
from openmsd.fetch.openalex import DEFAULT_API, OpenAlex, seed_path, work_id
from openmsd.fetch.seeds import (
    Seed,
    SeedError,
    read_seed_file,
    seeds_from_bibtex,
    seeds_from_ids,
    seeds_from_ris,
    seeds_from_zotero,
)
from openmsd.fetch.session import BadAnswer, FetchError, Polite, ResponseTooLarge

__all__ = ["BATCH", "CROSSREF_API", "DEFAULT_API", "BadAnswer", "CrossrefReport", "FetchError",
           "FetchPlan", "FetchReport", "OpenAlex", "Polite", "ResponseTooLarge", "Seed",
           "SeedError", "crawl", "dois_lacking", "fetch_crossref", "iter_works",
           "read_seed_file", "seed_path", "seeds_from_bibtex", "seeds_from_ids",
           "seeds_from_ris", "seeds_from_zotero", "sidecar_path", "work_id"]
