"""Ingest throughput and peak memory on a generated OpenAlex works file.

Generates N OpenAlex Work lines (gzipped; abstracts as inverted indexes built from the real
S2ORC abstracts shipped in the sample, ~30 referenced works each, authorships, topics), then
measures, each phase in its own process:

* ``floor``: read the file's lines and parse each with ``orjson`` alone (the peer);
* ``reader``: the OpenAlex reader yielding corpus records (abstracts rebuilt, references);
* ``stage``: the reader plus writing the staged Parquet part (what ``ingest`` reads per input);
* ``ingest``: the whole ``openmsd ingest`` (stage, merge, CLD3 language identification,
  reference resolution, corpus tables).

It prints records/s, the ratio of each phase's time to the floor's, and peak RSS; with
``--sizes`` at several sizes, to show memory staying flat as the input grows.

    python benchmarks/ingest_throughput.py --works 200000 --sizes 50000
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

import orjson
from record import write_record

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


def run_phase(phase: str, path: Path) -> dict[str, float]:
    """Run one phase in this process; return its seconds, record count and peak RSS (MiB)."""
    start = time.perf_counter()
    records = 0
    if phase == "floor":
        with gzip.open(path, "rb") as handle:
            for line in handle:
                orjson.loads(line)
                records += 1
    elif phase == "reader":
        from openmsd.ingest import get_reader
        from openmsd.report import Report

        for kind, _ in get_reader("openalex").read(path, Report()):
            records += kind == "paper"
    elif phase == "stage":
        from openmsd.ingest import stage
        from openmsd.report import Report

        with tempfile.TemporaryDirectory() as tmp:
            records = stage(path, Path(tmp) / "part", "openalex", Report())["papers"]
    elif phase == "ingest":
        from openmsd.ingest import ingest

        with tempfile.TemporaryDirectory() as tmp:
            records = ingest([path], Path(tmp) / "corpus").build["counts"]["papers"]
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "works": records, "peak_mib": peak}


def measure(path: Path, phase: str) -> dict[str, float]:
    result = subprocess.run([sys.executable, __file__, "--phase", phase, "--file", str(path)],
                            check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--works", type=int, default=200_000)
    parser.add_argument("--sizes", type=int, nargs="*", default=[],
                        help="smaller sizes to run too, for memory against input size")
    parser.add_argument("--phases", nargs="*", default=["floor", "reader", "stage", "ingest"])
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(run_phase(args.phase, args.file)))
        return
    rows = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for works in sorted({*args.sizes, args.works}):
            path = Path(tmp) / f"works-{works}.jsonl.gz"
            generate(path, works)
            size = path.stat().st_size / 2**20
            print(f"{works:,} works, {size:.0f} MiB gzipped", file=sys.stderr)
            floor = None
            for phase in args.phases:
                got = measure(path, phase)
                floor = got["seconds"] if phase == "floor" else floor
                ratio = got["seconds"] / floor if floor else float("nan")
                rows.append((works, phase, got["seconds"], got["works"] / got["seconds"],
                             ratio, got["peak_mib"]))
                print(f"  {phase:<7} {got['seconds']:8.1f} s", file=sys.stderr)
    print(f"{'works':>9} {'phase':<7} {'seconds':>8} {'works/s':>9} {'x floor':>8} {'peak MiB':>9}")
    for works, phase, seconds, rate, ratio, peak in rows:
        print(f"{works:>9,} {phase:<7} {seconds:8.1f} {rate:9,.0f} {ratio:8.2f} {peak:9.0f}")
    table = [{"works": w, "phase": ph, "seconds": round(sec, 2), "works_per_s": round(rate, 1),
              "x_floor": round(ratio, 2), "peak_mib": round(peak)}
             for w, ph, sec, rate, ratio, peak in rows]
    whole = next((r for r in table if r["works"] == args.works and r["phase"] == "ingest"), None)
    write_record(
        "ingest_throughput",
        {"headline": f"{whole['works_per_s']:,.0f} works/s" if whole else "",
         "headline_means": f"openmsd ingest of {args.works:,} generated OpenAlex works, whole "
                           "command (stage, merge, language identification, references)",
         "peer": "floor: reading the lines and parsing each with orjson alone", "rows": table},
        data={"works": args.works, "sizes": sorted({*args.sizes, args.works}),
              "source": "generated OpenAlex works lines (real S2ORC abstracts)"},
        load_before=load_before, synthetic=True,
        notes="Generated works (real abstracts, generated ids, authors and references); each "
              "phase in its own process, one after the other.")


if __name__ == "__main__":
    main()
