"""Ingest of a generated OpenAlex snapshot: Spark local[N] against the single-process path.

The snapshot is laid out as OpenAlex ships it, ``data/works/updated_date=YYYY-MM-DD/
part_NNN.gz``, works citing works anywhere in it. At each size both engines ingest it in a
child process of their own (the peer is the single-process ``openmsd ingest`` in the same run);
the figures are works/s, the ratio Spark / single process, and the peak resident memory of each
process tree (sampled every 0.2 s: the Spark driver JVM and its Python workers summed). The
corpora are compared row for row. Generate the snapshots first, niced, then time each size
alone (on a shared machine, under the timing lock); a size too long for one sitting runs one
engine per call (``--engines single``, then ``--engines spark``, then ``--engines`` to compare)::

    nice -n 19 python benchmarks/ingest_spark.py --sizes 100000 300000 1000000 --prepare
    python benchmarks/ingest_spark.py --sizes 100000 --cores 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
import contextlib

from ingest_throughput import generate

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("single", "spark")


def snapshot(root: Path, works: int, per_file: int, files_per_date: int = 2) -> Path:
    """A generated snapshot of ``works`` works under ``root/data/works`` (reused when there)."""
    base = root / "data" / "works"
    done = root / ".complete"
    if done.exists():
        return base
    n_files = max(1, -(-works // per_file))
    for index in range(n_files):
        first = index * per_file
        date = f"2024-{1 + index // files_per_date:02d}-01"
        path = base / f"updated_date={date}" / f"part_{index % files_per_date:03d}.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        generate(path, min(per_file, works - first), first=first, total=works)
    done.touch()
    return base


def _tree_rss(process: psutil.Process) -> int:
    total = 0
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


def tree_cpu(process: psutil.Process, seen: dict[int, float]) -> None:
    """Record the CPU seconds (user + system) of every process of the tree so far."""
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            times = p.cpu_times()
            seen[p.pid] = max(seen.get(p.pid, 0.0), times.user + times.system)


def run(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command``; its wall seconds, the peak RSS of its process tree (MiB) and the CPU
    seconds of the tree (each process's last sample, every 0.2 s: a process that lives less
    than that is missed). On a shared machine CPU seconds are the fairer measure: wall time
    counts the other jobs."""
    start = time.perf_counter()
    child = psutil.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env)
    peak = 0
    cpu: dict[int, float] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss(child))
            tree_cpu(child, cpu)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = child.communicate()
    stop.set()
    sampler.join()
    if child.returncode:
        raise RuntimeError(f"{command} failed: {stderr.decode()[-2000:]}")
    return {"seconds": time.perf_counter() - start, "peak_mib": peak / 2**20,
            "cpu_s": sum(cpu.values())}


def same_corpus(a: Path, b: Path) -> bool:
    """Whether two corpora hold the same rows in the same order, table by table."""
    import pyarrow.dataset as ds

    for name in ("papers", "references", "citations", "contexts"):
        left = ds.dataset(a / f"{name}.parquet").to_table()
        right = ds.dataset(b / f"{name}.parquet").to_table()
        right = right.select(left.schema.names).cast(left.schema)
        if not left.equals(right):
            return False
    return True


def run_engine(engine: str, base: Path, out: Path, cores: int) -> dict[str, float]:
    """Ingest the snapshot ``base`` into ``out`` with one engine in a child process."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    python = sys.executable
    if engine == "single":
        return run([python, "-m", "openmsd.cli", "ingest", str(base), "--out", str(out),
                    "--json"])
    return run([python, "-c", "import sys; from openmsd.corpus import local_spark; "
                "from openmsd.ingest import ingest_on_spark; "
                "ingest_on_spark([sys.argv[1]], sys.argv[2], "
                f"spark=local_spark({cores}))", str(base), str(out)])


def size_row(work: Path, works: int, base: Path, cores: int) -> dict[str, object] | None:
    """The row of one size once both engines' results are in ``work`` (None before)."""
    found = {e: work / f"result-{e}-{works}.json" for e in ENGINES}
    if not all(path.is_file() for path in found.values()):
        return None
    one, many = (json.loads(found[e].read_text()) for e in ENGINES)
    return {"works": works, "files": len(list(base.rglob("part_*.gz"))), "cores": cores,
            "single_works_s": works / one["seconds"],
            "spark_works_s": works / many["seconds"],
            "ratio": one["seconds"] / many["seconds"],
            "spark_works_s_core": works / many["seconds"] / cores,
            "single_works_cpu_s": works / one["cpu_s"], "spark_works_cpu_s": works / many["cpu_s"],
            "single_peak_mib": one["peak_mib"], "spark_peak_mib": many["peak_mib"],
            "single": one, "spark": many,
            "identical": same_corpus(work / f"single-{works}", work / f"spark-{works}")}


TARGETS = {"OpenMSD (74 M works)": 74e6, "OpenAlex (240 M works)": 240e6}


def projection(rows: list[dict]) -> list[str]:
    """Per engine, seconds = fixed + slope × works fitted on the measured sizes (wall and
    CPU seconds of the process tree), projected to OpenMSD's and OpenAlex's size."""
    import numpy as np

    if len(rows) < 2:
        return []
    works = np.array([r["works"] for r in rows], float)
    lines = []
    for engine in ENGINES:
        wall_slope, wall_fixed = np.polyfit(works, [r[engine]["seconds"] for r in rows], 1)
        cpu_slope, cpu_fixed = np.polyfit(works, [r[engine]["cpu_s"] for r in rows], 1)
        lines.append(f"{engine}: wall {wall_fixed:.0f} s + {wall_slope * 1e6:.0f} µs/work "
                     f"({1 / wall_slope:,.0f} works/s at the margin), CPU {cpu_fixed:.0f} s + "
                     f"{cpu_slope * 1e6:.0f} µs/work ({1 / cpu_slope:,.0f} works per CPU-s)")
        for name, n in TARGETS.items():
            lines.append(f"  {name}: {cpu_slope * n / 3600:,.1f} CPU core-hours; "
                         f"{wall_slope * n / 3600:,.1f} h wall at this run's rate")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--per-file", type=int, default=10_000, help="works per part file")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--engines", nargs="*", choices=ENGINES, default=list(ENGINES),
                        help="engines to run now (each result is kept in --work; a size's row "
                             "is printed once both have run, in this call or an earlier one; "
                             "none: only compare and print)")
    parser.add_argument("--prepare", action="store_true",
                        help="only generate the snapshots (run it niced, untimed)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/spark19/ingest_bench"))
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    args = parser.parse_args()
    rows = []
    for works in args.sizes:
        base = snapshot(args.work / f"snapshot-{works}", works, args.per_file)
        if args.prepare:
            continue
        for engine in args.engines:
            result = run_engine(engine, base, args.work / f"{engine}-{works}", args.cores)
            result["load_average_after"] = list(os.getloadavg())
            (args.work / f"result-{engine}-{works}.json").write_text(json.dumps(result))
            print(f"{works:,} works, {engine}: {result}", flush=True)
        row = size_row(args.work, works, base, args.cores)
        if row is not None:
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"{'works':>9} {'files':>5} {'single w/s':>10} {f'spark[{args.cores}] w/s':>13} "
          f"{'ratio':>6} {'single MiB':>10} {'spark MiB':>9} identical")
    for r in rows:
        print(f"{r['works']:>9,} {r['files']:>5} {r['single_works_s']:>10,.0f} "
              f"{r['spark_works_s']:>13,.0f} {r['ratio']:>6.2f} {r['single_peak_mib']:>10,.0f} "
              f"{r['spark_peak_mib']:>9,.0f} {r['identical']}")
    for line in projection(rows):
        print(line)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
