"""Vector search: exact (flat) against HNSW and IVF on 1M clustered 384-d vectors.

Generates seeded, clustered unit vectors resembling sentence embeddings: ``--groups`` topic
directions on the unit sphere, ``--clusters`` cluster centres around them (sizes lognormal),
each point = centre + anisotropic Gaussian noise (a decaying spectrum, so the noise has a low
effective dimension, as real embeddings do), L2-normalised, float32; the queries are
``--queries`` held-out points of the same distribution. Then, k = 10, inner product:

* ``flat`` and ``hnsw`` are built with :func:`openmsd.index.vector_index.new_index`, the code
  path ``openmsd index build`` uses (``IndexFlatIP``; ``IndexHNSWFlat`` M=32, efConstruction=200,
  efSearch=128), and HNSW's efSearch is swept;
* ``ivf`` (``IVF<lists>,Flat``, trained on a sample) is an alternative, with an nprobe sweep;
* a filtered search with half the points allowed (an ``IDSelectorBatch``, as
  ``VectorIndex.search`` builds for language and year filters), for flat and HNSW.

For each: build time, index size (``faiss.serialize_index``) and process RSS growth, queries/s
batched (all queries in one ``search`` call, on every core) and one query at a time (one call
per query on one thread, as each worker of a request-per-query service would; FAISS parallelises
over queries, so one query uses one core anyway, and this spares waking an OpenMP team per call),
and recall@10 against the exact results (the filtered exact search for filtered rows). It
prints a table with ratios to exact and plots recall@10 against queries/s. ``--cache`` keeps the
built HNSW and IVF indexes (3.3 GiB at 1M) so that searches can be timed again on a quiet machine.

    python benchmarks/search_index.py --cache /tmp/search-index-cache \
        --plot docs/img/search_index.png --json /tmp/search-index.json
    python benchmarks/search_index.py --n 100000 --queries 500   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import faiss
import numpy as np

from openmsd.index import new_index

K = 10


@dataclass
class Row:
    """One measured configuration."""

    method: str
    setting: str
    recall: float
    qps: tuple[float, float]  # batched: per second, per CPU-second
    qps_single: float
    build_s: float | None = None
    size_mib: float | None = None
    rss_mib: float | None = None
    load: float = 0.0  # the 1-minute load average after the timing (other jobs share the cores)

    def __post_init__(self) -> None:
        self.load = os.getloadavg()[0]

    @property
    def qps_batch(self) -> float:
        return self.qps[0]

    @property
    def qps_cpu(self) -> float:
        return self.qps[1]


def generate(n: int, dim: int, clusters: int, groups: int, noise: float, seed: int
             ) -> np.ndarray:
    """``n`` clustered unit vectors (float32), built in chunks to bound memory."""
    out = np.empty((n, dim), np.float32)
    start = 0
    for chunk in generate_chunks(n, dim, clusters, groups, noise, seed):
        out[start:start + len(chunk)] = chunk
        start += len(chunk)
    return out


@dataclass
class Clusters:
    """The generating model: cluster centres around topic directions, their lognormal weights
    and the anisotropic noise (a decaying spectrum, rotated)."""

    centres: np.ndarray
    weights: np.ndarray
    spectrum: np.ndarray
    rotation: np.ndarray

    @classmethod
    def make(cls, rng: np.random.Generator, dim: int, clusters: int, groups: int, noise: float,
             n: int = 0) -> tuple[Clusters, np.ndarray]:
        """The model drawn from ``rng``, and ``n`` labels drawn in the middle of it (the
        order :func:`generate` has always drawn them in, so its vectors stay the same)."""
        topics = unit(rng.standard_normal((groups, dim), dtype=np.float32))
        centres = unit(topics[rng.integers(groups, size=clusters)]
                       + unit(rng.standard_normal((clusters, dim), dtype=np.float32)))
        weights = rng.lognormal(0.0, 1.0, clusters)
        labels = rng.choice(clusters, size=n, p=weights / weights.sum())
        spectrum = np.arange(1, dim + 1, dtype=np.float32) ** -0.5  # effective dimension ~26
        spectrum *= noise / np.sqrt((spectrum**2).sum())  # expected noise norm = ``noise``
        rotation = np.linalg.qr(rng.standard_normal((dim, dim)))[0].astype(np.float32)
        return cls(centres, weights / weights.sum(), spectrum, rotation), labels

    def labels(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` cluster numbers drawn by weight."""
        return rng.choice(len(self.centres), size=n, p=self.weights)

    def points(self, rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
        """One unit vector (float32) around each labelled centre."""
        z = rng.standard_normal((len(labels), len(self.spectrum)), dtype=np.float32)
        return unit(self.centres[labels] + (z * self.spectrum) @ self.rotation)


def unit(a: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length."""
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def generate_chunks(n: int, dim: int, clusters: int, groups: int, noise: float, seed: int,
                    chunk: int = 100_000) -> Iterator[np.ndarray]:
    """:func:`generate`'s vectors, ``chunk`` rows at a time (never all in memory)."""
    rng = np.random.default_rng(seed)
    model, labels = Clusters.make(rng, dim, clusters, groups, noise, n)
    for start in range(0, n, chunk):
        yield model.points(rng, labels[start:start + chunk])


def rss_mib() -> float:
    """This process's resident set size now, in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def size_mib(index: faiss.Index) -> float:
    """The serialised size of ``index`` in MiB."""
    return len(faiss.serialize_index(index)) / 2**20


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean recall@k of ``found`` rows against ``truth`` rows (k = their width)."""
    hits = sum(len(np.intersect1d(f, t)) for f, t in zip(found, truth, strict=True))
    return hits / truth.size


Search = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def timed(search: Search, queries: np.ndarray, single: int, repeats: int
          ) -> tuple[np.ndarray, tuple[float, float], float]:
    """Rows found for all ``queries`` (one batch, all threads); batched queries per second and
    per CPU-second; and the queries/s of the first ``single`` queries one per call on one
    thread. After a warm-up, each the best of ``repeats`` runs (the cores are shared: the best
    run is the least disturbed; CPU time is what other jobs disturb least)."""
    search(queries[:8])
    single = min(single, len(queries))
    batch = cpu = one = 0.0
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        _, rows = search(queries)
        batch = max(batch, len(queries) / (time.perf_counter() - start))
        cpu = max(cpu, len(queries) / (time.process_time() - start_cpu))
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # a request's own thread; no OpenMP team to wake per call
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for i in range(single):
                search(queries[i:i + 1])
            one = max(one, single / (time.perf_counter() - start))
    finally:
        faiss.omp_set_num_threads(threads)
    return rows, (batch, cpu), one


def build(index: faiss.Index, base: np.ndarray, train: np.ndarray | None = None,
          chunk: int = 100_000) -> tuple[float, float]:
    """Train (if asked) and fill ``index``; its seconds and RSS growth (MiB)."""
    before = rss_mib()
    start = time.perf_counter()
    if train is not None:
        index.train(train)
    for offset in range(0, len(base), chunk):
        index.add(base[offset:offset + chunk])
        print(f"  {offset + chunk:>9,} added, {time.perf_counter() - start:7.1f} s "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
    return time.perf_counter() - start, rss_mib() - before


def cached_build(name: str, make: Callable[[], faiss.Index], base: np.ndarray,
                 cache: Path | None, train: np.ndarray | None = None
                 ) -> tuple[faiss.Index, float, float]:
    """``make()`` built on ``base`` (see :func:`build`), or read from ``cache/name.faiss`` with
    the seconds and RSS growth measured when it was built there."""
    if cache is not None and (cache / f"{name}.faiss").exists():
        built = json.loads((cache / f"{name}.json").read_text())
        print(f"  {name}: read from {cache} (built in {built['seconds']:.0f} s, "
              f"load {built['load_before']:.1f} → {built['load_after']:.1f})")
        return faiss.read_index(str(cache / f"{name}.faiss")), built["seconds"], built["rss"]
    index = make()
    load = os.getloadavg()[0]
    seconds, grown = build(index, base, train)
    print(f"  {name}: built in {seconds:.1f} s, load {load:.1f} → {os.getloadavg()[0]:.1f}")
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        faiss.write_index(index, str(cache / f"{name}.faiss"))
        (cache / f"{name}.json").write_text(json.dumps(
            {"seconds": seconds, "rss": grown, "load_before": load,
             "load_after": os.getloadavg()[0]}))
    return index, seconds, grown


def measure_flat(args: argparse.Namespace, base: np.ndarray, queries: np.ndarray,
                 fq: np.ndarray, allowed: np.ndarray, selector: faiss.IDSelector
                 ) -> tuple[list[Row], np.ndarray, np.ndarray]:
    """Exact search, unfiltered and filtered; its rows and the true neighbours of each.

    Filtered twice: with the selector (``VectorIndex.search``), and, as an alternative, by
    gathering the allowed rows into a temporary flat index per call (BLAS again)."""
    flat = new_index(args.dim, "flat")
    seconds, grown = build(flat, base)
    truth, batch, one = timed(lambda q: flat.search(q, K), queries, args.single_flat,
                              args.repeats)
    rows = [Row("flat", "exact", 1.0, batch, one, seconds, size_mib(flat), grown)]
    params = faiss.SearchParameters(sel=selector)
    ftruth, batch, one = timed(lambda q: flat.search(q, K, params=params), fq,
                               args.single_flat, args.repeats)
    rows.append(Row("flat filtered", "exact, ½ allowed", 1.0, batch, one))
    kept = np.flatnonzero(allowed)
    vectors = faiss.rev_swig_ptr(flat.get_xb(), flat.ntotal * flat.d).reshape(flat.ntotal, -1)

    def subset(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sub = faiss.IndexFlatIP(flat.d)
        sub.add(vectors[kept])
        scores, found = sub.search(q, K)
        return scores, kept[found]

    found, batch, one = timed(subset, fq, max(1, args.single_flat // 4), args.repeats)
    rows.append(Row("flat filtered", "allowed rows gathered, BLAS", recall(found, ftruth),
                    batch, one))
    _report(rows)
    return rows, truth, ftruth


def measure_hnsw(args: argparse.Namespace, base: np.ndarray, queries: np.ndarray,
                 fq: np.ndarray, selector: faiss.IDSelector, truth: np.ndarray,
                 ftruth: np.ndarray) -> list[Row]:
    """openmsd's HNSW index, efSearch swept, unfiltered and filtered."""
    hnsw, seconds, grown = cached_build(f"hnsw-{_key(args)}",
                                        lambda: new_index(args.dim, "hnsw"), base, args.cache)
    size = size_mib(hnsw)
    rows = []
    for ef in args.ef:
        p = faiss.SearchParametersHNSW(efSearch=ef)
        found, batch, one = timed(lambda q, p=p: hnsw.search(q, K, params=p), queries,
                                  args.single, args.repeats)
        rows.append(Row("hnsw", f"efSearch={ef}", recall(found, truth), batch, one,
                        seconds, size, grown))
        _report(rows[-1:])
    for ef in args.ef:
        p = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
        found, batch, one = timed(lambda q, p=p: hnsw.search(q, K, params=p), fq, args.single,
                                  args.repeats)
        rows.append(Row("hnsw filtered", f"efSearch={ef}, ½ allowed", recall(found, ftruth),
                        batch, one))
        _report(rows[-1:])
    return rows


def measure_ivf(args: argparse.Namespace, lists: int, base: np.ndarray, queries: np.ndarray,
                truth: np.ndarray) -> list[Row]:
    """An IVF index of ``lists`` lists (k-means, ``--ivf-niter`` iterations, on a sample of
    ``--ivf-train`` points per list), nprobe swept."""
    def make() -> faiss.Index:
        ivf = faiss.index_factory(args.dim, f"IVF{lists},Flat", faiss.METRIC_INNER_PRODUCT)
        ivf.cp.niter = args.ivf_niter
        return ivf

    train = min(len(base), args.ivf_train * lists)
    sample = base[np.random.default_rng(args.seed + 2).choice(len(base), train, replace=False)]
    name = f"ivf{lists}-{train}-{args.ivf_niter}-{_key(args)}"
    ivf, seconds, grown = cached_build(name, make, base, args.cache, train=sample)
    size = size_mib(ivf)
    rows = []
    for nprobe in args.nprobe:
        p = faiss.SearchParametersIVF(nprobe=nprobe)
        found, batch, one = timed(lambda q, p=p: ivf.search(q, K, params=p), queries,
                                  args.single, args.repeats)
        rows.append(Row(f"ivf{lists}", f"nprobe={nprobe}", recall(found, truth),
                        batch, one, seconds, size, grown))
        _report(rows[-1:])
    return rows


def _key(args: argparse.Namespace) -> str:
    """The data set's parameters, naming cached indexes."""
    return f"{args.n}-{args.dim}-{args.clusters}-{args.groups}-{args.noise}-{args.seed}"


def run(args: argparse.Namespace) -> list[Row]:
    """Every measurement, in order: flat, filtered flat, HNSW sweeps, IVF sweep."""
    start = time.perf_counter()
    data = generate(args.n + args.queries, args.dim, args.clusters, args.groups, args.noise,
                    args.seed)
    base, queries = data[:args.n], data[args.n:]
    fq = queries[:args.filtered_queries]
    print(f"generated {args.n:,} + {args.queries:,} vectors in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    allowed = np.random.default_rng(args.seed + 1).random(args.n) < 0.5
    start = time.perf_counter()
    selector = faiss.IDSelectorBatch(np.flatnonzero(allowed).astype(np.int64))
    print(f"IDSelectorBatch of {allowed.sum():,} ids: {time.perf_counter() - start:.2f} s")
    rows, truth, ftruth = measure_flat(args, base, queries, fq, allowed, selector)
    assert allowed[ftruth].all()
    rows += measure_hnsw(args, base, queries, fq, selector, truth, ftruth)
    for lists in args.ivf_lists:
        rows += measure_ivf(args, lists, base, queries, truth)
    return rows


def verdict(rows: list[Row], target: float = 10.0, floor: float = 0.95) -> list[str]:
    """Per index and timing, the fastest setting with recall@10 ≥ ``floor`` and ≥ ``target``×
    the queries/s of exact search (the filtered exact search with the selector for filtered)."""
    exact = {False: rows[0], True: rows[1]}
    lines = []
    for method in dict.fromkeys(r.method for r in rows if not r.method.startswith("flat")):
        for field in ("qps_batch", "qps_cpu", "qps_single"):
            ref = getattr(exact["filtered" in method], field)
            ok = [r for r in rows if r.method == method and r.recall >= floor
                  and getattr(r, field) >= target * ref]
            best = max(ok, key=lambda r: getattr(r, field), default=None)
            lines.append(f"{method}, {field.removeprefix('qps_')}: " + (
                f"{best.setting} ({getattr(best, field) / ref:.1f}× exact, recall "
                f"{best.recall:.4f}); meeting it: {', '.join(r.setting for r in ok)}"
                if best else "no setting meets the target"))
    return lines


def _report(rows: list[Row]) -> None:
    for row in rows:
        print(f"  {row.method} {row.setting}: recall {row.recall:.4f}, "
              f"{row.qps_batch:,.0f} q/s batched ({row.qps_cpu:,.0f} per CPU-s), "
              f"{row.qps_single:,.0f} q/s single "
              f"(load {row.load:.1f})", flush=True)


def _fmt(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def table(rows: list[Row]) -> str:
    """A Markdown table of ``rows`` with queries/s ratios to the (same-filter) exact search."""
    lines = ["| index | setting | recall@10 | q/s batched | × exact | q/CPU-s batched | × exact "
             "| q/s single | × exact | build s | size MiB | RSS +MiB |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    exact = {False: rows[0], True: rows[1]}
    for row in rows:
        ref = exact["filtered" in row.method]
        lines.append(
            f"| {row.method} | {row.setting} | {row.recall:.4f} | {row.qps_batch:,.0f} | "
            f"{row.qps_batch / ref.qps_batch:.1f} | {row.qps_cpu:,.0f} | "
            f"{row.qps_cpu / ref.qps_cpu:.1f} | {row.qps_single:,.0f} | "
            f"{row.qps_single / ref.qps_single:.1f} | {_fmt(row.build_s, '.0f')} | "
            f"{_fmt(row.size_mib, ',.0f')} | {_fmt(row.rss_mib, ',.0f')} |")
    return "\n".join(lines)


def plot(rows: list[Row], path: Path, title: str) -> None:
    """Recall@10 against queries/s (batched and one at a time) for each sweep."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(1, 3, figsize=(18, 5.4), sharey=True)
    styles = {"flat": ("k", "*"), "hnsw": ("tab:blue", "o"), "hnsw filtered": ("tab:cyan", "s"),
              "flat filtered": ("tab:gray", "P"), "flat gathered": ("tab:gray", "X")}
    ivf_colours = iter(["tab:orange", "tab:red", "tab:brown", "tab:pink"])
    series: dict[str, list[Row]] = {}
    for r in rows:
        name = "flat gathered" if "gathered" in r.setting else r.method
        series.setdefault(name, []).append(r)
    for ax, field, label in ((axes[0], "qps_batch", "batched, per second (2 threads)"),
                             (axes[1], "qps_cpu", "batched, per CPU-second"),
                             (axes[2], "qps_single", "one query per call, 1 thread")):
        for method, group in series.items():
            if method not in styles:
                styles[method] = (next(ivf_colours), "^")
            color, marker = styles[method]
            x = [getattr(r, field) for r in group]
            y = [r.recall for r in group]
            ax.plot(x, y, marker=marker, color=color, markersize=9 if marker in "*PX" else 6,
                    label={"flat filtered": "flat filtered (selector)",
                           "flat gathered": "flat filtered (rows gathered, BLAS)"}.get(method,
                                                                                     method))
            for r, xi, yi in zip(group, x, y, strict=True):
                if "=" in r.setting:
                    ax.annotate(r.setting.split("=")[1].split(",")[0], (xi, yi),
                                textcoords="offset points", xytext=(4, -11), fontsize=7,
                                color=color)
        ax.axvline(10 * getattr(rows[0], field), color="k", ls=":", lw=1,
                   label="10× exact q/s (unfiltered)")
        ax.fill_between([10 * getattr(rows[0], field), 1e7], 0.95, 1.005, color="tab:green",
                        alpha=0.07, lw=0)
        ax.axhline(0.95, color="r", ls=":", lw=1, label="recall 0.95")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlim(right=2 * max(getattr(r, field) for r in rows))
        ax.set_xlabel(f"queries, {label} (log)")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("recall@10 (against exact)")
    axes[0].legend(loc="lower left", fontsize=8)
    fig.suptitle(title + "  (labels: efSearch / nprobe)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="indexed vectors")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=2000, help="held-out query vectors")
    parser.add_argument("--filtered-queries", type=int, default=500)
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--groups", type=int, default=50, help="topics the clusters gather in")
    parser.add_argument("--noise", type=float, default=0.8, help="noise norm / centre norm")
    parser.add_argument("--ef", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--ivf-lists", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--ivf-train", type=int, default=50, help="k-means sample per list")
    parser.add_argument("--ivf-niter", type=int, default=10, help="k-means iterations")
    parser.add_argument("--nprobe", type=int, nargs="+", default=[4, 8, 16, 32, 64])
    parser.add_argument("--repeats", type=int, default=3, help="timings kept: the best")
    parser.add_argument("--single", type=int, default=1000,
                        help="queries timed one at a time (approximate indexes)")
    parser.add_argument("--single-flat", type=int, default=20,
                        help="queries timed one at a time (exact)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", type=Path, help="write the recall/throughput plot here")
    parser.add_argument("--cache", type=Path,
                        help="keep built HNSW and IVF indexes here and reuse them (with the "
                             "build time measured then), to time searches again quickly")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    args = parser.parse_args()
    print(f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} OpenMP threads, "
          f"load average {os.getloadavg()[0]:.2f}")
    rows = run(args)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    print(table(rows))
    print("\n".join(verdict(rows)))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    if args.plot:
        plot(rows, args.plot, f"{args.n:,} × {args.dim}-d clustered vectors, k={K}")


if __name__ == "__main__":
    main()
