"""An input (a file or a folder) as records: its files, each read by its reader (named, or
detected from the content), and every record within the field limits.

What the records become (staged parts, the corpus) is :mod:`openmsd.ingest.run`'s
business; this module only reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from openmsd.corpus import Record, reference_rows
from openmsd.ingest import formats
from openmsd.ingest.reader import Reader
from openmsd.ingest.snapshot import find_snapshot, snapshot_parts
from openmsd.report import IngestError, Report

__all__ = ["FIELD_CHARS", "OTHER_FIELD_CHARS", "input_records", "list_files", "within_limits"]

_SKIP_NAMES = {"README", "README.md", "LICENSE", "LICENSE.txt", "NOTICE"}
FIELD_CHARS = {"abstract": 200_000, "full_text": 8_000_000, "text": 100_000, "raw": 100_000}
"""The longest text per field (characters); every other text field: :data:`OTHER_FIELD_CHARS`.
A record with a longer field is reported (file, line, field, limit) and skipped."""
OTHER_FIELD_CHARS = 10_000
_SHORTEST_LIMIT = min(OTHER_FIELD_CHARS, *FIELD_CHARS.values())


def list_files(path: Path, since: str | None = None) -> list[Path]:
    """The files of an input: itself, the parts an OpenAlex snapshot folder's manifest names
    (updated on or after ``since`` only: :mod:`openmsd.ingest.snapshot`), or a folder's files
    (recursively, sorted, no hidden ones)."""
    if path.is_file():
        if since:
            raise IngestError(f"{path}: --since {since} reads the newer partitions of an "
                              "OpenAlex snapshot folder; this is a file")
        return [path]
    if not path.is_dir():
        raise IngestError(f"{path}: no such file or directory")
    if (snapshot := find_snapshot(path)) is not None:
        return snapshot_parts(snapshot, since)
    if since:
        raise IngestError(f"{path}: --since {since} reads the newer partitions of an OpenAlex "
                          "snapshot folder (data/jsonl or data/parquet with a manifest.json); "
                          "this folder is not one")
    return sorted(p for p in path.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


def input_records(files: list[Path], reader: Reader | None, report: Report) -> Iterator[Record]:
    """The records of an input's ``files``, each read by ``reader`` (default: the one
    :func:`openmsd.ingest.formats.detect` finds), every record within :data:`FIELD_CHARS`;
    what cannot be read goes to ``report``."""
    for file in files:
        chosen = reader or formats.detect(file)
        if chosen is None:
            if file.name not in _SKIP_NAMES:
                report.problem(file, "file", "format not recognised: no reader accepts its "
                               "content (name one with --format)")
            else:
                report.count("files.documentation")
            continue
        report.count(f"files.{chosen.name}")
        try:
            for record in chosen.read(file, report):
                if record[0] == "references":
                    yield from _block_within_limits(file, record[1], report)
                elif within_limits(file, record, report):
                    yield record
        except IngestError:
            raise
        except Exception as error:  # a reader bug must not lose the rest of the input
            report.problem(file, "file", f"reader {chosen.name} failed: "
                           f"{type(error).__name__}: {error}")


def within_limits(file: Path, record: Record, report: Report) -> bool:
    """Whether every text field of ``record`` is within its limit; else report it, False."""
    kind, fields = record
    # Most values are short: one length test on each before any limit's look-up (the hot path).
    for value in fields.values():
        if isinstance(value, str) and len(value) > _SHORTEST_LIMIT:
            break
    else:
        return True
    for name, value in fields.items():
        if not isinstance(value, str):
            continue
        limit = FIELD_CHARS.get(name, OTHER_FIELD_CHARS)
        if len(value) > limit:
            where = str(fields.get("loc", "")).rpartition(":")[2]
            report.problem(file, f"line {where}" if where.isdigit() else where or "file",
                           f"field {name} too long: {len(value):,} characters, the limit is "
                           f"{limit:,}; {kind} skipped")
            return False
    return True


def _block_within_limits(file: Path, block: dict[str, Any], report: Report) -> Iterator[Record]:
    """A ``references`` block as it is when every text in it is within the shortest limit; else
    its references one by one, those within their limits (the others reported)."""
    # A block whose whole JSON is shorter than the shortest limit holds no text beyond it.
    if len(orjson.dumps(block)) <= _SHORTEST_LIMIT or _longest(block) <= _SHORTEST_LIMIT:
        yield "references", block
        return
    for row in reference_rows(block):
        if within_limits(file, ("reference", row), report):
            yield "reference", row


def _longest(value: Any) -> int:
    """The length of the longest string in ``value`` (a string, a list or a dict of them)."""
    if type(value) is str:
        return len(value)
    if type(value) is dict:
        value = list(value.values())
    if type(value) is list:
        return max(map(_longest, value), default=0)
    return 0
