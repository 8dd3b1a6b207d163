"""An approximate FAISS index at scale: a factory index (IVF-PQ) over ≥ 10M clustered vectors.

Generates ``--vectors`` seeded clustered 384-d unit vectors the way ``search_index.py`` does
(:func:`search_index.generate_chunks`), streamed to Parquet in chunks (never all in RAM), plus
``--queries`` held-out query vectors of the same distribution. Then:

1. **build at full size**: ``openmsd.index.vector_index.publish_factory`` (the code path of
   ``openmsd index build --factory``) in a child process, reading the Parquet in batches: build
   seconds, the child's peak RSS (``VmHWM``), bytes per vector in the index (``index.faiss``
   + ``index.ivfdata``; the full vectors stay on disk for re-ranking, counted apart), the
   ``nprobe`` its calibration chose; recall@10 of the queries against exact search over all the
   vectors (streamed), queries/s batched and one at a time;
2. **compare at ``--compare`` vectors** (the first rows, 1M by default), same run: exact
   (``IndexFlatIP``), HNSW (``new_index("hnsw")``, as ``index build`` makes it) and the same
   factory built over that subset: recall@10, queries/s, build seconds, bytes per vector; and a
   filtered search (half the rows allowed; 1% allowed) through ``VectorIndex.search``'s
   ``IDSelector`` against the filtered exact search.

    nice -n 10 python benchmarks/index_scale.py --vectors 10000000 --work /tmp/ivfpq/scale \\
        --json /tmp/ivfpq/scale.json
    python benchmarks/index_scale.py --vectors 20000 --compare 10000 --factory IVF64,PQ48 \\
        --train 5000 --work /tmp/ivfpq/tiny   # a quick look (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from record import write_record
from search_index import Clusters, recall, rss_mib, size_mib, timed

from openmsd.corpus import Layout
from openmsd.index import (
    META,
    FactoryParams,
    VectorIndex,
    load_index,
    new_index,
    parquet_batches,
    publish_factory,
)

K = 10
STEPS = ("generate", "build", "truth", "measure", "compare")
LANGUAGES = ["en", "fr", "pt", "es"]


def schema(dim: int) -> pa.Schema:
    return pa.schema([*META, ("vector", pa.list_(pa.float32(), dim))])


def write_vectors(args: argparse.Namespace) -> tuple[list[Path], np.ndarray]:
    """The base vectors as Parquet parts of ``--part-rows`` (with a paper id, a language and a
    year each), and ``--queries`` held-out queries of the same distribution. Each part is drawn
    from its own seed (``[seed, part]``), ``--chunk`` rows at a time, by ``--jobs`` processes;
    a part is written under a temporary name and renamed, so a rerun keeps the finished ones."""
    data = args.work / "vectors"
    done = data / "_SUCCESS"
    queries_file = args.work / "queries.npy"
    if not done.exists():
        data.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        parts = [(part, part * args.part_rows, min(args.vectors, (part + 1) * args.part_rows))
                 for part in range(-(-args.vectors // args.part_rows))]
        todo = [p for p in parts if not (data / f"part-{p[0]:05d}.parquet").exists()]
        with ProcessPoolExecutor(max(1, args.jobs)) as pool:
            for part, rows, seconds in pool.map(write_part, [args] * len(todo), todo):
                print(f"  part {part}: {rows:,} vectors in {seconds:.0f} s "
                      f"({time.perf_counter() - start:.0f} s)", flush=True)
        rng = np.random.default_rng([args.seed, QUERY_STREAM])
        np.save(queries_file, model(args).points(rng, model(args).labels(rng, args.queries)))
        done.touch()
        print(f"generated {args.vectors:,} + {args.queries:,} vectors in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    return sorted(data.glob("part-*.parquet")), np.load(queries_file)


QUERY_STREAM = 2**31
"""The seed stream of the held-out queries (parts use their number)."""


def model(args: argparse.Namespace) -> Clusters:
    """The generating model of ``--seed`` (the same in every process)."""
    return Clusters.make(np.random.default_rng(args.seed), args.dim, args.clusters,
                         args.groups, args.noise)[0]


def write_part(args: argparse.Namespace, part: tuple[int, int, int]) -> tuple[int, int, float]:
    """Rows ``first:stop`` as ``part-NNNNN.parquet``, drawn from seed ``[seed, number]``."""
    number, first, stop = part
    started = time.perf_counter()
    clusters, rng = model(args), np.random.default_rng([args.seed, number])
    path = args.work / "vectors" / f"part-{number:05d}.parquet"
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, schema(args.dim), compression="none") as writer:
        for row in range(first, stop, args.chunk):
            n = min(args.chunk, stop - row)
            chunk = clusters.points(rng, clusters.labels(rng, n))
            ids = pc.utf8_lpad(pa.array(np.arange(row, row + n)).cast(pa.string()), 9, "0")
            writer.write_table(pa.table({
                "paper_id": pc.binary_join_element_wise("v", ids, ""),
                "text_hash": pa.nulls(n, pa.string()),
                "language": pa.array(LANGUAGES, pa.string()).take(
                    rng.integers(len(LANGUAGES), size=n)),
                "year": pa.array(rng.integers(1950, 2025, size=n), pa.int32()),
                "vector": pa.FixedSizeListArray.from_arrays(chunk.reshape(-1), args.dim)},
                schema=schema(args.dim)), row_group_size=args.chunk)
    os.replace(tmp, path)
    return number, stop - first, time.perf_counter() - started


def batches_of(parts: list[Path], limit: int | None = None):
    """A pass over the parts' (rows, vectors), stopping after ``limit`` rows."""
    def batches():
        seen = 0
        for rows, matrix in parquet_batches(parts, ["paper_id", "text_hash", "language",
                                                    "year"]):
            if limit is not None and seen + len(matrix) > limit:
                rows, matrix = rows.slice(0, limit - seen), matrix[:limit - seen]
            if len(matrix):
                yield rows, matrix
            seen += len(matrix)
            if limit is not None and seen >= limit:
                return
    return batches


def build_child(args: argparse.Namespace) -> None:
    """In the child process: build the factory index of the first ``--limit`` rows, sampling
    its memory (:class:`MemorySampler`) through the stages."""
    parts = sorted((args.work / "vectors").glob("part-*.parquet"))
    params = FactoryParams(args.factory, train=args.train, calibration=args.calibration,
                           seed=args.seed, rerank=args.rerank, target_recall=args.target,
                           niter=args.niter)
    stages: dict[str, float] = {}
    start = time.perf_counter()
    sampler = MemorySampler()

    added = [0]

    def progress(stage: str, rows: int) -> None:
        sampler.stage = stage
        if stage == "add":
            added[0] += rows
            if added[0] // 1_000_000 != (added[0] - rows) // 1_000_000:
                print(f"  added {added[0]:,} at {time.perf_counter() - start:.0f} s, "
                      f"{os.getloadavg()[0]:.1f} load, RSS {sampler.peaks()}", flush=True)
        if stage not in stages:
            stages[stage] = time.perf_counter() - start
            print(f"  [{stage}] at {stages[stage]:.0f} s, {os.getloadavg()[0]:.1f} load, "
                  f"RSS {sampler.peaks()}", flush=True)

    with sampler:
        built = publish_factory(batches_of(parts, args.limit), params,
                                args.out / "index" / "scale", progress)
    print(json.dumps({"stages": stages, "peak_rss_mib": vm_hwm_mib(),
                      "memory": sampler.peaks(), "settings": built.settings.__dict__}),
          flush=True)


def vm_hwm_mib() -> float:
    """This process's peak RSS (``VmHWM``, MiB): unlike ``ru_maxrss``, not inherited from the
    parent it was forked from (the parent holds the generated or compared vectors)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class MemorySampler:
    """Polls this process's ``/proc/self/status`` every ``interval`` s in a thread: the peak of
    ``VmRSS`` and of its parts, ``RssAnon`` (heap, arrays: what the process allocated) and
    ``RssFile`` (pages of mapped files: the on-disk lists, ``vectors.f32``; clean ones the
    kernel drops under pressure), each with the stage it was seen in."""

    FIELDS = ("VmRSS", "RssAnon", "RssFile")

    def __init__(self, interval: float = 0.2):
        self.interval, self.stage = interval, "start"
        self.peak = {f: (0.0, "") for f in self.FIELDS}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        with open("/proc/self/status") as status:
            for line in status:
                name, _, value = line.partition(":")
                if name in self.peak and int(value.split()[0]) / 1024 > self.peak[name][0]:
                    self.peak[name] = (int(value.split()[0]) / 1024, self.stage)

    def peaks(self) -> dict[str, str]:
        """Each field's peak in MiB, with its stage."""
        return {f"{name}_mib": f"{mib:.0f} ({stage})" for name, (mib, stage) in self.peak.items()}


def build(args: argparse.Namespace, limit: int, out: Path) -> dict:
    """Build in a child process; seconds, its peak RSS (MiB), bytes per vector, settings."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--build-child", "--limit", str(limit),
                              "--out", str(out), *sys.argv[1:]], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in child.stdout or []:  # the stages as they come (a long build shows progress)
        print(line, end="", flush=True)
        lines.append(line)
    child.wait()
    seconds = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"build failed:\n{''.join(lines[-40:])}")
    directory = (out / "index" / "scale").resolve()
    index_bytes = sum((directory / f).stat().st_size for f in ("index.faiss", "index.ivfdata")
                      if (directory / f).exists())
    report = json.loads([line for line in lines if line.startswith("{")][-1])
    return {"vectors": limit, "build_s": seconds,
            "bytes_per_vector": index_bytes / limit,
            "vectors_file_bytes_per_vector": (directory / "vectors.f32").stat().st_size / limit,
            **report}


def exact_truth(parts: list[Path], queries: np.ndarray, limit: int, k: int = K) -> np.ndarray:
    """Exact top-``k`` rows of ``queries`` over the first ``limit`` rows, streamed."""
    best_s = np.full((len(queries), k), -np.inf, np.float32)
    best_r = np.full((len(queries), k), -1, np.int64)
    row = 0
    for _, matrix in batches_of(parts, limit)():
        scores = queries @ matrix.T
        both_s = np.hstack([best_s, scores])
        both_r = np.hstack([best_r, np.broadcast_to(np.arange(row, row + len(matrix)),
                                                   scores.shape)])
        keep = np.argpartition(-both_s, k - 1, axis=1)[:, :k]
        best_s, best_r = np.take_along_axis(both_s, keep, 1), np.take_along_axis(both_r, keep, 1)
        row += len(matrix)
    return best_r


def factory_search(index: VectorIndex):
    def search(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hits = index.search(q, K)
        rows = np.array([[int(p[1:]) for p, _ in h] + [-1] * (K - len(h)) for h in hits])
        return np.zeros(rows.shape), rows
    return search


def measure_index(args: argparse.Namespace, out: Path, queries: np.ndarray,
                  truth: np.ndarray | None) -> dict:
    """recall@10 and queries/s of a built factory index, searched as ``VectorIndex`` does."""
    index = load_index_at(out)
    found, qps, single = timed(factory_search(index), queries, args.single, args.repeats)
    return {"recall": recall(found, truth) if truth is not None else None,
            "qps_batch": qps[0], "qps_single": single}


def load_index_at(out: Path) -> VectorIndex:
    class Root:  # load_index takes a corpus; only its root and layout are used
        root = out
        layout = Layout(out)
    return load_index(Root, "scale")  # type: ignore[arg-type]


def compare(args: argparse.Namespace, parts: list[Path], queries: np.ndarray) -> list[dict]:
    """Flat, HNSW and the factory index at ``--compare`` vectors, and filtered searches."""
    n = args.compare
    base = np.empty((n, args.dim), np.float32)
    papers = []
    row = 0
    for rows, matrix in batches_of(parts, n)():
        base[row:row + len(matrix)] = matrix
        papers.append(rows)
        row += len(matrix)
    meta = pa.concat_tables(papers)
    rows = []
    flat = new_index(args.dim, "flat")
    start, before = time.perf_counter(), rss_mib()
    flat.add(base)
    flat_build, flat_rss = time.perf_counter() - start, rss_mib() - before
    truth, qps, single = timed(lambda q: flat.search(q, K), queries, args.single_flat,
                               args.repeats)
    rows.append({"method": "flat", "vectors": n, "recall": 1.0, "qps_batch": qps[0],
                 "qps_single": single, "build_s": flat_build, "rss_mib": flat_rss,
                 "bytes_per_vector": size_mib(flat) * 2**20 / n})
    print(f"  flat: {rows[-1]}", flush=True)
    built = build(args, n, args.work / "compare")
    measured = measure_index(args, args.work / "compare", queries, truth)
    rows.append({"method": args.factory, **built, **measured})
    print(f"  {args.factory}: {rows[-1]}", flush=True)
    partial(args, rows)
    index = load_index_at(args.work / "compare")
    for name, languages, years in (("filter half (language en,fr)", ["en", "fr"], None),
                                   ("filter ~1% (language pt, year 2000)", ["pt"],
                                    (2000, 2000))):
        allowed = np.isin(meta["language"].to_numpy(zero_copy_only=False), languages)
        if years:
            year = meta["year"].to_numpy()
            allowed &= (year >= years[0]) & (year <= years[1])
        sel = faiss.IDSelectorBatch(np.flatnonzero(allowed).astype(np.int64))
        ftruth = flat.search(queries, K, params=faiss.SearchParameters(sel=sel))[1]

        def search(q: np.ndarray, languages=languages, years=years):
            hits = index.search(q, K, languages, years)
            found = np.array([[int(p[1:]) for p, _ in h] + [-1] * (K - len(h)) for h in hits])
            return np.zeros(found.shape), found
        found, qps, single = timed(search, queries, args.single, args.repeats)
        rows.append({"method": f"{args.factory} {name}", "vectors": n,
                     "allowed": float(allowed.mean()), "recall": recall(found, ftruth),
                     "qps_batch": qps[0], "qps_single": single})
        print(f"  {rows[-1]}", flush=True)
        partial(args, rows)
    if not args.skip_hnsw:
        hnsw = new_index(args.dim, "hnsw")
        start, before = time.perf_counter(), rss_mib()
        for s in range(0, n, 100_000):
            hnsw.add(base[s:s + 100_000])
        hnsw_build, hnsw_rss = time.perf_counter() - start, rss_mib() - before
        found, qps, single = timed(lambda q: hnsw.search(q, K), queries, args.single,
                                   args.repeats)
        rows.append({"method": "hnsw M=32 ef=128", "vectors": n, "recall": recall(found, truth),
                     "qps_batch": qps[0], "qps_single": single, "build_s": hnsw_build,
                     "rss_mib": hnsw_rss,
                     "bytes_per_vector": size_mib(hnsw) * 2**20 / n})
        print(f"  hnsw: {rows[-1]}", flush=True)
    return rows


def partial(args: argparse.Namespace, rows: list[dict]) -> None:
    """The comparison rows so far, beside ``--json`` (a long run shows what it has)."""
    if args.json:
        args.json.with_suffix(".compare.json").write_text(json.dumps(rows, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=10_000_000)
    parser.add_argument("--compare", type=int, default=1_000_000,
                        help="vectors of the flat/HNSW/factory comparison (the first rows)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--factory", default="IVF4096,PQ48")
    parser.add_argument("--train", type=int, default=100_000, help="training sample rows")
    parser.add_argument("--niter", type=int, default=10, help="k-means iterations")
    parser.add_argument("--calibration", type=int, default=200, help="nprobe calibration rows")
    parser.add_argument("--rerank", type=int, default=100, help="candidates re-ranked exactly")
    parser.add_argument("--target", type=float, default=0.95, help="calibration recall target")
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--noise", type=float, default=0.8)
    parser.add_argument("--part-rows", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=100_000, help="rows generated at a time")
    parser.add_argument("--jobs", type=int, default=2, help="processes generating the parts")
    parser.add_argument("--single", type=int, default=200)
    parser.add_argument("--single-flat", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--steps", default=",".join(STEPS),
                        help=f"comma-separated, of {','.join(STEPS)}: the builds niced, the "
                        "timed steps under the timing lock, in separate runs")
    parser.add_argument("--skip-hnsw", action="store_true")
    parser.add_argument("--skip-compare", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/index-scale"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-record", action="store_true",
                        help="write no benchmarks/results/index_scale.json (a trial run)")
    parser.add_argument("--build-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_child:
        build_child(args)
        return
    args.part_rows = min(args.part_rows, args.vectors)
    print(f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} OpenMP threads, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    steps = args.steps.split(",")
    if set(steps) - set(STEPS):
        raise SystemExit(f"--steps: {','.join(sorted(set(steps) - set(STEPS)))} is not one of "
                         f"{','.join(STEPS)}")
    parts, queries = write_vectors(args)
    saved = args.work / "result.json"
    result: dict = json.loads(saved.read_text()) if saved.exists() else {}
    result.setdefault("runs", []).append({"steps": steps, "argv": sys.argv[1:],
                                          "load_start": os.getloadavg()[0]})

    def save() -> None:
        result["runs"][-1]["load_end"] = os.getloadavg()[0]
        saved.write_text(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))

    truth_file = args.work / "truth-full.npy"
    if "build" in steps:
        print(f"building {args.factory} over {args.vectors:,} vectors", flush=True)
        result["full"] = build(args, args.vectors, args.work / "full")
        save()
    if "truth" in steps:  # exact top-10 over all the vectors, streamed (not a timing)
        start = time.perf_counter()
        np.save(truth_file, exact_truth(parts, queries, args.vectors))
        result["full"]["exact_truth_s"] = time.perf_counter() - start
        save()
    if "measure" in steps:
        truth = np.load(truth_file) if truth_file.exists() else None
        result["full"].update(measure_index(args, args.work / "full", queries, truth))
        print(f"full: {json.dumps(result['full'])}", flush=True)
        save()
        if result["full"].get("recall") is not None and not args.no_record:
            record(args, result)
    if "compare" in steps and not args.skip_compare:
        result["compare"] = compare(args, parts, queries)
        save()
    print(table(result))


def record(args: argparse.Namespace, result: dict) -> None:
    """``benchmarks/results/index_scale.json``: the full-size index's figures (and the
    comparison rows, where this run made them); the vectors are synthetic."""
    full = result["full"]
    write_record(
        "index_scale",
        {"headline": f"{full['recall']:.3f}",
         "headline_means": f"recall@10 of {args.factory} over {args.vectors:,} synthetic "
                           "vectors against exact search over all of them",
         "peer": "exact inner-product search (the truth, streamed over every vector)",
         "full": full, "compare": result.get("compare", []), "runs": result["runs"]},
        data={"vectors": args.vectors, "queries": args.queries, "dim": args.dim,
              "clusters": args.clusters, "groups": args.groups, "noise": args.noise,
              "seed": args.seed},
        load_before=result["runs"][0]["load_start"],
        synthetic=True,
        notes="Seeded clustered 384-d unit vectors (search_index.Clusters), not real "
              "embeddings. The build and the exact truth ran at nice 0; the query speeds are "
              "the measure step's, one query at a time and batched.")


def table(result: dict) -> str:
    """The figures as a Markdown table: the full-size factory index, then the comparison."""
    lines = ["| index | vectors | recall@10 | q/s batched | q/s one at a time | build s | "
             "B/vector | peak RSS MiB (anon) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    full = [{"method": f"{result['full']['settings']['factory']} (full size)",
             **result["full"]}] if "full" in result else []
    for row in [*full, *result.get("compare", [])]:
        memory = row.get("memory", {})
        peak = (f"{row['peak_rss_mib']:.0f} ({memory['RssAnon_mib'].split()[0]})"
                if "memory" in row else f"{row['rss_mib']:.0f}" if "rss_mib" in row else "")
        cells = [row["method"], f"{row.get('vectors', 0):,}",
                 *(f"{row[key]:{form}}" if row.get(key) is not None else ""
                   for key, form in (("recall", ".3f"), ("qps_batch", ",.1f"),
                                     ("qps_single", ",.1f"), ("build_s", ",.0f"),
                                     ("bytes_per_vector", ",.1f"))), peak]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)

if __name__ == "__main__":
    main()
