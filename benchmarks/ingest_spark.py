"""Ingest of a generated OpenAlex snapshot: Spark local[N] against the single-process path.

The snapshot is laid out as OpenAlex ships it, ``data/works/updated_date=YYYY-MM-DD/
part_NNN.gz``, works citing works anywhere in it. At each size both engines ingest it in a
child process of their own (the peer is the single-process ``openmsd ingest`` in the same run);
the figures are works/s, the ratio Spark / single process, and the peak resident memory of each
process tree (sampled every 0.2 s: the Spark driver JVM and its Python workers summed). The
corpora are compared row for row. Run niced on a shared machine::

    nice -n 10 python benchmarks/ingest_spark.py --sizes 10000 30000 100000 --cores 2
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--per-file", type=int, default=10_000, help="works per part file")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("/tmp/spark19/ingest_bench"))
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    args = parser.parse_args()
    python = sys.executable
    rows = []
    for works in args.sizes:
        base = snapshot(args.work / f"snapshot-{works}", works, args.per_file)
        single, spark = args.work / f"single-{works}", args.work / f"spark-{works}"
        for path in (single, spark):
            subprocess.run(["rm", "-rf", str(path)], check=True)
        one = run([python, "-m", "openmsd.cli", "ingest", str(base), "--out", str(single),
                   "--json"])
        many = run([python, "-c", "import sys; from openmsd.corpus import "
                    "local_spark, ingest_on_spark; ingest_on_spark([sys.argv[1]], sys.argv[2], "
                    f"spark=local_spark({args.cores}))", str(base), str(spark)])
        row = {"works": works, "files": len(list(base.rglob("part_*.gz"))),
               "single_works_s": works / one["seconds"],
               "spark_works_s": works / many["seconds"],
               "ratio": one["seconds"] / many["seconds"],
               "single_peak_mib": one["peak_mib"], "spark_peak_mib": many["peak_mib"],
               "identical": same_corpus(single, spark)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"{'works':>9} {'files':>5} {'single w/s':>10} {f'spark[{args.cores}] w/s':>13} "
          f"{'ratio':>6} {'single MiB':>10} {'spark MiB':>9} identical")
    for r in rows:
        print(f"{r['works']:>9,} {r['files']:>5} {r['single_works_s']:>10,.0f} "
              f"{r['spark_works_s']:>13,.0f} {r['ratio']:>6.2f} {r['single_peak_mib']:>10,.0f} "
              f"{r['spark_peak_mib']:>9,.0f} {r['identical']}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
