"""Readers: one per source format (and manuscripts), each yielding records with a report of what
it skipped and why; format detection; the ingest run that stages what they read and builds the
corpus from it, in one process or on Spark.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.ingest.formats import FORMATS, detect, get_reader
    from openmsd.ingest.inputs import input_records, list_files
    from openmsd.ingest.jats import body_paragraphs, flatten
    from openmsd.ingest.manuscript import ManuscriptError, paragraphs_of, read_manuscript
    from openmsd.ingest.markers import MARKER, citation_markers, without_markers
    from openmsd.ingest.queries import (
        TEXT_FIELDS,
        RetrievalEvalError,
        read_papers,
        read_qrels,
        read_records,
        read_task,
    )
    from openmsd.ingest.reader import as_str, json_lines, text_stream
    from openmsd.ingest.run import IngestResult, digest, ingest, stage
    from openmsd.ingest.spark import ingest_on_spark, input_files

_WHERE: dict[str, str] = {
    "FORMATS": "formats",
    "IngestResult": "run",
    "MARKER": "markers",
    "ManuscriptError": "manuscript",
    "RetrievalEvalError": "queries",
    "TEXT_FIELDS": "queries",
    "as_str": "reader",
    "body_paragraphs": "jats",
    "citation_markers": "markers",
    "detect": "formats",
    "digest": "run",
    "flatten": "jats",
    "get_reader": "formats",
    "ingest": "run",
    "ingest_on_spark": "spark",
    "input_files": "spark",
    "input_records": "inputs",
    "json_lines": "reader",
    "list_files": "inputs",
    "paragraphs_of": "manuscript",
    "read_manuscript": "manuscript",
    "read_papers": "queries",
    "read_qrels": "queries",
    "read_records": "queries",
    "read_task": "queries",
    "stage": "run",
    "text_stream": "reader",
    "without_markers": "markers",
}

__all__ = [
    "FORMATS", "MARKER", "TEXT_FIELDS", "IngestResult", "ManuscriptError", "RetrievalEvalError",
    "as_str", "body_paragraphs", "citation_markers", "detect", "digest", "flatten", "get_reader",
    "ingest", "ingest_on_spark", "input_files", "input_records", "json_lines", "list_files",
    "paragraphs_of", "read_manuscript", "read_papers", "read_qrels", "read_records", "read_task",
    "stage", "text_stream", "without_markers",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
