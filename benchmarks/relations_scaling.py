"""DC / CC / BC derivation on a generated power-law citation graph: DuckDB, Spark, Beam.

Generates a seeded citation graph (N papers, out-degree lognormal with mean ~10 capped at
``--max-refs``, cited papers drawn with probability ∝ (rank+1)^-alpha over a random popularity
order, so in-degree follows a power law; no self-loops, no duplicates), writes
``papers.parquet`` and ``citations.parquet``, and then, each run in its own process:

* ``duckdb`` and ``spark`` (``openmsd.relations.engine.connect``): ``direct_citations``,
  ``co_citations`` and ``bib_coupling`` of :mod:`openmsd.relations.pairs` with the default cap
  (``DEFAULT_MAX_GROUP``), each written to Parquet with ``Engine.write``, at every size of
  ``--sizes``; DuckDB once more at the largest size under ``--low-memory-limit`` (it spills);
* the peer, on a graph of ``--beam-papers`` papers: OpenMSD's own approach
  (``OpenMSD/get_citation_relations.py`` of google-research, Apache Beam) re-implemented here
  and run on Beam's DirectRunner, in one process (``beam``) and, the fair peer on these cores,
  in its multi-processing mode with two workers (``beam-mp``, ``direct_num_workers=2``).
  That script does not cap groups, so the peer graph runs uncapped on every engine and the
  pair sets are checked to agree.

Sampled every 0.1 s over the run's process tree (the Python process and, for Spark, the
driver JVM it starts) with ``psutil``: peak memory (the largest sum of RSS; without ``psutil``,
the run's own ``ru_maxrss``, no JVM), CPU seconds (user + system) and, for DuckDB, the peak size
of its spill files. Time is the derivation (reads, joins, writes); an engine's start-up
(Spark's session, DuckDB's connection) is shown apart, and the ratio to DuckDB counts both, as
Beam's time counts its pipeline construction. Finally the CPU time against citations is
fitted on a log-log scale per engine and extrapolated to OpenMSD's 778 M citations (a
projection, see ``project``).

The default run (about 20-35 minutes on 2 cores, depending on what else runs):

    python benchmarks/relations_scaling.py

A quick look (a minute or two):

    python benchmarks/relations_scaling.py --sizes 10000 30000 --beam-papers 3000

Needs ``apache-beam`` and ``psutil`` (the ``bench`` extra) besides the ``spark`` extra; with
Beam in a virtual environment of its own (it pins pyarrow < 26), name its interpreter:

    python -m venv /tmp/beamenv && /tmp/beamenv/bin/pip install apache-beam psutil
    nice -n 10 python benchmarks/relations_scaling.py --sizes 5000 --engines duckdb \
        --low-memory-limit '' --beam-papers 5000 --beam-python /tmp/beamenv/bin/python
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

LANGUAGES = ["en", "de", "fr", "es", "zh", "ja", "ru", "pt"]
LANGUAGE_SHARE = [0.72, 0.05, 0.05, 0.04, 0.06, 0.03, 0.03, 0.02]
OPENMSD_CITATIONS = 778_000_000
RELATIONS = ("dc", "cc", "bc")


# --- the graph -----------------------------------------------------------------------------

def generate(directory: Path, papers: int, *, mean_refs: float = 10.0, alpha: float = 0.6,
             max_refs: int = 1000, seed: int = 0) -> int:
    """Write ``papers.parquet`` and ``citations.parquet`` to ``directory``; return citations."""
    rng = np.random.default_rng(seed)
    sigma = 1.0
    mu = math.log(mean_refs) - sigma**2 / 2
    out_degree = np.minimum(np.rint(rng.lognormal(mu, sigma, papers)), max_refs).astype(np.int64)
    citing = np.repeat(np.arange(papers, dtype=np.int64), out_degree)
    popularity = rng.permutation(papers)
    weight = (np.arange(papers, dtype=np.float64) + 1) ** -alpha
    cited = popularity[rng.choice(papers, size=len(citing), p=weight / weight.sum())]
    keep = citing != cited
    links = np.unique(citing[keep] * papers + cited[keep])
    width = max(7, len(str(papers - 1)))
    ids = pa.array([f"p{i:0{width}d}" for i in range(papers)])
    language = pa.array(LANGUAGES).take(
        pa.array(rng.choice(len(LANGUAGES), size=papers, p=LANGUAGE_SHARE)))
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"paper_id": ids, "language": language}),
                   directory / "papers.parquet")
    pq.write_table(pa.table({"citing_id": ids.take(pa.array(links // papers)),
                             "cited_id": ids.take(pa.array(links % papers))}),
                   directory / "citations.parquet")
    return len(links)


# --- the runs, each in its own process -----------------------------------------------------

def run_engine(name: str, data: Path, out: Path, max_group: int | None,
               memory_limit: str | None) -> dict[str, Any]:
    """DC, CC and BC with an openmsd engine, each written to Parquet under ``out``."""
    from openmsd.relations import bib_coupling, co_citations, connect, direct_citations

    start = time.perf_counter()
    engine = connect(name, memory_limit=memory_limit)
    result: dict[str, Any] = {"start_s": time.perf_counter() - start}
    begin = time.perf_counter()
    papers = engine.read(data / "papers.parquet")
    citations = engine.read(data / "citations.parquet")
    result["dc"] = engine.write(direct_citations(citations, papers), out / "dc.parquet")
    result["dc_s"] = time.perf_counter() - begin
    dc = engine.read(out / "dc.parquet")
    for relation, pairs in (("cc", co_citations), ("bc", bib_coupling)):
        started = time.perf_counter()
        result[relation] = engine.write(pairs(dc, max_group, 0), out / f"{relation}.parquet")
        result[f"{relation}_s"] = time.perf_counter() - started
    result["seconds"] = time.perf_counter() - begin
    engine.close()
    if name == "spark":
        from pyspark.sql import SparkSession

        SparkSession.getActiveSession().stop()
    return result


def _known_links(grouped: tuple[str, dict[str, list[Any]]]) -> list[tuple[str, str]]:
    """The links of a CoGroupByKey group whose key is a known paper (else none)."""
    _, sides = grouped
    return list(sides["links"]) if sides["known"] else []


def _group_pairs(grouped: tuple[str, Any]) -> Iterator[tuple[str, str]]:
    """Every unordered pair of a group's members, as canonical ``(a, b)`` with ``a < b``."""
    members = sorted(set(grouped[1]))
    for i, first in enumerate(members):
        for second in members[i + 1:]:
            yield first, second


def run_beam(data: Path, out: Path, workers: int = 1) -> dict[str, Any]:
    """The peer: OpenMSD's approach (group links by citing / cited paper, emit every pair of a
    group, aggregate the pairs) on Beam's DirectRunner; uncapped, as that script is. With
    ``workers`` > 1, the DirectRunner's multi-processing mode with that many worker processes
    (the fair peer on a multi-core machine)."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    link_schema = pa.schema([("citing_id", pa.string()), ("cited_id", pa.string())])
    pair_schema = pa.schema([("paper_a", pa.string()), ("paper_b", pa.string()),
                             ("count", pa.int64())])

    def write(pcoll: Any, relation: str, schema: pa.Schema) -> None:
        _ = pcoll | f"Write{relation}" >> beam.io.WriteToParquet(
            str(out / relation), schema, file_name_suffix=".parquet", num_shards=1,
            shard_name_template="")

    def pairs(links: Any, relation: str) -> Any:
        return (links
                | f"Group{relation}" >> beam.GroupByKey()
                | f"Pairs{relation}" >> beam.FlatMap(_group_pairs)
                | f"Count{relation}" >> beam.combiners.Count.PerElement()
                | f"Rows{relation}" >> beam.Map(
                    lambda kv: {"paper_a": kv[0][0], "paper_b": kv[0][1], "count": kv[1]}))

    begin = time.perf_counter()
    parallel = ({"direct_num_workers": workers, "direct_running_mode": "multi_processing"}
                if workers > 1 else {})
    with beam.Pipeline(options=PipelineOptions(runner="DirectRunner", **parallel)) as p:
        known = (p | "ReadPapers" >> beam.io.ReadFromParquet(str(data / "papers.parquet"),
                                                             columns=["paper_id"])
                 | "KeyPapers" >> beam.Map(lambda row: (row["paper_id"], True)))
        links = (p | "ReadCitations" >> beam.io.ReadFromParquet(
                    str(data / "citations.parquet"))
                 | "Links" >> beam.Map(lambda row: (row["citing_id"], row["cited_id"])))
        by_citing = links | "ByCiting" >> beam.Map(lambda link: (link[0], link))
        citing_known = ({"known": known, "links": by_citing}
                        | "JoinCiting" >> beam.CoGroupByKey()
                        | "CitingKnown" >> beam.FlatMap(_known_links))
        by_cited = citing_known | "ByCited" >> beam.Map(lambda link: (link[1], link))
        dc = ({"known": known, "links": by_cited}
              | "JoinCited" >> beam.CoGroupByKey()
              | "CitedKnown" >> beam.FlatMap(_known_links)
              | "NoSelf" >> beam.Filter(lambda link: link[0] != link[1])
              | "Distinct" >> beam.Distinct())
        write(dc | "DcRows" >> beam.Map(lambda link: {"citing_id": link[0],
                                                       "cited_id": link[1]}),
              "dc", link_schema)
        write(pairs(dc, "cc"), "cc", pair_schema)
        write(pairs(dc | "Backward" >> beam.Map(lambda link: (link[1], link[0])), "bc"),
              "bc", pair_schema)
    result: dict[str, Any] = {"seconds": time.perf_counter() - begin, "start_s": 0.0}
    for relation in RELATIONS:
        result[relation] = pq.ParquetFile(out / f"{relation}.parquet").metadata.num_rows
    return result


def child(args: argparse.Namespace) -> None:
    """Run one engine in this process; print its result as JSON on the last line."""
    args.out.mkdir(parents=True, exist_ok=True)
    if args.child in ("beam", "beam-mp"):
        result = run_beam(args.data, args.out, 2 if args.child == "beam-mp" else 1)
    else:
        result = run_engine(args.child, args.data, args.out, args.max_group,
                            args.memory_limit or None)
    result["self_peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def measure(command: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``command`` in ``cwd``; return the child's JSON plus, sampled every 0.1 s over its
    process tree, ``peak_mib`` (RSS), ``cpu_s`` (user + system) and ``spill_mib`` (DuckDB's
    temporary files, ``cwd/.tmp``); with ``error`` when it failed."""
    try:
        import psutil
    except ImportError:
        psutil = None
    cwd.mkdir(parents=True, exist_ok=True)
    peak = spill = 0
    cpu: dict[int, float] = {}
    with open(cwd / "stdout.txt", "w") as out, open(cwd / "stderr.txt", "w") as err:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        watched = psutil.Process(proc.pid) if psutil else None
        while proc.poll() is None:
            if watched is not None:
                peak = max(peak, _sample_tree(watched, psutil, cpu))
            spill = max(spill, _directory_bytes(cwd / ".tmp"))
            time.sleep(0.1)
    lines = (cwd / "stdout.txt").read_text().strip().splitlines()
    sampled = {"peak_mib": peak / 2**20, "cpu_s": sum(cpu.values()), "spill_mib": spill / 2**20}
    if proc.returncode != 0 or not lines:
        errors = [line for line in (cwd / "stderr.txt").read_text().splitlines()
                  if "Error" in line or "Exception" in line]
        return {"error": f"exit {proc.returncode}: {(errors or ['?'])[-1]}", **sampled}
    result = {**json.loads(lines[-1]), **sampled}
    if watched is None:
        result["peak_mib"] = result["self_peak_mib"]
    return result


def _sample_tree(process: Any, psutil: Any, cpu: dict[int, float]) -> int:
    """RSS of ``process`` and its descendants in bytes; records each one's CPU seconds in
    ``cpu`` (by pid). Processes that vanish meanwhile are skipped."""
    try:
        members = [process, *process.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for member in members:
        with contextlib.suppress(psutil.NoSuchProcess), member.oneshot():
            total += member.memory_info().rss
            times = member.cpu_times()
            cpu[member.pid] = times.user + times.system
    return total


def _directory_bytes(path: Path) -> int:
    """The bytes of the files directly in ``path`` (0 when it does not exist)."""
    with contextlib.suppress(FileNotFoundError):
        return sum(entry.stat().st_size for entry in os.scandir(path) if entry.is_file())
    return 0


def same_rows(a: Path, b: Path) -> bool:
    """Whether two Parquet outputs (a file or a directory of parts) hold the same rows."""
    import duckdb

    def source(path: Path) -> str:
        pattern = path / "**" / "*.parquet" if path.is_dir() else path
        return f"read_parquet('{pattern}')"

    con = duckdb.connect()
    con.execute("SET memory_limit = '2GB'")
    counts = [con.execute(f"SELECT count(*) FROM (SELECT * FROM {x} EXCEPT ALL "
                          f"SELECT * FROM {y})").fetchone()[0]
              for x, y in ((source(a), source(b)), (source(b), source(a)))]
    con.close()
    return counts == [0, 0]


# --- the driver ----------------------------------------------------------------------------

def _group_arg(text: str) -> int | None:
    return None if text.lower() == "none" else int(text)


def _run(args: argparse.Namespace, label: str, engine: str, data: Path, run_dir: Path,
         max_group: int | None, memory_limit: str = "") -> dict[str, Any]:
    python = args.beam_python if engine.startswith("beam") else sys.executable
    command = [python, str(Path(__file__).resolve()), "--child", engine,
               "--data", str(data), "--out", str(run_dir / "out"),
               "--max-group", str(max_group), "--memory-limit", memory_limit]
    env = {**os.environ, "OPENMSD_SPARK_MEMORY": args.spark_memory}
    print(f"  {label} ...", file=sys.stderr, flush=True)
    result = measure(command, run_dir, env)
    result["label"] = label
    print(f"  {label}: {result.get('seconds', float('nan')):.1f} s, "
          f"{result['peak_mib']:.0f} MiB {result.get('error', '')}", file=sys.stderr, flush=True)
    return result


HEADER = (f"{'papers':>9} {'citations':>11} {'cap':>5} {'engine':<12} {'DC pairs':>11} "
          f"{'CC pairs':>12} {'BC pairs':>12} {'seconds':>8} {'start s':>7} {'cpu s':>7} "
          f"{'peak MiB':>8} {'spill MiB':>9} {'x duckdb':>8}")


def _row(papers: int, citations: int, cap: int | None, run: dict[str, Any],
         base: float | None) -> str:
    """A table line; ``x duckdb`` is this run's time over DuckDB's on the same graph, both
    timed the same way: from the engine's start (session, pipeline construction) to its
    outputs written (``seconds`` + ``start s``)."""
    head = f"{papers:>9,} {citations:>11,} {cap!s:>5} {run['label']:<12}"
    if "error" in run:
        return f"{head} failed after {run['peak_mib']:.0f} MiB peak: {run['error'][:80]}"
    ratio = (f"{(run['seconds'] + run['start_s']) / base:7.2f}x" if base else f"{'':>8}")
    spill = f"{run['spill_mib']:.0f}" if run["label"].startswith("duckdb") else "-"
    return (f"{head} {run['dc']:>11,} {run['cc']:>12,} {run['bc']:>12,} "
            f"{run['seconds']:>8.1f} {run['start_s']:>7.1f} {run['cpu_s']:>7.0f} "
            f"{run['peak_mib']:>8.0f} {spill:>9} {ratio}")


def _total(run: dict[str, Any] | None) -> float | None:
    """A run's seconds from its engine's start, or None when it did not run or failed."""
    if not run or "error" in run:
        return None
    return run["seconds"] + run["start_s"]


def project(runs: list[tuple[int, dict[str, Any]]], target: int) -> dict[str, float]:
    """Extrapolate one engine's runs (citations, result) to ``target`` citations.

    Fits log-log slopes of wall and of CPU seconds against citations; projects from the
    largest run with the CPU slope, but at least 1 (the capped pairs grow linearly with the
    citations; a flatter fit is fixed cost showing at small sizes). CPU time is the basis since
    wall time on a shared machine depends on what else runs."""
    x = np.log([c for c, _ in runs])
    wall_slope = float(np.polyfit(x, np.log([r["seconds"] for _, r in runs]), 1)[0])
    cpu_slope = float(np.polyfit(x, np.log([r["cpu_s"] for _, r in runs]), 1)[0])
    used = max(cpu_slope, 1.0)
    citations, largest = max(runs, key=lambda item: item[0])
    scale = (target / citations) ** used
    return {"wall_slope": wall_slope, "cpu_slope": cpu_slope, "used": used,
            "seconds": largest["seconds"] * scale, "cpu_s": largest["cpu_s"] * scale,
            "pairs": (largest["cc"] + largest["bc"]) * target / citations}


def report_projection(engine: str, runs: list[tuple[int, dict[str, Any]]]) -> None:
    """Print the projection of ``engine`` to OpenMSD's citations (and, for Spark, a cluster)."""
    got = project(runs, OPENMSD_CITATIONS)
    core_hours = got["cpu_s"] / 3600
    print(f"  {engine}: slope of wall time {got['wall_slope']:.2f}, of CPU time "
          f"{got['cpu_slope']:.2f}; with {got['used']:.2f}: {core_hours:,.1f} CPU core-hours, "
          f"{got['seconds'] / 3600:,.1f} h wall on this machine (at the largest run's "
          f"wall/CPU), {got['pairs'] / 1e9:,.1f} G CC+BC pairs")
    if engine == "spark":
        cores = math.ceil(core_hours)
        print(f"  spark cluster, if CPU time per pair stays as measured here and the work "
              f"spreads evenly over cores: {cores:,} cores for 1 h (~{math.ceil(cores / 4):,} "
              f"executors of 4 cores), {math.ceil(core_hours / 4):,} cores for 4 h")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000],
                        help="papers per graph (~10 citations each)")
    parser.add_argument("--engines", nargs="+", default=["duckdb", "spark"])
    parser.add_argument("--memory-limit", default="4GB", help="DuckDB memory limit")
    parser.add_argument("--low-memory-limit", default="1GB",
                        help="DuckDB limit for one more run at the largest size ('' skips it)")
    parser.add_argument("--spark-memory", default="6g", help="Spark driver memory")
    parser.add_argument("--beam-papers", type=int, default=20_000,
                        help="papers of the uncapped peer graph (0 skips the peer)")
    parser.add_argument("--beam-python", default=sys.executable,
                        help="the interpreter of the Beam runs (apache-beam pins pyarrow < 26: "
                             "it may live in a virtual environment of its own)")
    parser.add_argument("--max-group", type=_group_arg, default=None,
                        help="group cap (default: openmsd's DEFAULT_MAX_GROUP)")
    parser.add_argument("--mean-refs", type=float, default=10.0)
    parser.add_argument("--alpha", type=float, default=0.6,
                        help="popularity exponent: P(cited = rank r) ∝ (r+1)^-alpha")
    parser.add_argument("--max-refs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path,
                        help="where graphs and outputs go (default: a temporary directory)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from openmsd.relations import DEFAULT_MAX_GROUP

    cap = args.max_group if args.max_group is not None else DEFAULT_MAX_GROUP
    root = Path(tempfile.mkdtemp(prefix="relations-bench-", dir=args.workdir or "/tmp"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at start: {load}; work in {root}", file=sys.stderr)
    lines: list[str] = []
    measured: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    checks: list[str] = []
    try:
        for papers in sorted(args.sizes):
            data = root / f"graph-{papers}"
            citations = generate(data, papers, mean_refs=args.mean_refs, alpha=args.alpha,
                                 max_refs=args.max_refs, seed=args.seed)
            print(f"{papers:,} papers, {citations:,} citations", file=sys.stderr)
            runs = {engine: _run(args, engine, engine, data, root / f"{engine}-{papers}",
                                 cap, args.memory_limit if engine == "duckdb" else "")
                    for engine in args.engines}
            if papers == max(args.sizes) and args.low_memory_limit and "duckdb" in runs:
                runs["duckdb-low"] = _run(args, f"duckdb {args.low_memory_limit}", "duckdb",
                                          data, root / f"duckdb-low-{papers}", cap,
                                          args.low_memory_limit)
            base = _total(runs.get("duckdb"))
            for key, run in runs.items():
                lines.append(_row(papers, citations, cap, run, base))
                if "error" not in run and key in args.engines:
                    measured.setdefault(key, []).append((citations, run))
            if papers == min(args.sizes) and {"duckdb", "spark"} <= runs.keys():
                agree = all(same_rows(root / f"duckdb-{papers}" / "out" / f"{r}.parquet",
                                      root / f"spark-{papers}" / "out" / f"{r}.parquet")
                            for r in RELATIONS)
                checks.append(f"spark = duckdb pairs ({papers:,} papers, cap {cap}): "
                              f"{'yes' if agree else 'no'}")
            shutil.rmtree(data)
            for key in runs:
                shutil.rmtree(root / f"{key}-{papers}" / "out", ignore_errors=True)

        if args.beam_papers:
            papers = args.beam_papers
            data = root / "graph-peer"
            citations = generate(data, papers, mean_refs=args.mean_refs, alpha=args.alpha,
                                 max_refs=args.max_refs, seed=args.seed)
            print(f"peer graph: {papers:,} papers, {citations:,} citations", file=sys.stderr)
            runs = {engine: _run(args, engine, engine, data, root / f"peer-{engine}", None,
                                 args.memory_limit if engine == "duckdb" else "")
                    for engine in [*args.engines, "beam", "beam-mp"]}
            base = _total(runs.get("duckdb"))
            for run in runs.values():
                lines.append(_row(papers, citations, None, run, base))
            if "error" not in runs["beam"] and "duckdb" in runs:
                agree = all(same_rows(root / "peer-duckdb" / "out" / f"{r}.parquet",
                                      root / "peer-beam" / "out" / f"{r}.parquet")
                            for r in RELATIONS)
                checks.append(f"pairs agree: {'yes' if agree else 'no'} (beam vs duckdb, "
                              f"{papers:,} papers, uncapped)")
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print(f"load average at start (1, 5, 15 min): {load}")
    print(HEADER)
    print("\n".join(lines))
    print("\n".join(checks))
    print(f"projection to {OPENMSD_CITATIONS:,} citations (same graph shape; time grows with "
          f"citations as fitted over the sizes above, at least linearly):")
    for engine, runs in measured.items():
        if len(runs) > 1:
            report_projection(engine, runs)


if __name__ == "__main__":
    main()
