"""A small OpenAlex snapshot written in its documented layout (developers.openalex.org,
"Snapshot data format" and "Sync", 2026), in either layout::

    ROOT/data/<layout>/manifest.json                        {"entities": [{"entity", "files"}]}
    ROOT/data/<layout>/works/manifest.json                  {"date", "format", "entity",
                                                             "record_count", "files": [...]}
    ROOT/data/<layout>/works/updated_date=D/part_NNNN.gz    gzip JSON lines (jsonl)
    ROOT/data/<layout>/works/updated_date=D/part_NNNN.parquet     Parquet, snappy (parquet)
    ROOT/data/<layout>/works/deleted_ids.csv                work_id,deleted_date

Each manifest entry is ``{"url": "s3://openalex/data/<layout>/works/updated_date=D/part_NNNN...",
"meta": {"content_length": bytes, "record_count": rows}}``. In Parquet, the
``abstract_inverted_index`` (an object of arbitrary words) is kept as its JSON text.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

PART_ROWS = 400_000  # the most records OpenAlex puts in one part


def write_snapshot(root: Path, partitions: dict[str, list[dict[str, Any]]], layout: str,
                   deleted: list[str] = (), part_rows: int = PART_ROWS,
                   date: str = "2026-09-01") -> Path:
    """Write ``partitions`` (updated date -> works) as the works of a snapshot at ``root`` in
    ``layout`` (``jsonl`` or ``parquet``), with its manifests and its deletion ledger
    (``deleted``: work ids); the works folder."""
    works = root / "data" / layout / "works"
    files = []
    for day, records in sorted(partitions.items()):
        folder = works / f"updated_date={day}"
        folder.mkdir(parents=True, exist_ok=True)
        for number, start in enumerate(range(0, len(records), part_rows)):
            chunk = records[start:start + part_rows]
            name = f"part_{number:04d}" + (".gz" if layout == "jsonl" else ".parquet")
            path = folder / name
            if layout == "jsonl":
                path.write_bytes(gzip.compress(
                    "".join(json.dumps(w) + "\n" for w in chunk).encode(), compresslevel=6))
            else:
                rows = [{**w, "abstract_inverted_index": json.dumps(w["abstract_inverted_index"])
                         if w.get("abstract_inverted_index") is not None else None}
                        for w in chunk]
                pq.write_table(pa.Table.from_pylist(rows), path, compression="snappy")
            files.append({"url": f"s3://openalex/data/{layout}/works/updated_date={day}/{name}",
                          "meta": {"content_length": path.stat().st_size,
                                   "record_count": len(chunk)}})
    works.mkdir(parents=True, exist_ok=True)
    manifest = {"date": date, "format": layout, "entity": "works",
                "record_count": sum(f["meta"]["record_count"] for f in files),
                "content_length": sum(f["meta"]["content_length"] for f in files),
                "files": files}
    (works / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (works.parent / "manifest.json").write_text(json.dumps(
        {"date": date, "format": layout, "entities": [{"entity": "works", "files": files}]}),
        encoding="utf-8")
    (works / "deleted_ids.csv").write_text(
        "work_id,deleted_date\n" + "".join(f"https://openalex.org/{w},2026-08-14\n"
                                           for w in deleted), encoding="utf-8")
    return works
