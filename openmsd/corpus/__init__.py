"""The corpus: schema, the corpus directory (Parquet + DuckDB view), staging, merge, build,
manifest, language identification, reference resolution and statistics.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openmsd.corpus.build import BATCH, LINKED, build_corpus, build_id, derive
    from openmsd.corpus.langid import (
        CLD3,
        UND,
        Combined,
        FastText,
        LanguageIdentifier,
        identify,
        paper_text,
    )
    from openmsd.corpus.schema import SCHEMA_VERSION, STAGED, TABLES, Record
    from openmsd.corpus.sql import SparkSql
    from openmsd.corpus.stats import corpus_stats, table1_rows
    from openmsd.corpus.store import (
        MANIFEST,
        NEXT,
        STAGED_DIR,
        Corpus,
        CorpusError,
        ParquetSink,
        arrow_reader,
        arrow_table,
        atomic_path,
        building_dir,
        replace_dir,
        temp_dir_beside,
        write_json,
        write_jsonl,
    )

_WHERE: dict[str, str] = {
    "BATCH": "build",
    "CLD3": "langid",
    "Combined": "langid",
    "Corpus": "store",
    "CorpusError": "store",
    "FastText": "langid",
    "LINKED": "build",
    "LanguageIdentifier": "langid",
    "MANIFEST": "store",
    "NEXT": "store",
    "ParquetSink": "store",
    "Record": "schema",
    "SCHEMA_VERSION": "schema",
    "STAGED": "schema",
    "STAGED_DIR": "store",
    "SparkSql": "sql",
    "TABLES": "schema",
    "UND": "langid",
    "arrow_reader": "store",
    "arrow_table": "store",
    "atomic_path": "store",
    "build_corpus": "build",
    "build_id": "build",
    "building_dir": "store",
    "corpus_stats": "stats",
    "derive": "build",
    "identify": "langid",
    "paper_text": "langid",
    "replace_dir": "store",
    "table1_rows": "stats",
    "temp_dir_beside": "store",
    "write_json": "store",
    "write_jsonl": "store",
}

__all__ = [
    "BATCH", "CLD3", "LINKED", "MANIFEST", "NEXT", "SCHEMA_VERSION", "STAGED", "STAGED_DIR",
    "TABLES", "UND", "Combined", "Corpus", "CorpusError", "FastText", "LanguageIdentifier",
    "ParquetSink", "Record", "SparkSql", "arrow_reader", "arrow_table", "atomic_path",
    "build_corpus", "build_id", "building_dir", "corpus_stats", "derive", "identify", "paper_text",
    "replace_dir", "table1_rows", "temp_dir_beside", "write_json", "write_jsonl",
]


def __getattr__(name: str) -> Any:
    """Import an exported name from its submodule on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
