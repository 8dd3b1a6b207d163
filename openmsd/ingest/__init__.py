"""Readers: one per source format (and manuscripts), each yielding records with a report of what
it skipped and why; format detection.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openmsd.ingest.formats import FORMATS, detect, get_reader
    from openmsd.ingest.jats import body_paragraphs, flatten, local_name
    from openmsd.ingest.pipeline import ingest, stage
    from openmsd.ingest.reader import as_str, json_lines, text_stream
    from openmsd.ingest.report import IngestError, Report
    from openmsd.ingest.spark import local_spark, spark_ingest

_WHERE: dict[str, str] = {
    "FORMATS": "formats",
    "IngestError": "report",
    "Report": "report",
    "as_str": "reader",
    "body_paragraphs": "jats",
    "detect": "formats",
    "flatten": "jats",
    "get_reader": "formats",
    "ingest": "pipeline",
    "json_lines": "reader",
    "local_name": "jats",
    "local_spark": "spark",
    "spark_ingest": "spark",
    "stage": "pipeline",
    "text_stream": "reader",
}

__all__ = [
    "FORMATS", "IngestError", "Report", "as_str", "body_paragraphs", "detect", "flatten",
    "get_reader", "ingest", "json_lines", "local_name", "local_spark", "spark_ingest", "stage",
    "text_stream",
]


def __getattr__(name: str) -> Any:
    """Import an exported name from its submodule on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
