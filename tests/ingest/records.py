"""What the reader tests share: write test lines, group a reader's records by kind."""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from openmsd.corpus import reference_rows


def write_lines(path: Path, items: list[Any], compress: bool = False) -> Path:
    """Write one line per item (bytes as given, anything else as JSON), gzipped if asked."""
    data = b"\n".join(i if isinstance(i, bytes) else orjson.dumps(i) for i in items) + b"\n"
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def by_kind(records: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """A reader's records grouped by kind: ``{"paper": [...], "reference": [...], ...}``; the
    references of ``references`` blocks one by one."""
    out: dict[str, list[dict[str, Any]]] = {"paper": [], "reference": [], "context": []}
    for kind, record in records:
        if kind == "references":
            out["reference"].extend(reference_rows(record))
        else:
            out[kind].append(record)
    return out
