"""The corpus: schema, the corpus directory and its layout (Parquet + DuckDB views, the
manifest), the build, language identification, reference resolution, the English summaries
table and statistics. The ingest run that fills it lives in :mod:`openmsd.ingest`.
"""

from openmsd.corpus.build import BATCH, LINKED, build_corpus, build_id, derive
from openmsd.corpus.langid import (
    CLD3,
    UND,
    Combined,
    FastText,
    LanguageIdentifier,
    identify,
    identify_sure,
    is_language_tag,
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
from openmsd.corpus.schema import SCHEMA_VERSION, STAGED, TABLES, Record, reference_rows
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
    "is_language_tag",
    "local_spark",
    "paper_text",
    "parse_enriched",
    "parse_variant",
    "query_view",
    "read_papers",
    "reference_rows",
    "stats_view",
    "summaries_dir",
    "summaries_for_model",
    "table1_rows",
    "variant_summaries",
    "write_summaries",
]
