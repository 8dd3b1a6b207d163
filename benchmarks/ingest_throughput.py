"""Ingest throughput and peak memory on a generated OpenAlex works file, phase by phase.

Generates N OpenAlex Work lines (gzipped; abstracts as inverted indexes built from the real
S2ORC abstracts shipped in the sample, ~30 referenced works each, authorships, topics), then
measures, each in its own process, one after the other:

* ``floor``: read the file's lines (Python's ``gzip``) and parse each with ``orjson`` alone:
  the peer every ratio is against, run first and again last (the faster of the two counts, so
  a slow moment of the machine does not flatter the ratios);
* ``floor-isal``: the same with ISA-L's gzip (``isal.igzip``, what the readers decompress
  with), to show how much of a ratio is the decompressor;
* ``read``: the OpenAlex reader yielding corpus records (abstracts rebuilt, references);
* ``ingest-one-process`` (with ``--files``, asked for in ``--phases``): the same ingest with
  the files staged one after the other, for the paired comparison;
* ``ingest``: the whole ``openmsd ingest``, and within it (``IngestResult.phases``) ``stage``
  (reading and writing the staged Parquet part), ``identify`` (merge, language
  identification, the papers table), ``resolve references`` and ``write`` (the references,
  citations and contexts tables).

It prints seconds, works/s, the ratio of each to the floor's time, peak RSS (the process's
VmHWM) and the load average when each began; with ``--sizes`` at several sizes, to show memory
against input size. The record's headline is the whole ingest's ratio at ``--works``. DuckDB
works within :func:`openmsd.memory.memory_limit` (stated in the record). With ``--files N``
the works are split into N files of one folder, the input, as an OpenAlex snapshot comes:
the floor and the reader go through the files one after the other, and the ingest stages
them in parallel, one process a file (``--record`` names that record apart).

    python benchmarks/ingest_throughput.py --works 200000 --sizes 50000 1000000
    python benchmarks/ingest_throughput.py --works 200000 --files 2 --record ingest_parallel
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from record import write_record

from openmsd.memory import memory_limit

SAMPLE = Path(__file__).resolve().parents[1] / "openmsd" / "data" / "sample" / "s2orc"


def _abstracts() -> list[list[str]]:
    with gzip.open(SAMPLE / "metadata_sample.jsonl.gz", "rt") as handle:
        texts = [json.loads(line).get("abstract") for line in handle]
    return [t.split() for t in texts if t]


def generate(path: Path, works: int, seed: int = 0, first: int = 0,
             total: int | None = None) -> None:
    """Write ``works`` OpenAlex Work lines (numbered from ``first``, citing works among
    ``total``, by default ``works``) to a gzipped JSONL file."""
    rng = random.Random(seed + first)
    abstracts = _abstracts()
    total = total or works
    with gzip.open(path, "wb", compresslevel=1) as out:
        for n in range(first, first + works):
            words = rng.choice(abstracts)
            index: dict[str, list[int]] = {}
            for position, word in enumerate(words):
                index.setdefault(word, []).append(position)
            work = {
                "id": f"https://openalex.org/W{1000000 + n}",
                "doi": f"https://doi.org/10.5555/bench.{n}" if n % 3 else None,
                "title": " ".join(words[:12]),
                "display_name": " ".join(words[:12]),
                "publication_year": 1990 + n % 35,
                "language": "en",
                "ids": {"openalex": f"https://openalex.org/W{1000000 + n}",
                        "mag": 2000000000 + n},
                "primary_location": {"source": {"display_name": f"Journal {n % 500}"}},
                "authorships": [{"author": {"display_name": f"Author {rng.randrange(10**6)}"}}
                                for _ in range(rng.randint(1, 6))],
                "primary_topic": {"display_name": f"Topic {n % 300}"},
                "cited_by_count": rng.randrange(100),
                "abstract_inverted_index": index,
                "referenced_works": [f"https://openalex.org/W{1000000 + rng.randrange(total)}"
                                     for _ in range(rng.randint(10, 50))],
            }
            out.write(orjson.dumps(work) + b"\n")


def _peak_mib() -> float:
    """This process's peak resident memory (VmHWM: ru_maxrss would carry the parent's over
    exec), plus the peak of the largest of its child processes (the processes staging a
    folder's files, ru_maxrss of the children; several run at once)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return _own_peak_mib() + children


def _own_peak_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _parse_lines(handle: Any) -> int:
    records = 0
    for line in handle:
        orjson.loads(line)
        records += 1
    return records


def run_phase(phase: str, path: Path) -> dict[str, Any]:
    """Run one phase in this process; its seconds, works, peak RSS (MiB) and, for the whole
    ingest, the seconds of its own phases."""
    from isal import igzip

    if phase not in ("floor", "floor-isal"):  # imported before the clock starts
        from openmsd.ingest import get_reader, ingest
        from openmsd.report import Report

    files = sorted(path.glob("*.jsonl.gz")) if path.is_dir() else [path]
    records, phases = 0, {}
    start = time.perf_counter()
    for file in files if not phase.startswith("ingest") else []:
        if phase == "floor":
            with gzip.open(file, "rb") as handle:
                records += _parse_lines(handle)
        elif phase == "floor-isal":
            with igzip.open(file, "rb") as handle:
                records += _parse_lines(handle)
        elif phase == "read":
            for kind, _ in get_reader("openalex").read(file, Report()):
                records += kind == "paper"
    if phase in ("ingest", "ingest-one-process"):
        if phase == "ingest-one-process":  # a folder's files staged one after the other
            from openmsd.ingest import run

            run.PARALLEL_BYTES = sys.maxsize
        with tempfile.TemporaryDirectory() as tmp:
            result = ingest([path], Path(tmp) / "corpus")
            records, phases = result.build["counts"]["papers"], result.phases
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "works": records, "peak_mib": _peak_mib(), "phases": phases}


def measure(path: Path, phase: str) -> dict[str, Any]:
    result = subprocess.run([sys.executable, __file__, "--phase", phase, "--file", str(path)],
                            check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def _row(works: int, phase: str, seconds: float, floor: float | None, peak: float | None,
         load: float) -> dict[str, Any]:
    return {"works": works, "phase": phase, "seconds": round(seconds, 2),
            "works_per_s": round(works / seconds, 1) if seconds else None,
            "x_floor": round(seconds / floor, 2) if floor else None,
            "peak_mib": round(peak) if peak is not None else None, "load_1min": round(load, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--works", type=int, default=200_000)
    parser.add_argument("--sizes", type=int, nargs="*", default=[],
                        help="other sizes to run too, for time and memory against input size")
    parser.add_argument("--phases", nargs="*", default=["floor", "floor-isal", "read", "ingest"])
    parser.add_argument("--files", type=int, default=1,
                        help="split the works into this many files of one folder (the input); "
                             "an ingest stages a folder's files in parallel, one process each")
    parser.add_argument("--record", default="ingest_throughput",
                        help="the record's name (benchmarks/results/NAME.json)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(run_phase(args.phase, args.file)))
        return
    table: list[dict[str, Any]] = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for works in sorted({*args.sizes, args.works}):
            path = Path(tmp) / f"works-{works}.jsonl.gz"
            if args.files > 1:
                path = Path(tmp) / f"works-{works}"
                path.mkdir()
                bounds = [works * i // args.files for i in range(args.files + 1)]
                for i in range(args.files):
                    generate(path / f"part_{i:03d}.jsonl.gz", bounds[i + 1] - bounds[i],
                             first=bounds[i], total=works)
            else:
                generate(path, works)
            size = sum(f.stat().st_size for f in (path.iterdir() if path.is_dir() else [path]))
            size /= 2**20
            print(f"{works:,} works in {args.files} file(s), {size:.0f} MiB gzipped",
                  file=sys.stderr)
            phases = [*args.phases, "floor"] if "floor" in args.phases else args.phases
            rows: list[tuple[str, dict[str, Any], float]] = []
            for phase in phases:
                load = os.getloadavg()[0]
                rows.append((phase, measure(path, phase), load))
                print(f"  {phase:<10} {rows[-1][1]['seconds']:8.1f} s", file=sys.stderr)
            floors = [got["seconds"] for phase, got, _ in rows if phase == "floor"]
            floor = min(floors) if floors else None
            for n, (phase, got, load) in enumerate(rows):
                name = "floor (again)" if phase == "floor" and n else phase
                table.append(_row(works, name, got["seconds"], floor, got["peak_mib"], load))
                for within, seconds in got["phases"].items():
                    table.append(_row(works, f"  {within}", seconds, floor, None, load))
    print(f"{'works':>9} {'phase':<20} {'seconds':>8} {'works/s':>9} {'x floor':>8} "
          f"{'peak MiB':>9} {'load':>5}")
    for r in table:
        print(f"{r['works']:>9,} {r['phase']:<20} {r['seconds']:8.2f} "
              f"{r['works_per_s'] or 0:9,.0f} {r['x_floor'] or float('nan'):8.2f} "
              f"{'' if r['peak_mib'] is None else r['peak_mib']:>9} {r['load_1min']:5.2f}")
    at = {r["phase"]: r for r in table if r["works"] == args.works}
    whole, read = at.get("ingest"), at.get("read")
    headline = ""
    if whole and whole["x_floor"]:
        headline = (f"whole ingest {whole['x_floor']:.2f}× the orjson floor "
                    f"({whole['works_per_s']:,.0f} works/s)")
        headline += f"; reader {read['x_floor']:.2f}×" if read and read["x_floor"] else ""
        one = at.get("ingest-one-process")
        headline += (f"; {one['seconds'] / whole['seconds']:.2f}× faster than staging the files "
                     "in one process" if one else "")
    write_record(
        args.record,
        {"headline": headline,
         "headline_means": f"openmsd ingest of {args.works:,} generated OpenAlex works "
                           f"({args.files} file{'s' if args.files > 1 else ''}), whole "
                           "command (stage, merge, language identification, references, "
                           "tables), its time over the floor's",
         "peer": "floor: reading the lines (Python's gzip) and parsing each with orjson alone; "
                 "floor-isal: the same with ISA-L's gzip, the readers' decompressor",
         "rows": [{**r, "phase": r["phase"].strip(), "within": "ingest"}
                  if r["phase"].startswith(" ") else r for r in table]},
        data={"works": args.works, "sizes": sorted({*args.sizes, args.works}),
              "files": args.files,
              "source": "generated OpenAlex works lines (real S2ORC abstracts)",
              "duckdb_memory_limit": memory_limit()},
        load_before=load_before, synthetic=True,
        notes="Generated works (real abstracts, generated ids, authors and references; every "
              "work declares its language, so identification only merges); each phase in its "
              "own process, one after the other, wall time; the floor runs first and last and "
              "every ratio is against the faster of the two; rows within the ingest are its "
              "IngestResult.phases. The staged Parquet is encoded on a second thread and "
              "DuckDB runs its statements on both cores.")


if __name__ == "__main__":
    main()
