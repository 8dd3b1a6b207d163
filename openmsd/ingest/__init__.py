"""Readers: one per source format (and manuscripts), each yielding records with a report of what
it skipped and why; format detection.
"""

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

__all__ = [
    "FORMATS",
    "MARKER",
    "TEXT_FIELDS",
    "IngestResult",
    "ManuscriptError",
    "RetrievalEvalError",
    "as_str",
    "body_paragraphs",
    "citation_markers",
    "detect",
    "digest",
    "flatten",
    "get_reader",
    "ingest",
    "ingest_on_spark",
    "input_files",
    "input_records",
    "json_lines",
    "list_files",
    "paragraphs_of",
    "read_manuscript",
    "read_papers",
    "read_qrels",
    "read_records",
    "read_task",
    "stage",
    "text_stream",
    "without_markers",
]
