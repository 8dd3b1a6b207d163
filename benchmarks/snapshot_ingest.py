"""OpenAlex snapshot ingest, Parquet against gzip JSON lines, on the same generated works.

The works (``ingest_throughput.generate``: abstracts, 10-50 references each) are written as a
snapshot in both of OpenAlex's 2026 layouts (``data/jsonl`` and ``data/parquet``, updated_date
partitions, manifests, a deletion ledger; ``tests/ingest/snapshot_files.py``). Two figures per
layout: the snapshot reader alone (works/s through :mod:`openmsd.ingest.snapshot`, best of
``--repeats``), and a whole ``openmsd ingest`` of the snapshot into a new corpus (works/s, one
run each, language identification and the build included); with ``--spark``, the same ingest on
Spark local mode too::

    python benchmarks/snapshot_ingest.py --works 20000 --repeats 3 --record snapshot_ingest
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))

from ingest_throughput import generate  # noqa: E402
from record import write_record  # noqa: E402

from openmsd.ingest import snapshot  # noqa: E402
from openmsd.report import Report  # noqa: E402
from tests.ingest.snapshot_files import write_snapshot  # noqa: E402

LAYOUTS = ("jsonl", "parquet")


def _works(count: int, folder: Path) -> dict[str, list[dict]]:
    """``count`` generated works in four updated-date partitions, each with the fields of an
    OpenAlex work the reader does not read (locations, counts by year, related works,
    concepts, an open access record), sized as in the API's answers."""
    lines = folder / "works.jsonl.gz"
    generate(lines, count)
    with gzip.open(lines, "rt", encoding="utf-8") as handle:
        works = [json.loads(line) for line in handle]
    for n, work in enumerate(works):
        work.update(
            related_works=[f"https://openalex.org/W{2000000 + (n * 7 + i) % count}"
                           for i in range(10)],
            counts_by_year=[{"year": 2026 - i, "cited_by_count": (n + i) % 9}
                            for i in range(10)],
            locations=[{"is_oa": bool(i % 2), "landing_page_url": f"https://x.org/{n}/{i}",
                        "pdf_url": None, "license": "cc-by", "version": "publishedVersion",
                        "source": {"id": f"https://openalex.org/S{n % 500}",
                                   "display_name": f"Journal {n % 500}", "type": "journal"}}
                       for i in range(3)],
            concepts=[{"id": f"https://openalex.org/C{i}", "display_name": f"Concept {i}",
                       "level": i % 4, "score": 0.5} for i in range(n % 5, n % 5 + 8)],
            open_access={"is_oa": True, "oa_status": "gold",
                         "oa_url": f"https://x.org/{n}", "any_repository_has_fulltext": False},
            cited_by_api_url=f"https://api.openalex.org/works?filter=cites:W{1000000 + n}")
    days = ["2026-03-01", "2026-05-01", "2026-07-01", "2026-09-01"]
    return {day: works[i::len(days)] for i, day in enumerate(days)}


def _read_all(works_folder: Path) -> int:
    """Papers read from every part of a snapshot's works folder."""
    found = snapshot.find_snapshot(works_folder)
    papers = 0
    report = Report()
    for part in snapshot.snapshot_parts(found):
        papers += sum(kind == "paper" for kind, _ in snapshot.READER.read(part, report))
    return papers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--works", type=int, default=20_000)
    parser.add_argument("--part-rows", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="also ingest on Spark local[2]")
    parser.add_argument("--record", help="write benchmarks/results/NAME.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    numbers: dict[str, float | str] = {}
    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as tmp:
        root = Path(tmp)
        partitions = _works(args.works, root)
        sizes = {}
        for layout in LAYOUTS:
            works = write_snapshot(root / layout, partitions, layout, deleted=["W1000000"],
                                   part_rows=args.part_rows)
            sizes[layout] = sum(p.stat().st_size for p in works.rglob("part_*"))
            best = float("inf")
            for _ in range(args.repeats):
                began = time.perf_counter()
                papers = _read_all(works)
                best = min(best, time.perf_counter() - began)
            numbers[f"{layout}_read_works_per_s"] = round(papers / best, 1)
            from openmsd.ingest import ingest

            began = time.perf_counter()
            result = ingest([root / layout], root / f"corpus-{layout}")
            seconds = time.perf_counter() - began
            numbers[f"{layout}_ingest_works_per_s"] = round(
                result.build["counts"]["papers"] / seconds, 1)
            if args.spark:
                from openmsd.ingest import ingest_on_spark

                began = time.perf_counter()
                spark = ingest_on_spark([str(root / layout)], str(root / f"spark-{layout}"))
                seconds = time.perf_counter() - began
                numbers[f"{layout}_spark_ingest_works_per_s"] = round(
                    spark.build["counts"]["papers"] / seconds, 1)
            print(layout, {k: v for k, v in numbers.items() if k.startswith(layout)},
                  flush=True)
        numbers["parquet_over_jsonl_read"] = round(
            numbers["parquet_read_works_per_s"] / numbers["jsonl_read_works_per_s"], 2)
        numbers["parquet_over_jsonl_ingest"] = round(
            numbers["parquet_ingest_works_per_s"] / numbers["jsonl_ingest_works_per_s"], 2)
        numbers["headline"] = (f"{numbers['parquet_read_works_per_s']:,.0f} works/s from "
                               f"Parquet, {numbers['jsonl_read_works_per_s']:,.0f} from JSON "
                               f"lines (×{numbers['parquet_over_jsonl_read']:.2f})")
        shutil.rmtree(root / "corpus-jsonl", ignore_errors=True)
    print(json.dumps(numbers, indent=2))
    if args.record:
        path = write_record(args.record, numbers, load_before=load_before, synthetic=True,
                            data={"works": args.works, "part_rows": args.part_rows,
                                  "partitions": 4, "bytes": sizes,
                                  "repeats": args.repeats},
                            notes="peer: the same works as gzip JSON lines (data/jsonl); "
                                  "reader figures best of the repeats, ingest one run each")
        print(path)


if __name__ == "__main__":
    main()
