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
import time
from pathlib import Path

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from search_index import generate_chunks, recall, size_mib, timed

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
LANGUAGES = ["en", "fr", "pt", "es"]


def schema(dim: int) -> pa.Schema:
    return pa.schema([*META, ("vector", pa.list_(pa.float32(), dim))])


def write_vectors(args: argparse.Namespace) -> tuple[list[Path], np.ndarray]:
    """The base vectors as Parquet parts of ``--part-rows`` (with a paper id, a language and a
    year each), and the held-out queries (the first ``--queries`` generated)."""
    data = args.work / "vectors"
    done = data / "_SUCCESS"
    queries_file = args.work / "queries.npy"
    if not done.exists():
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(parents=True)
        start = time.perf_counter()
        rng = np.random.default_rng(args.seed + 7)
        queries, row, part, in_part, writer = [], 0, 0, 0, None
        chunks = generate_chunks(args.vectors + args.queries, args.dim, args.clusters,
                                 args.groups, args.noise, args.seed, chunk=args.part_rows // 4)
        for chunk in chunks:
            need = args.queries - sum(len(q) for q in queries)
            if need > 0:
                queries.append(chunk[:need])
                chunk = chunk[need:]
            if not len(chunk):
                continue
            table = pa.table({
                "paper_id": [f"v{i:09d}" for i in range(row, row + len(chunk))],
                "text_hash": pa.nulls(len(chunk), pa.string()),
                "language": pa.array(LANGUAGES, pa.string()).take(
                    rng.integers(len(LANGUAGES), size=len(chunk))),
                "year": pa.array(rng.integers(1950, 2025, size=len(chunk)), pa.int32()),
                "vector": pa.FixedSizeListArray.from_arrays(chunk.reshape(-1), args.dim)},
                schema=schema(args.dim))
            if writer is None:
                writer = pq.ParquetWriter(data / f"part-{part:05d}.parquet", table.schema,
                                          compression="none")
            writer.write_table(table, row_group_size=65_536)
            row += len(chunk)
            in_part += len(chunk)
            if in_part >= args.part_rows:
                writer.close()
                writer, part, in_part = None, part + 1, 0
                print(f"  generated {row:,} vectors, {time.perf_counter() - start:.0f} s",
                      flush=True)
        if writer is not None:
            writer.close()
        np.save(queries_file, np.vstack(queries))
        done.touch()
        print(f"generated {row:,} + {args.queries:,} vectors in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    return sorted(data.glob("part-*.parquet")), np.load(queries_file)


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
    """In the child process: build the factory index of the first ``--limit`` rows."""
    parts = sorted((args.work / "vectors").glob("part-*.parquet"))
    params = FactoryParams(args.factory, train=args.train, calibration=args.calibration,
                           seed=args.seed, rerank=args.rerank, target_recall=args.target,
                           niter=args.niter)
    stages: dict[str, float] = {}
    start = time.perf_counter()

    def progress(stage: str, rows: int) -> None:
        if stage not in stages:
            stages[stage] = time.perf_counter() - start
            print(f"  [{stage}] at {stages[stage]:.0f} s", flush=True)

    built = publish_factory(batches_of(parts, args.limit), params,
                            args.out / "index" / "scale", progress)
    peak = vm_hwm_mib()
    print(json.dumps({"stages": stages, "peak_rss_mib": peak,
                      "settings": built.settings.__dict__}), flush=True)


def vm_hwm_mib() -> float:
    """This process's peak RSS (``VmHWM``, MiB): unlike ``ru_maxrss``, not inherited from the
    parent it was forked from (the parent holds the generated or compared vectors)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


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


def measure_index(args: argparse.Namespace, out: Path, queries: np.ndarray, truth: np.ndarray
                  ) -> dict:
    """recall@10 and queries/s of a built factory index, searched as ``VectorIndex`` does."""
    index = load_index_at(out)
    found, qps, single = timed(factory_search(index), queries, args.single, args.repeats)
    return {"recall": recall(found, truth), "qps_batch": qps[0], "qps_single": single}


def load_index_at(out: Path) -> VectorIndex:
    class Root:  # load_index takes a corpus; only its root is used
        root = out
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
    start = time.perf_counter()
    flat.add(base)
    flat_build = time.perf_counter() - start
    truth, qps, single = timed(lambda q: flat.search(q, K), queries, args.single_flat,
                               args.repeats)
    rows.append({"method": "flat", "vectors": n, "recall": 1.0, "qps_batch": qps[0],
                 "qps_single": single, "build_s": flat_build,
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
        start = time.perf_counter()
        for s in range(0, n, 100_000):
            hnsw.add(base[s:s + 100_000])
        hnsw_build = time.perf_counter() - start
        found, qps, single = timed(lambda q: hnsw.search(q, K), queries, args.single,
                                   args.repeats)
        rows.append({"method": "hnsw M=32 ef=128", "vectors": n, "recall": recall(found, truth),
                     "qps_batch": qps[0], "qps_single": single, "build_s": hnsw_build,
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
    parser.add_argument("--single", type=int, default=200)
    parser.add_argument("--single-flat", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-hnsw", action="store_true")
    parser.add_argument("--skip-compare", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/index-scale"))
    parser.add_argument("--json", type=Path)
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
    parts, queries = write_vectors(args)
    result: dict = {"args": {k: str(v) for k, v in vars(args).items()}}
    print(f"building {args.factory} over {args.vectors:,} vectors", flush=True)
    result["full"] = build(args, args.vectors, args.work / "full")
    start = time.perf_counter()
    truth = exact_truth(parts, queries, args.vectors)
    result["full"]["exact_truth_s"] = time.perf_counter() - start
    result["full"].update(measure_index(args, args.work / "full", queries, truth))
    print(f"full: {json.dumps(result['full'])}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if not args.skip_compare:
        result["compare"] = compare(args, parts, queries)
    result["load_average_end"] = os.getloadavg()[0]
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
