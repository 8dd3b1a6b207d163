"""The corpus: schema, the corpus directory (Parquet + DuckDB view), staging, merge, build,
manifest, language identification, reference resolution and statistics.

The face is lazy while it still holds the ingest run (``ingest_run``, ``spark_ingest``), which
imports ``openmsd.ingest``, whose readers import the schema from here: an eager face would
import itself half-way. Importing the package loads no submodule; a name loads its own.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

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

__getattr__, __dir__ = lazy_face(__name__)
