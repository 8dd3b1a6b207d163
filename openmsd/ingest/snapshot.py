"""The OpenAlex snapshot as an input: the works of a downloaded snapshot folder, in either of its
two layouts, as OpenAlex documents them (developers.openalex.org, "Snapshot data format" and
"Sync", 2026)::

    SNAPSHOT/data/jsonl/manifest.json                      every entity, this layout
    SNAPSHOT/data/jsonl/works/manifest.json                {"files": [{"url", "meta"}]}
    SNAPSHOT/data/jsonl/works/updated_date=YYYY-MM-DD/part_NNNN.gz        gzip JSON lines
    SNAPSHOT/data/jsonl/works/deleted_ids.csv              work_id,deleted_date (cumulative)
    SNAPSHOT/data/parquet/...                              the same, part_NNNN.parquet

A record sits in the partition of the day it last changed; a part holds up to 400,000 records;
the manifest is written last (a layout without one is incomplete). The folder given may be the
snapshot, its ``data/``, a layout folder or its ``works/`` folder; with both layouts present,
Parquet is read (columns as the API's fields, no JSON to parse).

:func:`find_snapshot` recognises a snapshot folder; :func:`snapshot_parts` lists the parts its
manifest names (only those updated on or after ``since``), refusing in one line a bad
manifest, a part of another entity or a part missing on disk; :data:`READER` reads a part
(JSON lines or Parquet) as the OpenAlex reader reads a works file, leaving out the works its
``deleted_ids.csv`` lists.
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import orjson

from openmsd.corpus import Record
from openmsd.ingest import openalex
from openmsd.ingest.reader import Reader, json_lines, open_binary
from openmsd.report import IngestError, Report

__all__ = ["LAYOUTS", "READER", "Snapshot", "deleted_works", "find_snapshot", "snapshot_parts"]

FORMAT = "snapshot"
LAYOUTS = ("parquet", "jsonl")  # the order one is chosen in when both are there
SUFFIX = {"parquet": ".parquet", "jsonl": ".gz"}
PARTITION = re.compile(r"^updated_date=(\d{4}-\d{2}-\d{2})$")
_URL_PART = re.compile(r"/(?P<entity>[a-z_-]+)/updated_date=(?P<date>\d{4}-\d{2}-\d{2})/"
                       r"(?P<name>part_\d+\.[a-z.]+)$")
ROWS = 4096  # Parquet rows read at a time
# The fields the OpenAlex reader reads: the only Parquet columns read (a work has ~50 more:
# locations, counts_by_year, related_works, mesh, grants...)
COLUMNS = ("id", "doi", "ids", "title", "display_name", "abstract_inverted_index", "language",
           "publication_year", "primary_location", "host_venue", "authorships", "keywords",
           "primary_topic", "topics", "concepts", "type", "is_xpac", "referenced_works")


@dataclass(frozen=True)
class Snapshot:
    """A snapshot's works folder (``data/<layout>/works``) and its layout."""

    works: Path
    layout: str

    @property
    def manifests(self) -> list[Path]:
        """Where its manifest may be: the works one, else the layout's combined one."""
        return [self.works / "manifest.json", self.works.parent / "manifest.json"]


def find_snapshot(path: Path) -> Snapshot | None:
    """The snapshot at ``path`` (the snapshot folder, its ``data/``, a layout folder or a
    ``works/`` folder of one), or None when ``path`` is not one."""
    if not path.is_dir():
        return None
    if path.name == "works" and path.parent.name in LAYOUTS:
        candidates = [path]
    elif path.name in LAYOUTS:
        candidates = [path / "works"]
    else:
        candidates = [base / layout / "works" for base in (path / "data", path)
                      for layout in LAYOUTS]
    for works in candidates:
        if works.is_dir() and ((works / "manifest.json").exists()
                               or (works.parent / "manifest.json").exists()
                               or any(PARTITION.match(p.name) for p in works.iterdir())):
            return Snapshot(works, works.parent.name)
    return None


def _manifest_files(snapshot: Snapshot) -> tuple[Path, list[Any]]:
    """The manifest read and its list of works files (entries ``{"url", "meta"}``)."""
    found = next((m for m in snapshot.manifests if m.is_file()), None)
    if found is None:
        raise IngestError(f"{snapshot.works}: no manifest.json (OpenAlex writes it last: a "
                          "snapshot without one is incomplete; download it again)")
    try:
        data = orjson.loads(found.read_bytes())
    except (orjson.JSONDecodeError, OSError) as error:
        raise IngestError(f"{found}: not a readable manifest ({error})") from None
    if not isinstance(data, dict):
        raise IngestError(f"{found}: expected a JSON object with \"files\", got "
                          f"{type(data).__name__}")
    if isinstance(data.get("entities"), list):  # the combined manifest of a layout
        works = [e for e in data["entities"] if isinstance(e, dict)
                 and e.get("entity") == "works"]
        if not works:
            raise IngestError(f"{found}: no \"works\" entity among its entities")
        data = works[0]
    elif data.get("entity") not in (None, "works"):
        raise IngestError(f"{found}: the manifest of {data.get('entity')!r}, not of works")
    files = data.get("files", data.get("entries"))
    if not isinstance(files, list):
        raise IngestError(f"{found}: expected \"files\": [{{\"url\": ..., \"meta\": "
                          "{\"record_count\": N}}, ...]")
    return found, files


def snapshot_parts(snapshot: Snapshot, since: str | None = None) -> list[Path]:
    """The part files the manifest of ``snapshot`` names, in partition order, those updated on
    or after ``since`` (YYYY-MM-DD) only; :class:`IngestError` (one line) for a bad manifest, a
    part of another entity or of another layout, a part missing on disk, or a bad deletion
    ledger."""
    manifest, files = _manifest_files(snapshot)
    parts: list[tuple[str, Path]] = []
    for number, entry in enumerate(files):
        url = entry.get("url") if isinstance(entry, dict) else None
        meta = entry.get("meta", {}) if isinstance(entry, dict) else None
        if not isinstance(url, str) or not isinstance(meta, dict):
            raise IngestError(f"{manifest}: files[{number}]: expected {{\"url\": ..., \"meta\": "
                              f"{{\"record_count\": N}}}}, got {str(entry)[:80]}")
        match = _URL_PART.search(url)
        if match is None:
            raise IngestError(f"{manifest}: files[{number}]: {url!r} is not a part of a "
                              "partition (…/works/updated_date=YYYY-MM-DD/part_NNNN)")
        if match["entity"] != "works":
            raise IngestError(f"{manifest}: files[{number}]: {url} is a partition of "
                              f"{match['entity']}, not of works")
        if not match["name"].endswith(SUFFIX[snapshot.layout]):
            raise IngestError(f"{manifest}: files[{number}]: {match['name']} is no part of the "
                              f"{snapshot.layout} layout (expected *{SUFFIX[snapshot.layout]})")
        if since is None or match["date"] >= since:
            parts.append((match["date"], snapshot.works / f"updated_date={match['date']}"
                          / match["name"]))
    missing = [path for _, path in parts if not path.is_file()]
    if missing:
        first = missing[0].relative_to(snapshot.works)
        raise IngestError(f"{snapshot.works}: {len(missing):,} of the {len(parts):,} parts "
                          f"{manifest.name} lists{f' since {since}' if since else ''} are "
                          f"missing, the first {first}; download them again (aws s3 sync "
                          f"s3://openalex/data/{snapshot.layout}/works {snapshot.works} "
                          "--no-sign-request --delete)")
    deleted_works(snapshot.works)  # a bad ledger is refused before anything is read
    return [path for _, path in sorted(parts, key=lambda item: (item[0], item[1].name))]


def deleted_works(works: Path) -> frozenset[str]:
    """The work ids (``W...``) the snapshot's ``deleted_ids.csv`` (or ``.csv.gz``) lists; an
    empty set without one; :class:`IngestError` (one line naming the line) for a ledger that
    is not ``work_id,deleted_date`` rows."""
    path = next((works / n for n in ("deleted_ids.csv", "deleted_ids.csv.gz")
                 if (works / n).is_file()), None)
    if path is None:
        return frozenset()
    return _read_ledger(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _read_ledger(path: Path, _mtime: int) -> frozenset[str]:
    with open_binary(path) as handle:
        rows = csv.reader(io.TextIOWrapper(handle, encoding="utf-8", errors="replace"))
        header = next(rows, None)
        if header is None or [h.strip() for h in header[:2]] != ["work_id", "deleted_date"]:
            raise IngestError(f"{path}: line 1: expected the header work_id,deleted_date, got "
                              f"{','.join(header or [])[:80]!r}")
        ids = set()
        for number, row in enumerate(rows, start=2):
            if not row or not row[0].strip():
                continue
            short = row[0].strip().rsplit("/", 1)[-1].upper()
            if not (short[:1] == "W" and short[1:].isdigit()):
                raise IngestError(f"{path}: line {number}: {row[0][:80]!r} is not an OpenAlex "
                                  "work id")
            ids.add(short)
    return frozenset(ids)


def _snapshot_part(path: Path) -> bool:
    return PARTITION.match(path.parent.name) is not None and path.parent.parent.name == "works"


def sniff(head: bytes, path: Path) -> bool:
    """A part of a snapshot's works: under ``works/updated_date=...``, Parquet or OpenAlex
    JSON lines."""
    return _snapshot_part(path) and (head.startswith(b"PAR1") or openalex.sniff(head, path))


def _parquet_rows(path: Path, report: Report) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number from 1, work)`` of a Parquet part, its :data:`COLUMNS` only, each row
    turned into the API's JSON by DuckDB and parsed once (an ``abstract_inverted_index`` kept
    as JSON text is embedded as the object it is)."""
    con = duckdb.connect()
    try:
        con.execute("SET threads = 1")
        source = f"read_parquet('{_quoted(path)}')"
        types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE "
                                 f"SELECT * FROM {source})").fetchall())
        picked = [_column(name, types[name]) for name in COLUMNS if name in types]
        rows = con.execute(f"SELECT to_json(t)::VARCHAR FROM (SELECT {', '.join(picked)} "
                           f"FROM {source}) t")
        number = 0
        while batch := rows.fetchmany(ROWS):
            for (text,) in batch:
                number += 1
                yield number, orjson.loads(text)
    except duckdb.Error as error:
        report.problem(path, "file", f"unreadable Parquet: {str(error).splitlines()[0]}")
    finally:
        con.close()


def _column(name: str, kind: str) -> str:
    """The SELECT item of column ``name`` of DuckDB type ``kind``: an abstract index kept as
    JSON text is read as JSON (an object in the row's JSON), every other column as it is."""
    if name == "abstract_inverted_index" and kind == "VARCHAR":
        return f"try_cast({name} AS JSON) AS {name}"
    return f'"{name}"'


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def read(path: Path, report: Report) -> Iterator[Record]:
    """The works of one part (as :func:`openmsd.ingest.openalex.read`), without those the
    snapshot's deletion ledger lists."""
    deleted = deleted_works(path.parent.parent)
    rows = _parquet_rows(path, report) if path.suffix == ".parquet" else json_lines(path, report)
    for number, work in rows:
        wid = work.get("id")
        if deleted and isinstance(wid, str) and wid.rsplit("/", 1)[-1].upper() in deleted:
            report.count("snapshot.deleted_works_left_out")
            continue
        yield from openalex.work_records(work, path, number, report)


READER = Reader(FORMAT, sniff, read,
                "OpenAlex snapshot works parts (data/jsonl or data/parquet, updated_date "
                "partitions, deleted_ids.csv applied)")
