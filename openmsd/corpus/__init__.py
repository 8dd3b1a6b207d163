"""The corpus: schema, the corpus directory (Parquet + DuckDB view), staging, merge, build,
manifest, language identification, reference resolution and statistics.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.corpus.build import BATCH, LINKED, build_corpus, build_id, derive
    from openmsd.corpus.ingest_run import IngestResult, corpus_lock, digest, ingest, stage
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
    from openmsd.corpus.query_result import query_view
    from openmsd.corpus.schema import SCHEMA_VERSION, STAGED, TABLES, Record
    from openmsd.corpus.spark_ingest import ingest_on_spark, local_spark
    from openmsd.corpus.sql import SparkSql
    from openmsd.corpus.stats import build_summary, corpus_stats, stats_view, table1_rows
    from openmsd.corpus.store import MANIFEST, NEXT, STAGED_DIR, Corpus, CorpusError
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
    "IngestResult": "ingest_run",
    "LENGTHS": "summaries",
    "LINKED": "build",
    "LanguageIdentifier": "langid",
    "MANIFEST": "store",
    "NEXT": "store",
    "Record": "schema",
    "SCHEMA_VERSION": "schema",
    "STAGED": "schema",
    "STAGED_DIR": "store",
    "SparkSql": "sql",
    "TABLES": "schema",
    "UND": "langid",
    "build_corpus": "build",
    "build_id": "build",
    "build_summary": "stats",
    "corpus_lock": "ingest_run",
    "corpus_stats": "stats",
    "current_summaries": "summaries",
    "derive": "build",
    "digest": "ingest_run",
    "enriched_name": "summaries",
    "identify": "langid",
    "identify_sure": "langid",
    "ingest": "ingest_run",
    "ingest_on_spark": "spark_ingest",
    "local_spark": "spark_ingest",
    "paper_text": "langid",
    "parse_enriched": "summaries",
    "parse_variant": "summaries",
    "read_papers": "summaries",
    "stage": "ingest_run",
    "query_view": "query_result",
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
    "LENGTHS",
    "LINKED",
    "MANIFEST",
    "NEXT",
    "SCHEMA_VERSION",
    "STAGED",
    "STAGED_DIR",
    "TABLES",
    "UND",
    "Combined",
    "Corpus",
    "CorpusError",
    "FastText",
    "IngestResult",
    "LanguageIdentifier",
    "Record",
    "SparkSql",
    "build_corpus",
    "build_id",
    "build_summary",
    "corpus_lock",
    "corpus_stats",
    "current_summaries",
    "derive",
    "digest",
    "enriched_name",
    "identify",
    "identify_sure",
    "ingest",
    "ingest_on_spark",
    "local_spark",
    "paper_text",
    "parse_enriched",
    "parse_variant",
    "query_view",
    "read_papers",
    "stage",
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
