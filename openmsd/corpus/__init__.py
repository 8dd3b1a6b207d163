"""The corpus: schema, the corpus directory (Parquet + DuckDB view) and its layout, the lock
its writers hold, merge, build, manifest, language identification, reference resolution and
statistics. Reading inputs into it is :mod:`openmsd.ingest`'s.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.corpus.build import BATCH, LINKED, build_corpus, build_id, derive
    from openmsd.corpus.langid import (
        CLD3,
        UND,
        Combined,
        FastText,
        LanguageIdentifier,
        identify,
        identify_sure,
        paper_text,
    )
    from openmsd.corpus.layout import (
        INDEX_BUILDS,
        LOCK,
        MANIFEST,
        NEXT,
        PARTS,
        PROBLEMS,
        RELATIONS_MANIFEST,
        REPORT,
        STAGED_DIR,
        WATCH,
        Layout,
        corpus_lock,
    )
    from openmsd.corpus.query_result import query_view
    from openmsd.corpus.schema import SCHEMA_VERSION, STAGED, TABLES, Record
    from openmsd.corpus.sql import SparkSql, local_spark
    from openmsd.corpus.stats import build_summary, corpus_stats, stats_view, table1_rows
    from openmsd.corpus.store import Corpus, CorpusError
    from openmsd.corpus.summaries import (
        LENGTHS,
        current_summaries,
        enriched_name,
        parse_enriched,
        parse_variant,
        read_papers,
        summaries_dir,
        summaries_for_model,
        variant_summaries,
        write_summaries,
    )

_WHERE: dict[str, str] = {
    "BATCH": "build",
    "CLD3": "langid",
    "Combined": "langid",
    "Corpus": "store",
    "CorpusError": "store",
    "FastText": "langid",
    "INDEX_BUILDS": "layout",
    "LENGTHS": "summaries",
    "LINKED": "build",
    "LOCK": "layout",
    "LanguageIdentifier": "langid",
    "Layout": "layout",
    "MANIFEST": "layout",
    "NEXT": "layout",
    "PARTS": "layout",
    "PROBLEMS": "layout",
    "RELATIONS_MANIFEST": "layout",
    "REPORT": "layout",
    "Record": "schema",
    "SCHEMA_VERSION": "schema",
    "STAGED": "schema",
    "STAGED_DIR": "layout",
    "SparkSql": "sql",
    "TABLES": "schema",
    "UND": "langid",
    "WATCH": "layout",
    "build_corpus": "build",
    "build_id": "build",
    "build_summary": "stats",
    "corpus_lock": "layout",
    "corpus_stats": "stats",
    "current_summaries": "summaries",
    "derive": "build",
    "enriched_name": "summaries",
    "identify": "langid",
    "identify_sure": "langid",
    "local_spark": "sql",
    "paper_text": "langid",
    "parse_enriched": "summaries",
    "parse_variant": "summaries",
    "query_view": "query_result",
    "read_papers": "summaries",
    "stats_view": "stats",
    "summaries_dir": "summaries",
    "summaries_for_model": "summaries",
    "table1_rows": "stats",
    "variant_summaries": "summaries",
    "write_summaries": "summaries",
}

__all__ = [
    "BATCH",
    "CLD3",
    "INDEX_BUILDS",
    "LENGTHS",
    "LINKED",
    "LOCK",
    "MANIFEST",
    "NEXT",
    "PARTS",
    "PROBLEMS",
    "RELATIONS_MANIFEST",
    "REPORT",
    "SCHEMA_VERSION",
    "STAGED",
    "STAGED_DIR",
    "TABLES",
    "UND",
    "WATCH",
    "Combined",
    "Corpus",
    "CorpusError",
    "FastText",
    "LanguageIdentifier",
    "Layout",
    "Record",
    "SparkSql",
    "build_corpus",
    "build_id",
    "build_summary",
    "corpus_lock",
    "corpus_stats",
    "current_summaries",
    "derive",
    "enriched_name",
    "identify",
    "identify_sure",
    "local_spark",
    "paper_text",
    "parse_enriched",
    "parse_variant",
    "query_view",
    "read_papers",
    "stats_view",
    "summaries_dir",
    "summaries_for_model",
    "table1_rows",
    "variant_summaries",
    "write_summaries",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
