"""The registry of source formats and detection by content.

Formats are tried in the order of :data:`FORMATS` (most specific first) on a file's first bytes;
the generic JSONL format is the last resort for JSON lines.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from openmsd.ingest.reader import Reader, head
from openmsd.report import IngestError

FORMATS = ["snapshot", "openalex", "crossref", "unpaywall", "coci", "ocmeta", "jats", "parscit",
           "unarxive", "s2orc", "jsonl"]


def get_reader(name: str) -> Reader:
    """The reader of a format by name; :class:`IngestError` listing the known ones otherwise."""
    if name not in FORMATS:
        raise IngestError(f"unknown format {name!r}: expected one of {', '.join(FORMATS)}")
    return importlib.import_module(f"openmsd.ingest.{name}").READER


def detect(path: Path) -> Reader | None:
    """The first reader whose sniff test accepts the file's content, or None."""
    start = head(path)
    if not start.strip():
        return None
    for name in FORMATS:
        reader = get_reader(name)
        if reader.sniff(start, path):
            return reader
    return None
